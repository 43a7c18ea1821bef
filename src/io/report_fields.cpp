#include "inflect/io/report_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "inflect/core/error.hpp"

namespace inflect::io {

namespace {

using analysis::RunReport;

// A member's value as the outputs write it. Overloads by the member's type: the only place a
// report figure's type meets the outputs' plain numbers.
FieldValue to_value(double v) { return v; }
FieldValue to_value(int v) { return std::int64_t{v}; }
FieldValue to_value(std::uint64_t v) { return static_cast<std::int64_t>(v); }
FieldValue to_value(bool v) { return v; }
FieldValue to_value(const std::string& v) { return v; }
// A unit type becomes its number in its SI unit: the one place report figures lose their type.
template <class Tag>
FieldValue to_value(core::Quantity<Tag> q) {
  return q.value();
}
// Unknown (a trace without it): null.
template <class T>
FieldValue to_value(const std::optional<T>& v) {
  return v ? to_value(*v) : FieldValue(std::monostate{});
}
// An object keyed by part name (scripts read memory.parts.weights), in the report's order (largest
// first); a name listed twice is summed rather than silently overwritten.
FieldValue to_value(const std::vector<analysis::MemoryPart>& parts) {
  NamedNumbers summed;
  for (const auto& p : parts) {
    auto it = std::find_if(summed.begin(), summed.end(), [&](const auto& s) { return s.first == p.name; });
    if (it == summed.end())
      summed.emplace_back(p.name, p.bytes.value());
    else
      it->second += p.bytes.value();
  }
  return summed;
}
FieldValue to_value(const std::vector<std::string>& texts) { return texts; }
FieldValue to_value(const std::vector<analysis::StepRecord>& steps) {
  std::vector<NamedNumbers> out;
  for (const auto& s : steps) {
    NamedNumbers one;
    for (const auto& f : step_fields()) one.emplace_back(std::string(f.key), f.get(s));
    out.push_back(std::move(one));
  }
  return out;
}

// Setting a member back from report.json. Null reaches a number only where the field's rule says
// it is known, i.e. it was not finite: NaN keeps it null when written again.
double number_of(const FieldValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::numeric_limits<double>::quiet_NaN();
}
void from_value(const FieldValue& v, double& out) { out = number_of(v); }
template <class Tag>
void from_value(const FieldValue& v, core::Quantity<Tag>& out) {
  out = core::Quantity<Tag>(number_of(v));
}
template <class T>
void from_value(const FieldValue& v, std::optional<T>& out) {
  if (std::holds_alternative<std::monostate>(v)) {
    out.reset();
    return;
  }
  T x{};
  from_value(v, x);
  out = x;
}
void from_value(const FieldValue& v, int& out) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) out = static_cast<int>(*i);
}
void from_value(const FieldValue& v, std::uint64_t& out) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) out = static_cast<std::uint64_t>(*i);
}
void from_value(const FieldValue& v, bool& out) {
  if (const auto* b = std::get_if<bool>(&v)) out = *b;
}
void from_value(const FieldValue& v, std::string& out) {
  if (const auto* s = std::get_if<std::string>(&v)) out = *s;
}
void from_value(const FieldValue& v, std::vector<analysis::MemoryPart>& out) {
  out.clear();
  if (const auto* parts = std::get_if<NamedNumbers>(&v))
    for (const auto& [name, bytes] : *parts) out.push_back({name, core::Bytes(bytes)});
}
// An empty JSON array reads back as no records: no texts either.
void from_value(const FieldValue& v, std::vector<std::string>& out) {
  const auto* texts = std::get_if<std::vector<std::string>>(&v);
  out = texts ? *texts : std::vector<std::string>{};
}
void from_value(const FieldValue& v, std::vector<analysis::StepRecord>& out) {
  out.clear();
  const auto* records = std::get_if<std::vector<NamedNumbers>>(&v);
  if (!records) return;
  for (const auto& record : *records) {
    analysis::StepRecord s;
    for (const auto& [key, value] : record)
      for (const auto& f : step_fields())
        if (f.key == key) f.set(s, value);
    out.push_back(s);
  }
}

// A field stored in a RunReport member: `at` is a generic lambda returning a reference to it, so
// one expression serves reading (const) and setting.
template <class Access>
ReportField member(std::string_view key, std::string_view unit, Known known, std::string_view doc, Access at,
                   std::vector<FieldAlias> aliases = {}) {
  ReportField f;
  f.key = key;
  f.unit = unit;
  f.doc = doc;
  f.known = known;
  f.aliases = std::move(aliases);
  f.get = [at](const RunReport& r) { return to_value(at(r)); };
  f.set = [at](RunReport& r, const FieldValue& v) { from_value(v, at(r)); };
  return f;
}

