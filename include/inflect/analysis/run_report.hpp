#pragma once
// The result of simulating one experiment: what `inflect run` prints and writes as report.json.
// The figures carry unit types (core/units.hpp); the report field table (io/report_fields.hpp)
// names each one's report.json key and is the one place they become plain numbers.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inflect/workload/trace_import.hpp"
#include "inflect/core/units.hpp"

namespace inflect::analysis {

/// Time per parallel dimension.
struct PerDim {
  core::Seconds dp, tp, pp, cp, ep;
  core::Seconds total() const { return dp + tp + pp + cp + ep; }
};

/// The critical rank's step, split so that the parts add up to the step time.
struct Breakdown {
  core::Seconds compute;       // busy time of the compute stream (kernels incl. recompute)
  core::Seconds interference;  // of compute: slowdown from communication overlapping it
  core::Seconds throttle;      // of compute: kernels run below their board-power clock (a lower
                               // power cap or a hot device)
  PerDim exposed_comm;         // compute stream idle while waiting on communication, by dimension
  core::Seconds bubble;        // compute stream idle waiting for other pipeline stages
  core::Seconds other;         // any remaining idle time (e.g. waiting for peers at a collective)
  /// Only with cluster.variability (docs/variability.md): what device variability cost the rank,
  /// moved out of `compute` (its kernels' time beyond their calibrated time: in symmetric fidelity
  /// at the pace of the slowest rank its groups tie it to) and out of `other` (its waits at
  /// non-pipeline collectives for members that arrived later). Negative when its own device is
  /// faster than the calibrated one and it never waited.
  std::optional<core::Seconds> stragglers;
  /// Only on a cluster with sites (docs/geo.md): of exposed_comm, the part spent waiting on
  /// collectives whose group spans several sites, i.e. whose traffic crosses the WAN.
  std::optional<core::Seconds> exposed_across_sites;
  std::string critical_rank_note;  // which rank was used
};

struct MemoryPart {
  std::string name;  // "weights", "gradients", "optimizer", "activations", "buffers"
  core::Bytes bytes;
};

struct MemoryReport {
  core::Bytes peak;             // largest rank
  core::Bytes capacity;         // usable: reported_capacity - reserved, what peak is compared with
  core::Bytes reported_capacity;  // the device's memory as the driver reports it
  core::Bytes reserved;         // driver reserve + context + collective buffers (hw::MemoryReserve)
  bool fits = true;
  core::Bytes over_by;          // max(0, peak - capacity)
  int peak_stage = 0;           // pipeline stage of the largest rank
  std::vector<MemoryPart> parts;  // of the largest rank, largest first
  bool known = true;            // false for a replayed trace that carries no memory figures
};

/// One file a run read, as the report's provenance lists it: what it was for ("experiment",
/// "topology", "device", "profile", "execution graph", ...), where (relative to the working
/// directory when under it; "built-in:NAME" for the catalog compiled into the binary) and a
/// fingerprint of its bytes (core::content_hash).
struct InputFile {
  std::string role;
  std::string path;
  std::string hash;
  bool operator==(const InputFile&) const = default;
};

/// Where a report came from (report.json `provenance`, docs/report.md): the inflect build, every
/// file the run read, and the experiment as simulated, after defaults, as (option key, value)
/// pairs in the option table's order. io fills it (io/provenance.hpp); a report without it (a
/// test's, a report written before it existed) has it empty.
struct Provenance {
  std::string inflect_version;  // `git describe` of the build ("" when unknown)
  std::vector<InputFile> inputs;
  std::vector<std::pair<std::string, std::string>> effective;
  bool empty() const { return inflect_version.empty() && inputs.empty() && effective.empty(); }
};

struct SimulatorStats {
  core::Seconds wall;     // wall-clock, the whole run
  core::Seconds compile;  // building the execution graph (model + plan -> IR)
  core::Seconds engine;   // running it
  std::uint64_t events = 0;
  std::uint64_t ops = 0;
  int simulated_ranks = 0;
  int stored_ranks = 0;  // simulated ranks whose ops the graph stores (the others are replicas of them)
  int rank_classes = 0;  // templates the engine ran the simulated ranks from
  std::string fidelity;  // "full" | "symmetric"
  std::string fidelity_note;  // why the fidelity differs from the one asked for ("" when it does not)
  std::string profile;        // the calibrated profile the collectives used ("" when none)
};

/// Power over the (last simulated) step; docs/power.md defines each figure. Clocks are MHz.
struct PowerReport {
  bool modeled = false;
  core::Watts cap;                  // the limit each device held
  core::Watts avg_device;           // mean over devices and the step
  core::Watts peak_device;          // highest instantaneous draw of any device
  core::Watts peak_avg_device;      // highest 100 ms average of any device (what telemetry reads)
  core::Watts avg_node;             // devices + the node's other parts + its fabric share
  core::Watts cluster_avg;          // all nodes (IT power)
  core::Watts facility_avg;         // cluster_avg * PUE
  core::Joules energy_per_step;     // cluster_avg * step time (IT energy)
  core::Joules facility_energy_per_step;
  std::optional<core::Joules> energy_per_token;  // energy_per_step / tokens per step (unknown with them)
  double avg_clock_mhz = 0;         // compute-stream kernels' clock, weighted by their time
  double max_clock_mhz = 0;         // the device's maximum
};

struct ThermalReport {
  bool modeled = false;
  std::string cooling;                    // "air" | "liquid"
  core::Celsius inlet;
  core::Celsius peak_temp;                // hottest device
  double throttled_fraction = 0;          // device-time spent in kernels below the max clock
  double power_throttled_fraction = 0;    // ... held there by the power limit
  double thermal_throttled_fraction = 0;  // ... held there by temperature
  std::string limiter;                    // "none" | "power" | "thermal": the larger share
  bool reached_shutdown = false;          // a device passed its shutdown temperature
};

/// Devices that differ in speed (cluster.variability; docs/variability.md): the settings and the
/// slowest device they drew.
struct VariabilityReport {
  bool modeled = false;
  double gpu_speed_spread = 0;
  double kernel_jitter = 0;
  std::uint64_t seed = 0;
  int slowest_device = 0;             // the device with the largest time factor (lowest id on ties)
  double slowest_device_factor = 1;   // its factor on every kernel time (named slow devices included)
};

/// DiLoCo-style training (training.diloco; docs/low-communication.md): the simulated steps of a
/// period of sync_every steps and what they amortise to. With it, the report's step figures
/// (step_time, tokens_per_s, the breakdown, power) are that period's mean step.
struct DilocoReport {
  bool modeled = false;
  // The settings, as given.
  int sync_every = 0, workers = 0, fragments = 0;
  std::string compression;
  double token_multiplier = 1;
  core::Seconds inner_step;  // a worker's step, gradients reduced inside the worker
  core::Seconds sync_step;   // the inner step with the outer sync (one fragment's, when streamed)
  /// ((sync_every - fragments) * inner_step + fragments * sync_step) / sync_every.
  core::Seconds time_per_step;
  std::optional<core::Seconds> time_per_token;  // time_per_step / tokens per step
  double sync_share = 0;  // fragments * (sync_step - inner_step) / sync_every / time_per_step
  core::Bytes outer_bytes_per_rank;  // what the heaviest rank contributes to one outer sync (all fragments)
  /// Bytes sent across worker boundaries per sync_every steps, DiLoCo over synchronous DP over the
  /// same ranks (plan/diloco.hpp, dp_sent_across_workers), every rank summed.
  double traffic_vs_dp = 0;
  /// Synchronous training of the same plan (no training.diloco): its step, and DiLoCo's time to
  /// the same loss over it, token_multiplier * time_per_step / synchronous_step. Unknown when the
  /// synchronous plan does not fit in memory (it is then not simulated).
  std::optional<core::Seconds> synchronous_step;
  std::optional<double> time_to_target_ratio;
  std::string statistical_efficiency;  // that it is not modelled, and what the ratio assumes
};

/// One simulated step of a multi-step run (training.steps).
struct StepRecord {
  core::Seconds step_time;
  core::Celsius peak_temp;
  core::Watts avg_device;
};

struct RunReport {
  std::string name;
  std::string model;
  std::string device;
  std::string topology;
  int nodes = 0;
  int devices = 0;
  std::string plan;  // plan::plan_label: "tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1 m=192"
  /// How the model's kernels run: the training precision, the training framework whose defaults
  /// apply (training.framework) and the attention kernel in effect (the device's implementation,
  /// or "unfused"). "trace" for precision and attention of a replayed execution graph, whose
  /// kernels carry their own.
  std::string precision, framework, attention;
  /// False when the plan was not run (its memory does not fit); the timing fields are then 0 and
  /// report.json writes them as null; `not_simulated` says why.
  bool simulated = true;
  std::string not_simulated;
  /// Values no hardware has (plan/plausibility.hpp), one sentence each; the run went ahead.
  std::vector<std::string> warnings;

