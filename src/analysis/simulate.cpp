#include "inflect/analysis/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "inflect/core/error.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/power_model.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/plan/plausibility.hpp"
#include "inflect/plan/plan_summary.hpp"
#include "inflect/sim/engine.hpp"
#include "inflect/workload/graph_json.hpp"
#include "analysis/diloco.hpp"
#include "analysis/engine_setup.hpp"

namespace inflect::analysis {
namespace {

workload::ImportedTrace load_trace(const plan::Experiment& e) {
  workload::TraceImportOptions o;
  o.retime = e.workload.retime;
  o.precision = e.training.precision;
  return workload::import_trace(e.workload.trace_format, e.workload.trace_file, o);
}

MemoryReport memory_report(const plan::MemoryEstimate& m) {
  MemoryReport r;
  r.peak = m.peak;
  r.capacity = m.capacity;
  r.reported_capacity = m.reported_capacity;
  r.reserved = m.reserved;
  r.fits = m.fits();
  r.over_by = std::max(core::Bytes(0), r.peak - r.capacity);
  r.peak_stage = m.peak_stage;
  const auto& st = m.stages[static_cast<std::size_t>(m.peak_stage)];
  r.parts = {{"weights", st.weights},
             {"gradients", st.gradients},
             {"optimizer", st.optimizer},
             {"activations", st.activations},
             {"buffers", st.buffers}};
  std::stable_sort(r.parts.begin(), r.parts.end(), [](const MemoryPart& a, const MemoryPart& b) { return a.bytes > b.bytes; });
  return r;
}

// Whether no rank can stand for another: devices that differ thermally, or kernels drawn apart
// per rank (kernel jitter: a representative taking each op's slowest draw would be an upper bound,
// sim/speeds). Devices that differ only in speed keep the symmetric fidelity: a representative runs
// at the pace of the slowest rank it stands for, which is what every synchronising collective
// imposes on them all (docs/variability.md).
bool ranks_differ(const plan::Experiment& e) { return e.cluster.thermal.any() || e.cluster.variability.kernel_jitter > 0; }

plan::CompileOptions compile_options(const plan::Experiment& e, const SimulateOptions& o) {
  plan::CompileOptions co;
  co.fidelity = ranks_differ(e) ? plan::Fidelity::full : o.fidelity;
  co.fuse_blocks = o.fuse_blocks;
  return co;
}

// The precision, framework and attention kernel a run used (RunReport's fields of those names).
void describe_training(const plan::Experiment& e, RunReport& r) {
  const bool trace = !e.workload.model.has_value();
  r.precision = trace ? "trace" : std::string(core::to_string(e.training.precision));
  r.framework = std::string(plan::framework_name(e.training.framework));
  r.attention = trace ? "trace" : e.training.attention == "unfused" ? "unfused" : e.cluster.device.attention;
}

// A plan whose memory does not fit: its memory and why, no timing.
RunReport not_simulated(const plan::Experiment& e, const plan::MemoryEstimate& mem) {
  RunReport r;
  r.name = e.name;
  r.model = e.workload.model->name;
  r.device = e.cluster.device.name;
  r.topology = e.cluster.topology.name;
  r.nodes = e.cluster.nodes;
  r.devices = e.cluster.devices();
  r.plan = plan::plan_label(e);
  describe_training(e, r);
  // Known from the plan, simulated or not.
  const workload::GraphFacts facts = plan::step_facts(e);
  r.tokens_per_step = facts.tokens_per_step;
  r.model_flops_per_step = facts.model_flops_per_step;
  r.simulated = false;
  r.memory = memory_report(mem);
  r.peak_tflops_per_gpu = e.cluster.device.peak(e.training.precision).value() / 1e12;
  std::string largest;
  for (std::size_t i = 0; i < r.memory.parts.size() && i < 3; ++i)
    largest += fmt::format("{}{} {:.1f} GiB", i ? ", " : "", r.memory.parts[i].name, r.memory.parts[i].bytes.value() / 1073741824.0);
  r.not_simulated = fmt::format(
      "peak memory {:.1f} GiB (pipeline stage {}) exceeds the {:.1f} GiB usable of {} ({:.1f} GiB reported, {:.1f} GiB "
      "reserved) by {:.1f} GiB; largest: {}",
      r.memory.peak.value() / 1073741824.0, r.memory.peak_stage, r.memory.capacity.value() / 1073741824.0, r.device,
      r.memory.reported_capacity.value() / 1073741824.0, r.memory.reserved.value() / 1073741824.0,
      r.memory.over_by.value() / 1073741824.0, largest);
  return r;
}

// Each simulated device's cooling for one step of training.steps (docs/power.md, "Steps"): its
// coolant, resistance and capacitance from the cluster, and where it starts. Step 1 starts every
// device at the temperature its idle power settles at (the node idled before the job); every later
// step where the physics says the step before leaves it (sim::warm_start).
std::vector<sim::DeviceCooling> cooling(const plan::Experiment& e, const hw::PowerModel& pm,
                                        const workload::ExecutionGraph& graph, const sim::EngineResult* previous,
                                        const std::vector<sim::DeviceCooling>* before) {
  const std::size_t slots = graph.simulated_ranks().size();
  const sim::DeviceCooling c = base_cooling(e.cluster, pm);
  std::vector<sim::DeviceCooling> out(slots, c);
  const auto& sim_ranks = graph.simulated_ranks();
  const int per_node = e.cluster.topology.devices_per_node;
  for (std::size_t i = 0; i < slots; ++i) {
    const int device = static_cast<int>(sim_ranks[i]);
    out[i].resistance = out[i].resistance * e.cluster.thermal.resistance_scale(device, per_node);
    out[i].coolant = core::Celsius(e.cluster.thermal.inlet_c(device / per_node, c.coolant.value()));
    out[i].start = hw::rc_steady(out[i].coolant, pm.idle(), out[i].resistance);
  }
  if (!previous || !before) return out;
  for (std::size_t i = 0; i < slots; ++i) out[i] = sim::warm_start(pm, out[i], (*before)[i], previous->power[i], previous->makespan);
  return out;
}

// cluster.variability as the engine takes it: named slow devices by global id.
sim::Variability engine_variability(const plan::Experiment& e) {
  const plan::SpeedVariability& v = e.cluster.variability;
  sim::Variability out;
  out.gpu_speed_spread = v.gpu_speed_spread;
  out.kernel_jitter = v.kernel_jitter;
  out.seed = v.seed;
  const int per_node = e.cluster.topology.devices_per_node;
  for (const auto& s : v.slow) {
    if (s.device >= 0) out.slow.push_back({s.device, s.time_factor});
    else
      for (int d = s.local_rank; d < e.cluster.devices(); d += per_node) out.slow.push_back({d, s.time_factor});
  }
  return out;
}

// The settings and the slowest device they drew (over every device, simulated or not).
VariabilityReport variability_report(const plan::Experiment& e, const sim::Variability& v) {
  VariabilityReport r;
  if (!v.any()) return r;
  r.modeled = true;
  r.gpu_speed_spread = v.gpu_speed_spread;
  r.kernel_jitter = v.kernel_jitter;
  r.seed = v.seed;
  for (int d = 0; d < e.cluster.devices(); ++d)
    if (const double f = v.device_factor(d); f > r.slowest_device_factor || d == 0) {
      r.slowest_device_factor = f;
      r.slowest_device = d;
    }
  return r;
}

// Power and thermal figures of one engine run, over all devices (a simulated rank weighs as the
// ranks it represents).
void report_power(const plan::Experiment& e, const hw::PowerModel& pm, const workload::ExecutionGraph& graph,
                  const sim::EngineResult& res, std::optional<double> tokens_per_step, PowerReport& p, ThermalReport& t) {
  const double step = res.makespan.seconds();
  double devices = 0, energy = 0, clock = 0, kernel = 0, power_lim = 0, thermal_lim = 0;
  for (std::size_t i = 0; i < res.power.size(); ++i) {
    const double w = graph.represents()[i];
    const auto& d = res.power[i];
    devices += w;
    energy += w * d.energy.value();
    clock += w * d.clock_mhz_s;
    kernel += w * d.kernel_time.value();
    power_lim += w * d.power_limited.value();
    thermal_lim += w * d.thermal_limited.value();
    p.peak_device = std::max(p.peak_device, d.peak);
    p.peak_avg_device = std::max(p.peak_avg_device, d.peak_avg);
    t.peak_temp = std::max(t.peak_temp, d.peak_temp);
    t.reached_shutdown = t.reached_shutdown || d.reached_shutdown;
  }
  if (!(devices > 0) || !(step > 0)) return;
  const auto& topo = e.cluster.topology;
  p.modeled = t.modeled = true;
  const core::Seconds step_time(step);
  p.cap = core::Watts(e.cluster.power_cap());
  p.avg_device = core::Watts(energy / (devices * step));
  p.avg_node = p.avg_device * topo.devices_per_node + topo.power.other + topo.power.fabric_per_node;
  p.cluster_avg = p.avg_node * e.cluster.nodes;
  p.facility_avg = p.cluster_avg * topo.power.pue;
  p.energy_per_step = p.cluster_avg * step_time;
  p.facility_energy_per_step = p.facility_avg * step_time;
  if (tokens_per_step) p.energy_per_token = *tokens_per_step > 0 ? p.energy_per_step / *tokens_per_step : core::Joules(0);
  p.avg_clock_mhz = kernel > 0 ? clock / kernel : 0;
  p.max_clock_mhz = pm.clock_mhz(pm.top_level());
  t.cooling = topo.cooling.kind == net::CoolingKind::air ? "air" : "liquid";
  t.inlet = core::Celsius(e.cluster.inlet());
  t.power_throttled_fraction = power_lim / (devices * step);
  t.thermal_throttled_fraction = thermal_lim / (devices * step);
  t.throttled_fraction = t.power_throttled_fraction + t.thermal_throttled_fraction;
  t.limiter = t.throttled_fraction == 0 ? "none" : (thermal_lim > power_lim ? "thermal" : "power");
}

}  // namespace

void check_graph(const plan::Experiment& e, const workload::ExecutionGraph& graph, const std::string& job) {
  const int devices = e.cluster.devices();
  if (graph.total_ranks() != devices) {
    // A job's devices are its `nodes` in the jobs file, no key of its experiment: said of the job.
    if (!job.empty())
      throw core::Error(core::ErrorKind::input,
                        fmt::format("job '{}': its trace has {} ranks but the job has {} devices ({} nodes of {}); give it as "
                                    "many nodes as its trace has ranks",
                                    job, graph.total_ranks(), devices, e.cluster.nodes, e.cluster.topology.devices_per_node),
                        core::SourceLocation{e.file, 0, 0, "workload.trace"});
    throw core::Error(core::ErrorKind::input,
                      fmt::format("the execution graph has {} ranks but the cluster has {} devices ({} nodes of {}); a trace "
                                  "replays on as many devices as it has ranks",
                                  graph.total_ranks(), devices, e.cluster.nodes, e.cluster.topology.devices_per_node),
                      core::SourceLocation{e.file, 0, 0, "cluster.nodes"});
  }
  if (e.cluster.thermal.any() && static_cast<int>(graph.simulated_ranks().size()) != devices)
    throw core::Error(core::ErrorKind::input,
                      "cluster.thermal makes devices differ, but this execution graph simulates one rank per class "
                      "(symmetric); export it with --fidelity full to replay it with thermal variation",
                      core::SourceLocation{e.file, 0, 0, "cluster.thermal"});
  if (e.cluster.variability.kernel_jitter > 0 && static_cast<int>(graph.simulated_ranks().size()) != devices)
    throw core::Error(core::ErrorKind::input,
                      "cluster.variability.kernel_jitter draws every rank's kernels apart, but this execution graph "
                      "simulates one rank per class (symmetric); export it with --fidelity full to replay it with jitter",
                      core::SourceLocation{e.file, 0, 0, "cluster.variability.kernel_jitter"});
}

RunReport simulate_graph(const plan::Experiment& e, const workload::ExecutionGraph& graph, const plan::MemoryEstimate* memory,
                         const std::string& plan_summary, const SimulateOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  check_graph(e, graph);
  const int devices = e.cluster.devices();
  net::Topology topo(e.cluster.topology, e.cluster.nodes);
  hw::ComputeModel compute(e.cluster.device);
  const hw::PowerModel power(e.cluster.device);
  sim::EngineOptions eo = engine_options(e.cluster, power);
  eo.observer = options.observer;
  eo.variability = engine_variability(e);
  auto te = std::chrono::steady_clock::now();
  // What the graph knows of the step; a trace may lack any of it (then the report says null).
  const workload::GraphFacts& facts = graph.facts();
  const std::optional<double> tokens_per_step = facts.tokens_per_step;
  // training.steps: see cooling() for where each step starts. The observer sees the last step
  // only; the report's power and thermal figures are the last step's.
  std::vector<StepRecord> steps;
  sim::EngineResult res;
  PowerReport power_report;
  ThermalReport thermal_report;
  std::uint64_t events = 0;
  for (int step = 1; step <= e.training.steps; ++step) {
    eo.power.devices = cooling(e, power, graph, step == 1 ? nullptr : &res, step == 1 ? nullptr : &eo.power.devices);
    eo.observer = step == e.training.steps ? options.observer : nullptr;
    res = sim::run_engine(graph, topo, compute, eo);
    events += res.events;
    power_report = {};
    thermal_report = {};
    report_power(e, power, graph, res, tokens_per_step, power_report, thermal_report);
    steps.push_back({core::Seconds(res.makespan.seconds()), thermal_report.peak_temp, power_report.avg_device});
  }
  const core::Seconds engine_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - te).count());

  RunReport r;
  r.name = e.name;
  const bool own_format = e.workload.trace_format == workload::TraceFormat::graph_json;
  r.model = e.workload.model ? e.workload.model->name
                             : (own_format ? "trace" : workload::to_string(e.workload.trace_format)) + (":" + e.workload.trace_file);
  r.device = e.cluster.device.name;
  r.topology = e.cluster.topology.name;
  r.nodes = e.cluster.nodes;
  r.devices = devices;
  r.plan = plan_summary;
  describe_training(e, r);
  const double step_s = res.makespan.seconds();
  r.step_time = core::Seconds(step_s);
  r.tokens_per_step = tokens_per_step;
  r.model_flops_per_step = facts.model_flops_per_step;
  double hw_flops = 0;
  for (std::size_t i = 0; i < res.ranks.size(); ++i) hw_flops += res.ranks[i].flops * graph.represents()[i];
  r.hardware_flops_per_step = core::Flops(hw_flops);
  r.peak_tflops_per_gpu = e.cluster.device.peak(e.training.precision).value() / 1e12;
  derive_rates(r);
  if (memory) {
    r.memory = memory_report(*memory);
  } else {
    // A replayed trace names no process groups: its reserve counts no collective buffers.
    r.memory.reported_capacity = e.cluster.device.hbm_capacity;
    r.memory.capacity = e.cluster.device.usable_memory(0);
    r.memory.reserved = r.memory.reported_capacity - r.memory.capacity;
    r.memory.known = facts.memory_peak.has_value();
    r.memory.peak = facts.memory_peak.value_or(core::Bytes(0));
    r.memory.fits = r.memory.peak <= r.memory.capacity;
    r.memory.over_by = std::max(core::Bytes(0), r.memory.peak - r.memory.capacity);
  }
  // The critical rank: the one that finishes last (lowest id on ties); its parts sum to the step.
  std::size_t crit = 0;
  for (std::size_t i = 1; i < res.ranks.size(); ++i)
    if (res.ranks[i].finish > res.ranks[crit].finish) crit = i;
  if (!res.ranks.empty()) {
    const auto& c = res.ranks[crit];
    auto in_seconds = [](core::Time t) { return core::Seconds(t.seconds()); };
    r.breakdown = breakdown_of(c, topo.sites() > 1);
    if (eo.variability.any()) {
      // What variability cost the rank gets a row of its own: its kernels' time beyond calibrated
      // (part of compute) and its waits for later members (part of other). The parts still sum
      // to the step.
      r.breakdown.compute = in_seconds(c.compute - c.device_slowdown);
      r.breakdown.other = in_seconds(c.other - c.peer_wait);
      r.breakdown.stragglers = in_seconds(c.device_slowdown + c.peer_wait);
    }
  }
  r.power = std::move(power_report);
  r.thermal = std::move(thermal_report);
  r.variability = variability_report(e, eo.variability);
  r.steps = std::move(steps);
  r.simulator.engine = engine_time;
  r.simulator.events = events;
  r.simulator.ops = graph.op_count();
  r.simulator.simulated_ranks = static_cast<int>(graph.simulated_ranks().size());
  r.simulator.stored_ranks = r.simulator.simulated_ranks - static_cast<int>(graph.replicas().size());
  r.simulator.rank_classes = static_cast<int>(res.classes);
  if (const auto& prof = e.cluster.topology.collectives.profile; !prof.name.empty())
    r.simulator.profile = prof.file.empty() ? prof.name : prof.name + " (" + prof.file + ")";
  r.simulator.fidelity =
      plan::fidelity_name(static_cast<int>(graph.simulated_ranks().size()) == devices ? plan::Fidelity::full : plan::Fidelity::symmetric);
  if (e.cluster.thermal.any() && options.fidelity == plan::Fidelity::symmetric)
    r.simulator.fidelity_note = "full: cluster.thermal makes devices differ, so no rank stands for another";
  else if (ranks_differ(e) && options.fidelity == plan::Fidelity::symmetric)
    r.simulator.fidelity_note = "full: cluster.variability.kernel_jitter draws every rank's kernels apart, so no rank "
                                "stands for another";
  r.simulator.wall = core::Seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return r;
}