template <class Access>
ReportField identity(std::string_view key, std::string_view unit, std::string_view doc, Access at) {
  ReportField f = member(key, unit, Known::always, doc, at);
  f.identity = true;
  return f;
}

// A figure computed from others: written, never set back.
ReportField derived(std::string_view key, std::string_view unit, Known known, std::string_view doc,
                    std::function<FieldValue(const RunReport&)> get, std::vector<FieldAlias> aliases = {}) {
  ReportField f;
  f.key = key;
  f.unit = unit;
  f.doc = doc;
  f.known = known;
  f.aliases = std::move(aliases);
  f.get = std::move(get);
  return f;
}

constexpr std::string_view kRow = "results.jsonl";
constexpr std::string_view kCsv = "results.csv";
constexpr std::string_view kRowAndCsv = "results.jsonl, results.csv";
constexpr std::string_view kCsvAndEstimate = "results.csv, search.json estimate";
constexpr std::string_view kEstimate = "search.json estimate";

std::vector<ReportField> build_fields() {
  using K = Known;
  std::vector<ReportField> f;
  f.push_back(identity("name", "", "experiment name", [](auto& r) -> auto& { return r.name; }));
  f.push_back(identity("model", "", "model name (preset or inline), or the trace's name", [](auto& r) -> auto& { return r.model; }));
  f.push_back(identity("device", "", "device catalog name", [](auto& r) -> auto& { return r.device; }));
  f.push_back(identity("topology", "", "topology name", [](auto& r) -> auto& { return r.topology; }));
  f.push_back(identity("nodes", "nodes", "nodes in the cluster", [](auto& r) -> auto& { return r.nodes; }));
  f.push_back(identity("devices", "devices", "nodes * devices per node", [](auto& r) -> auto& { return r.devices; }));
  f.push_back(identity("plan", "",
                       "the plan in one line, e.g. `tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1 m=192` "
                       "(plan::plan_label; search.json labels its plans the same way)",
                       [](auto& r) -> auto& { return r.plan; }));
  f.push_back(member("precision", "", K::always,
                     "training.precision (an FP8 recipe runs only the linear GEMMs in FP8: docs/precision.md); `trace` "
                     "for a replayed execution graph, whose kernels carry their own",
                     [](auto& r) -> auto& { return r.precision; }));
  f.push_back(member("framework", "", K::always, "training.framework whose defaults apply (docs/frameworks.md), or `none`",
                     [](auto& r) -> auto& { return r.framework; }));
  f.push_back(member("attention", "", K::always,
                     "the attention kernel in effect: the device's implementation (docs/devices.md) or `unfused`; "
                     "`trace` for a replayed execution graph",
                     [](auto& r) -> auto& { return r.attention; }));
  f.push_back(member("simulated", "bool", K::always,
                     "false when the plan's memory does not fit and it was not simulated (then every timing figure "
                     "below is null)",
                     [](auto& r) -> auto& { return r.simulated; }));
  f.push_back(member("not_simulated", "", K::key_if_not_simulated,
                     "only when `simulated` is false: why (peak vs capacity, the largest consumers)",
                     [](auto& r) -> auto& { return r.not_simulated; }));
  f.push_back(member("warnings", "", K::always,
                     "values no hardware has, one sentence each (a NIC outside 1 Gb/s..3.2 Tb/s, a latency over 1 ms, "
                     "a device over 2 kW; most often a unit slip); also printed on stderr. `[]` when none",
                     [](auto& r) -> auto& { return r.warnings; }));
  f.push_back(member("step_time_s", "s", K::when_simulated,
                     "one training step (the critical rank's makespan); with `training.diloco` the mean step of a period "
                     "of `sync_every` steps (`diloco.time_per_step_s`), and every figure below made from the step "
                     "(rates, breakdown, power, `steps`) that period's likewise (docs/low-communication.md)",
                     [](auto& r) -> auto& { return r.step_time; }));
  f.push_back(member("tokens_per_step", "tokens", K::always, "global_batch * seq_len",
                     [](auto& r) -> auto& { return r.tokens_per_step; }));
  f.push_back(member("tokens_per_s", "tokens/s", K::when_simulated, "tokens_per_step / step_time_s",
                     [](auto& r) -> auto& { return r.tokens_per_s; }));
  f.push_back(member("model_flops_per_step", "FLOP", K::always,
                     "forward + backward, no recomputation (the MFU numerator), by PaLM's convention 6N + 12·L·h·s per "
                     "token, which counts the full (non-causal) attention score matrix",
                     [](auto& r) -> auto& { return r.model_flops_per_step; }));
  f.push_back(member("hardware_flops_per_step", "FLOP", K::when_simulated,
                     "the FLOPs the simulated kernels execute, including recomputed work. Causal flash attention does "
                     "half of the score-matrix work the model-FLOPs convention counts, so without recomputation this can "
                     "be slightly *below* `model_flops_per_step`",
                     [](auto& r) -> auto& { return r.hardware_flops_per_step; }));
  f.push_back(member("model_tflops_per_gpu", "TFLOP/s", K::when_simulated, "model FLOPs / step time / devices",
                     [](auto& r) -> auto& { return r.model_tflops_per_gpu; }));
  f.push_back(member("hardware_tflops_per_gpu", "TFLOP/s", K::when_simulated, "hardware FLOPs / step time / devices",
                     [](auto& r) -> auto& { return r.hardware_tflops_per_gpu; }));
  f.push_back(member("peak_tflops_per_gpu", "TFLOP/s", K::always, "the device's dense peak at the training precision",
                     [](auto& r) -> auto& { return r.peak_tflops_per_gpu; }));
  f.push_back(member("mfu", "fraction 0..1", K::when_simulated, "model_tflops_per_gpu / peak_tflops_per_gpu",
                     [](auto& r) -> auto& { return r.mfu; }));

  f.push_back(member("memory.known", "bool", K::always,
                     "false for a replayed trace without memory figures; then `peak_bytes`, `fits` and `over_by_bytes` "
                     "are null",
                     [](auto& r) -> auto& { return r.memory.known; }));
  f.push_back(member("memory.peak_bytes", "bytes", K::when_memory_known, "the largest rank's peak",
                     [](auto& r) -> auto& { return r.memory.peak; },
                     {{"peak_memory_bytes", kRow},
                      {"peak_memory_gib", kCsv, "GiB", 1073741824.0},
                      {"memory_peak_bytes", kEstimate}}));
  f.push_back(member("memory.capacity_bytes", "bytes", K::always,
                     "the memory a framework can use, the peak is compared with: `reported_capacity_bytes - "
                     "reserved_bytes` (docs/devices.md, \"Memory\")",
                     [](auto& r) -> auto& { return r.memory.capacity; }, {{"capacity_bytes", kRow}}));
  f.push_back(member("memory.reported_capacity_bytes", "bytes", K::always,
                     "the device's memory as the driver reports it (nvidia-smi's FB total, amd-smi's VRAM total: an "
                     "H100 SXM 80GB reports 81,559 MiB)",
                     [](auto& r) -> auto& { return r.memory.reported_capacity; }));
  f.push_back(member("memory.reserved_bytes", "bytes", K::always,
                     "what a framework cannot use of it: the driver's reserve, the CUDA/HIP context and the collective "
                     "library's buffers of each communicator the plan's rank uses (one per parallel dimension of more "
                     "than one rank; none for a replayed trace). Allocator fragmentation is not modelled",
                     [](auto& r) -> auto& { return r.memory.reserved; }));
  f.push_back(member("memory.fits", "bool", K::when_memory_known, "peak_bytes <= capacity_bytes",
                     [](auto& r) -> auto& { return r.memory.fits; }, {{"fits", kRowAndCsv}}));
  f.push_back(member("memory.over_by_bytes", "bytes", K::when_memory_known, "max(0, peak - capacity)",
                     [](auto& r) -> auto& { return r.memory.over_by; }));
  f.push_back(member("memory.peak_stage", "stage", K::always, "pipeline stage of the largest rank",
                     [](auto& r) -> auto& { return r.memory.peak_stage; }));
  f.push_back(member("memory.parts", "bytes", K::always,
                     "object: part name (weights, gradients, optimizer, activations, buffers) -> bytes of the largest "
                     "rank, largest first; a part listed twice is summed",
                     [](auto& r) -> auto& { return r.memory.parts; }));

  f.push_back(member("breakdown.compute_s", "s", K::when_simulated,
                     "busy time of the compute stream (kernels, including recompute)",
                     [](auto& r) -> auto& { return r.breakdown.compute; }, {{"compute_s", kCsvAndEstimate}}));
  f.push_back(member("breakdown.compute_interference_s", "s", K::when_simulated,
                     "the part of `compute_s` that is slowdown from communication overlapping it (device "
                     "`comm_interference`)",
                     [](auto& r) -> auto& { return r.breakdown.interference; },
                     {{"compute_interference_s", kCsv}}));
  f.push_back(member("breakdown.compute_throttle_s", "s", K::when_simulated,
                     "the part of `compute_s` that kernels ran below their board-power clock (a lower `power_cap_w`, or "
                     "a hot device); docs/power.md",
                     [](auto& r) -> auto& { return r.breakdown.throttle; }, {{"compute_throttle_s", kCsv}}));
  f.push_back(derived("breakdown.exposed_comm_s.total", "s", K::when_simulated,
                      "compute stream idle waiting on communication: the sum of the dimensions below",
                      [](const RunReport& r) -> FieldValue { return r.breakdown.exposed_comm.total().value(); }));
  f.push_back(member("breakdown.exposed_comm_s.dp", "s", K::when_simulated,
                     "of it, waiting on data-parallel communication (gradient reduction, ZeRO gathers)",
                     [](auto& r) -> auto& { return r.breakdown.exposed_comm.dp; },
                     {{"breakdown.exposed_dp_s", kRow}, {"exposed_dp_s", kCsv}, {"exposed_comm_s.dp", kEstimate}}));
  f.push_back(member("breakdown.exposed_comm_s.tp", "s", K::when_simulated, "of it, waiting on tensor-parallel communication",
                     [](auto& r) -> auto& { return r.breakdown.exposed_comm.tp; },
                     {{"breakdown.exposed_tp_s", kRow}, {"exposed_tp_s", kCsv}, {"exposed_comm_s.tp", kEstimate}}));
  f.push_back(member("breakdown.exposed_comm_s.pp", "s", K::when_simulated,
                     "of it, waiting on pipeline sends and receives (beyond the bubble)",
                     [](auto& r) -> auto& { return r.breakdown.exposed_comm.pp; },
                     {{"breakdown.exposed_pp_s", kRow}, {"exposed_pp_s", kCsv}, {"exposed_comm_s.pp", kEstimate}}));
  f.push_back(member("breakdown.exposed_comm_s.cp", "s", K::when_simulated,
                     "of it, waiting on context-parallel communication",
                     [](auto& r) -> auto& { return r.breakdown.exposed_comm.cp; },
                     {{"breakdown.exposed_cp_s", kRow}, {"exposed_cp_s", kCsv}, {"exposed_comm_s.cp", kEstimate}}));
  f.push_back(member("breakdown.exposed_comm_s.ep", "s", K::when_simulated,
                     "of it, waiting on expert-parallel all-to-alls",
                     [](auto& r) -> auto& { return r.breakdown.exposed_comm.ep; },
                     {{"breakdown.exposed_ep_s", kRow}, {"exposed_ep_s", kCsv}, {"exposed_comm_s.ep", kEstimate}}));
  f.push_back(member("breakdown.bubble_s", "s", K::when_simulated, "compute stream idle waiting for other pipeline stages",
                     [](auto& r) -> auto& { return r.breakdown.bubble; }, {{"bubble_s", kCsvAndEstimate}}));
  f.push_back(member("breakdown.other_s", "s", K::when_simulated, "any remaining idle time",
                     [](auto& r) -> auto& { return r.breakdown.other; }, {{"other_s", kCsv}}));
  f.push_back(member("breakdown.stragglers_s", "s", K::key_if_not_empty,
                     "only with `cluster.variability`: waiting for stragglers, what device variability cost the rank "
                     "(docs/variability.md): its kernels' time beyond their calibrated time (taken out of `compute_s`; "
                     "in symmetric fidelity at the pace of the slowest rank its groups tie it to) plus its waits at "
                     "non-pipeline collectives for members that arrived later (taken out of `other_s`); negative when "
                     "its device is faster than calibrated and it never waited",
                     [](auto& r) -> auto& { return r.breakdown.stragglers; }));
  f.push_back(member("breakdown.exposed_across_sites_s", "s", K::key_if_not_empty,
                     "only on a cluster with sites (docs/geo.md): of the exposed communication above (not an extra "
                     "part), the time spent waiting on collectives whose group spans several sites, i.e. whose "
                     "traffic crosses the WAN",
                     [](auto& r) -> auto& { return r.breakdown.exposed_across_sites; }));
  f.push_back(member("breakdown.critical_rank", "", K::always, "which rank the breakdown is of",
                     [](auto& r) -> auto& { return r.breakdown.critical_rank_note; }));

  f.push_back(member("power.cap_w", "W", K::when_power_modeled, "the power limit each device held",
                     [](auto& r) -> auto& { return r.power.cap; }));
  f.push_back(member("power.avg_device_w", "W", K::when_power_modeled, "mean device power over devices and the step",
                     [](auto& r) -> auto& { return r.power.avg_device; }, {{"avg_device_w", kRowAndCsv}}));
  f.push_back(member("power.peak_device_w", "W", K::when_power_modeled,
                     "the highest instantaneous draw of any device (at kernel granularity)",
                     [](auto& r) -> auto& { return r.power.peak_device; }, {{"peak_device_w", kRowAndCsv}}));
  f.push_back(member("power.peak_avg_device_w", "W", K::when_power_modeled,
                     "the highest 100 ms average of any device: what averaged telemetry (nvidia-smi's power draw) would "
                     "read (the run's average when it is shorter than 100 ms)",
                     [](auto& r) -> auto& { return r.power.peak_avg_device; }, {{"peak_avg_device_w", kRowAndCsv}}));
  f.push_back(member("power.avg_node_w", "W", K::when_power_modeled,
                     "devices of a node + the topology's `node_other` + `fabric_per_node`",
                     [](auto& r) -> auto& { return r.power.avg_node; }));
  f.push_back(member("power.cluster_avg_w", "W", K::when_power_modeled, "all nodes (IT power)",
                     [](auto& r) -> auto& { return r.power.cluster_avg; }));
  f.push_back(member("power.facility_avg_w", "W", K::when_power_modeled, "cluster_avg_w x the topology's PUE",
                     [](auto& r) -> auto& { return r.power.facility_avg; }));
  f.push_back(member("power.energy_per_step_j", "J", K::when_power_modeled, "cluster_avg_w x step_time_s (IT energy)",
                     [](auto& r) -> auto& { return r.power.energy_per_step; }));
  f.push_back(member("power.facility_energy_per_step_j", "J", K::when_power_modeled, "the same with PUE",
                     [](auto& r) -> auto& { return r.power.facility_energy_per_step; }));
  f.push_back(member("power.energy_per_token_j", "J", K::when_power_modeled, "energy_per_step_j / tokens_per_step",
                     [](auto& r) -> auto& { return r.power.energy_per_token; }, {{"energy_per_token_j", kRowAndCsv}}));
  f.push_back(member("power.avg_clock_mhz", "MHz", K::when_power_modeled,
                     "compute-stream kernels' clock, weighted by their time",
                     [](auto& r) -> auto& { return r.power.avg_clock_mhz; }));
  f.push_back(member("power.max_clock_mhz", "MHz", K::when_power_modeled, "the device's maximum clock",
                     [](auto& r) -> auto& { return r.power.max_clock_mhz; }));

  f.push_back(member("thermal.cooling", "", K::when_thermal_modeled, "`air` or `liquid` (the topology's)",
                     [](auto& r) -> auto& { return r.thermal.cooling; }));
  f.push_back(member("thermal.inlet_c", "C", K::when_thermal_modeled, "inlet air or coolant temperature",
                     [](auto& r) -> auto& { return r.thermal.inlet; }));
  f.push_back(member("thermal.peak_temp_c", "C", K::when_thermal_modeled, "the hottest device",
                     [](auto& r) -> auto& { return r.thermal.peak_temp; }, {{"peak_temp_c", kRowAndCsv}}));
  f.push_back(member("thermal.throttled_fraction", "fraction", K::when_thermal_modeled,
                     "share of device-time spent in kernels below the max clock",
                     [](auto& r) -> auto& { return r.thermal.throttled_fraction; }, {{"throttled_fraction", kRowAndCsv}}));
  f.push_back(member("thermal.power_throttled_fraction", "fraction", K::when_thermal_modeled,
                     "of it, held there by the power limit",
                     [](auto& r) -> auto& { return r.thermal.power_throttled_fraction; }));
  f.push_back(member("thermal.thermal_throttled_fraction", "fraction", K::when_thermal_modeled, "of it, held there by heat",
                     [](auto& r) -> auto& { return r.thermal.thermal_throttled_fraction; }));
  f.push_back(member("thermal.limiter", "", K::when_thermal_modeled,
                     "`none`, `power` or `thermal`: the larger of the two shares",
                     [](auto& r) -> auto& { return r.thermal.limiter; }, {{"limiter", kRowAndCsv}}));
  f.push_back(member("thermal.reached_shutdown", "bool", K::when_thermal_modeled, "a device passed its shutdown temperature",
                     [](auto& r) -> auto& { return r.thermal.reached_shutdown; }));

  f.push_back(member("variability.gpu_speed_spread", "sd of ln", K::key_if_variability,
                     "only with `cluster.variability`: the standard deviation of ln(a device's kernel-time factor)",
                     [](auto& r) -> auto& { return r.variability.gpu_speed_spread; }));
  f.push_back(member("variability.kernel_jitter", "sd of ln", K::key_if_variability,
                     "the standard deviation of ln(one kernel's time factor)",
                     [](auto& r) -> auto& { return r.variability.kernel_jitter; }));
  f.push_back(member("variability.seed", "seed", K::key_if_variability, "the seed of the draws",
                     [](auto& r) -> auto& { return r.variability.seed; }));
  f.push_back(member("variability.slowest_device", "device", K::key_if_variability,
                     "the device with the largest time factor (lowest id on ties), simulated or not",
                     [](auto& r) -> auto& { return r.variability.slowest_device; }));
  f.push_back(member("variability.slowest_device_factor", "factor", K::key_if_variability,
                     "its factor on every kernel time (named slow devices included)",
                     [](auto& r) -> auto& { return r.variability.slowest_device_factor; }));

  f.push_back(member("diloco.sync_every", "steps", K::key_if_diloco,
                     "only with `training.diloco` (docs/low-communication.md): H, inner steps per outer sync, as given",
                     [](auto& r) -> auto& { return r.diloco.sync_every; }));
  f.push_back(member("diloco.workers", "workers", K::key_if_diloco, "K, the workers, as given",
                     [](auto& r) -> auto& { return r.diloco.workers; }));
  f.push_back(member("diloco.fragments", "fragments", K::key_if_diloco, "F, the fragments (1: blocking), as given",
                     [](auto& r) -> auto& { return r.diloco.fragments; }));
  f.push_back(member("diloco.compression", "", K::key_if_diloco, "what the outer all-reduce sends, as given",
                     [](auto& r) -> auto& { return r.diloco.compression; }));
  f.push_back(member("diloco.inner_step_s", "s", K::key_if_diloco,
                     "the simulated inner step: gradients reduced inside each worker only",
                     [](auto& r) -> auto& { return r.diloco.inner_step; }));
  f.push_back(member("diloco.sync_step_s", "s", K::key_if_diloco,
                     "the simulated sync step: the inner step and the outer sync (pseudo-gradient, all-reduce across "
                     "workers, outer Nesterov update), blocking at its end; with fragments > 1 one fragment's, its "
                     "all-reduce overlapped with the step",
                     [](auto& r) -> auto& { return r.diloco.sync_step; }));
  f.push_back(member("diloco.time_per_step_s", "s", K::key_if_diloco,
                     "the amortised step: ((sync_every - fragments) * inner_step_s + fragments * sync_step_s) / "
                     "sync_every; equals `step_time_s`",
                     [](auto& r) -> auto& { return r.diloco.time_per_step; }));
  f.push_back(member("diloco.time_per_token_s", "s", K::key_if_diloco, "time_per_step_s / tokens_per_step",
                     [](auto& r) -> auto& { return r.diloco.time_per_token; }));
  f.push_back(member("diloco.sync_share", "fraction", K::key_if_diloco,
                     "the sync's exposed cost as a share of the amortised step: fragments * (sync_step_s - "
                     "inner_step_s) / sync_every / time_per_step_s",
                     [](auto& r) -> auto& { return r.diloco.sync_share; }));
  f.push_back(member("diloco.outer_bytes_per_rank", "bytes", K::key_if_diloco,
                     "what one rank contributes to an outer sync, all fragments (the heaviest pipeline stage's rank): "
                     "its part of the pseudo-gradient as compressed (docs/low-communication.md gives the bytes per "
                     "parameter)",
                     [](auto& r) -> auto& { return r.diloco.outer_bytes_per_rank; }));
  f.push_back(member("diloco.traffic_vs_dp", "ratio", K::key_if_diloco,
                     "bytes sent across worker boundaries per sync_every steps, DiLoCo's outer syncs over synchronous "
                     "DP's gradient reduction on the same ranks (each bandwidth-optimal: a ring across workers, DP as "
                     "a hierarchical all-reduce; ZeRO's gathers not counted)",
                     [](auto& r) -> auto& { return r.diloco.traffic_vs_dp; }));
  f.push_back(member("diloco.token_multiplier", "factor", K::key_if_diloco,
                     "M, the tokens DiLoCo needs over synchronous training for the same loss: given by the user, 1 by "
                     "default (see `statistical_efficiency`)",
                     [](auto& r) -> auto& { return r.diloco.token_multiplier; }));
  f.push_back(member("diloco.synchronous_step_s", "s", K::key_if_diloco,
                     "the step of the same plan trained synchronously (no training.diloco), simulated beside it; null "
                     "when that plan does not fit in memory",
                     [](auto& r) -> auto& { return r.diloco.synchronous_step; }));
  f.push_back(member("diloco.time_to_target_ratio", "ratio", K::key_if_diloco,
                     "time to the same loss, DiLoCo over synchronous: token_multiplier * time_per_step_s / "
                     "synchronous_step_s (the same tokens per step); below 1 DiLoCo gets there first",
                     [](auto& r) -> auto& { return r.diloco.time_to_target_ratio; }));
  f.push_back(member("diloco.statistical_efficiency", "", K::key_if_diloco,
                     "a sentence: that statistical efficiency (loss per token) is not modelled, and what "
                     "`time_to_target_ratio` assumes in its place",
                     [](auto& r) -> auto& { return r.diloco.statistical_efficiency; }));

  f.push_back(member("steps", "", K::always,
                     "one entry per simulated step (`training.steps`), each with the keys of the steps table below; the "
                     "report's other figures are the last step's",
                     [](auto& r) -> auto& { return r.steps; }));

  f.push_back(member("simulator.fidelity", "", K::always, "`full` or `symmetric`",
                     [](auto& r) -> auto& { return r.simulator.fidelity; }));
  f.push_back(member("simulator.fidelity_note", "", K::key_if_not_empty,
                     "present when the fidelity run differs from the one asked for (thermally different devices run "
                     "full)",
                     [](auto& r) -> auto& { return r.simulator.fidelity_note; }));
  f.push_back(member("simulator.profile", "", K::key_if_not_empty,
                     "only with `--profile`: the calibrated profile the collectives were timed with (its name and file)",
                     [](auto& r) -> auto& { return r.simulator.profile; }));
  f.push_back(member("simulator.simulated_ranks", "ranks", K::always, "ranks actually simulated",
                     [](auto& r) -> auto& { return r.simulator.simulated_ranks; }));
  f.push_back(member("simulator.stored_ranks", "ranks", K::always,
                     "simulated ranks whose ops the graph stores; the others are replicas of one of them (full "
                     "fidelity, docs/architecture.md)",
                     [](auto& r) -> auto& { return r.simulator.stored_ranks; }));
  f.push_back(member("simulator.rank_classes", "classes", K::always,
                     "templates the engine ran the simulated ranks from (ranks with the same ops up to their groups "
                     "share one)",
                     [](auto& r) -> auto& { return r.simulator.rank_classes; }));
  f.push_back(member("simulator.ops", "ops", K::always,
                     "ops executed (with `training.diloco`, over its engine runs: the inner step, the sync step and the "
                     "synchronous plan)",
                     [](auto& r) -> auto& { return r.simulator.ops; }));
  f.push_back(member("simulator.events", "events", K::always, "engine events processed (likewise)",
                     [](auto& r) -> auto& { return r.simulator.events; }));
  f.push_back(member("simulator.timing.wall_s", "s", K::key_if_volatile,
                     "wall-clock time of the whole run: loading aside, compiling, the memory estimate, the engine "
                     "(volatile)",
                     [](auto& r) -> auto& { return r.simulator.wall; }));
  f.push_back(member("simulator.timing.compile_s", "s", K::key_if_volatile,
                     "of it, building the execution graph (model + plan -> IR) (volatile)",
                     [](auto& r) -> auto& { return r.simulator.compile; }));
  f.push_back(member("simulator.timing.engine_s", "s", K::key_if_volatile,
                     "of it, running the engine (every simulated step) (volatile)",
                     [](auto& r) -> auto& { return r.simulator.engine; }));

  // Scan rows only.
  ReportField per_device = derived("tokens_per_s_per_device", "tokens/s", K::when_simulated, "tokens_per_s / devices",
                                   [](const RunReport& r) -> FieldValue {
                                     if (!r.tokens_per_s) return std::monostate{};
                                     return r.devices > 0 ? *r.tokens_per_s / r.devices : 0.0;
                                   });
  per_device.in_report = false;
  f.push_back(std::move(per_device));
  return f;
}