  core::Seconds step_time;
  /// Unknown (nullopt) for a replayed trace that does not carry them (workload::GraphFacts), and
  /// then so is every figure made from them: the report says null, never 0.
  std::optional<double> tokens_per_step;
  std::optional<core::Flops> model_flops_per_step;  // no recomputation
  std::optional<double> tokens_per_s;
  core::Flops hardware_flops_per_step;  // including recomputed work
  /// TFLOP/s per GPU as report.json writes them, not FLOP/s: a scan row is read back from its
  /// report.json and must come out the same, and x / 1e12 * 1e12 need not be x.
  std::optional<double> model_tflops_per_gpu;
  double hardware_tflops_per_gpu = 0;
  std::optional<double> mfu;  // model FLOP/s per GPU / dense peak at the precision
  double peak_tflops_per_gpu = 0;

  MemoryReport memory;
  Breakdown breakdown;
  PowerReport power;
  ThermalReport thermal;
  VariabilityReport variability;
  DilocoReport diloco;
  std::vector<StepRecord> steps;  // every simulated step, first to last
  /// A replayed Chakra or Kineto trace: what was read and how each node was treated, and the
  /// step as recorded against the simulated one (report.json `trace`, docs/traces.md). None for a
  /// model or an execution graph JSON.
  std::optional<workload::TraceImportSummary> trace;
  SimulatorStats simulator;
  Provenance provenance;
};

}  // namespace inflect::analysis