workload::ExecutionGraph build_graph(const plan::Experiment& e, const SimulateOptions& options) {
  if (!e.workload.model) return load_trace(e).graph;
  // A DiLoCo experiment's graph is its sync step, the one its trace shows (the inner step is the
  // same without the outer synchronisation).
  plan::CompileOptions co = compile_options(e, options);
  co.diloco_step = plan::DilocoStep::sync;
  return plan::compile(e, co).graph;
}

RunReport simulate(const plan::Experiment& e, const SimulateOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  RunReport r;
  if (!e.workload.model) {
    workload::ImportedTrace t = load_trace(e);
    r = simulate_graph(e, t.graph, nullptr, "trace", options);
    if (e.workload.trace_format != workload::TraceFormat::graph_json) r.trace = std::move(t.summary);
  } else {
    plan::check_plan(e);
    const plan::MemoryEstimate mem = plan::estimate_memory(e, plan::derive_dp(e));
    if (!mem.fits() && !options.simulate_over_memory) {
      r = not_simulated(e, mem);
      if (e.training.diloco) describe_diloco(e, r.diloco);
      r.warnings = plan::plausibility_warnings(e);
      return r;
    }
    if (e.training.diloco) {
      // Several engine runs (analysis/diloco.hpp); their compile and engine times are in the report.
      r = simulate_diloco(e, options, compile_options(e, options), mem);
    } else {
      plan::CompiledPlan cp = plan::compile(e, compile_options(e, options));
      const core::Seconds compile_time(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      r = simulate_graph(e, cp.graph, &cp.memory, cp.summary, options);
      r.simulator.compile = compile_time;
    }
  }
  r.warnings = plan::plausibility_warnings(e);
  r.simulator.wall = core::Seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return r;
}

}  // namespace inflect::analysis