std::vector<StepField> build_step_fields() {
  using analysis::StepRecord;
  return {
      {"step_time_s", "s", "the step's time", [](const StepRecord& s) { return s.step_time.value(); },
       [](StepRecord& s, double v) { s.step_time = core::Seconds(v); }},
      {"peak_temp_c", "C", "the hottest device at any time of the step",
       [](const StepRecord& s) { return s.peak_temp.value(); }, [](StepRecord& s, double v) { s.peak_temp = core::Celsius(v); }},
      {"avg_device_w", "W", "mean device power over devices and the step",
       [](const StepRecord& s) { return s.avg_device.value(); }, [](StepRecord& s, double v) { s.avg_device = core::Watts(v); }},
  };
}

}  // namespace

const std::vector<ReportField>& report_fields() {
  static const std::vector<ReportField> fields = build_fields();
  return fields;
}

const std::vector<StepField>& step_fields() {
  static const std::vector<StepField> fields = build_step_fields();
  return fields;
}

FieldName find_field(std::string_view name) {
  // Built once: every key and alias to its field (names are unique; a test checks).
  static const std::map<std::string_view, FieldName, std::less<>> index = [] {
    std::map<std::string_view, FieldName, std::less<>> m;
    for (const auto& f : report_fields()) {
      m.emplace(f.key, FieldName{&f, nullptr});
      for (const auto& a : f.aliases) m.emplace(a.name, FieldName{&f, &a});
    }
    return m;
  }();
  const auto it = index.find(name);
  return it == index.end() ? FieldName{} : it->second;
}

FieldName field_named(std::string_view name) {
  const FieldName n = find_field(name);
  if (!n.field) throw core::Error(core::ErrorKind::internal, fmt::format("no report field or alias is named '{}'", name));
  return n;
}

bool field_known(const ReportField& f, const RunReport& r) {
  switch (f.known) {
    case Known::always: return true;
    case Known::when_simulated: return r.simulated;
    case Known::when_memory_known: return r.memory.known;
    case Known::when_power_modeled: return r.power.modeled;
    case Known::when_thermal_modeled: return r.thermal.modeled;
    case Known::key_if_not_simulated: return !r.simulated;
    case Known::key_if_not_empty: {
      const FieldValue v = f.get(r);
      if (std::holds_alternative<std::monostate>(v)) return false;  // a figure that is not set
      const auto* s = std::get_if<std::string>(&v);
      return !s || !s->empty();
    }
    case Known::key_if_variability: return r.variability.modeled;
    case Known::key_if_diloco: return r.diloco.modeled;
    case Known::key_if_volatile: return true;
  }
  return true;
}

FieldValue field_value(const FieldName& name, const RunReport& r, bool measured) {
  const ReportField& f = *name.field;
  if (!(measured || f.identity) || !field_known(f, r)) return std::monostate{};
  FieldValue v = f.get(r);
  if (auto* d = std::get_if<double>(&v)) {
    if (!std::isfinite(*d)) return std::monostate{};
    if (name.alias && name.alias->divisor != 1) *d /= name.alias->divisor;
  }
  return v;
}

}  // namespace inflect::io

namespace inflect::io {

std::string report_keys_markdown() {
  std::string md = "| key | unit | meaning | also written as |\n|---|---|---|---|\n";
  for (const auto& f : report_fields()) {
    if (!f.in_report) continue;
    std::string also;
    for (const auto& a : f.aliases) {
      if (!also.empty()) also += ", ";
      also += fmt::format("`{}` ({}{})", a.name, a.where, a.unit.empty() ? "" : fmt::format(", in {}", a.unit));
    }
    md += fmt::format("| `{}` | {} | {} | {} |\n", f.key, f.unit, f.doc, also);
  }
  md += "\nEach entry of `steps`:\n\n| key | unit | meaning |\n|---|---|---|\n";
  for (const auto& f : step_fields()) md += fmt::format("| `{}` | {} | {} |\n", f.key, f.unit, f.doc);
  return md;
}

}  // namespace inflect::io
