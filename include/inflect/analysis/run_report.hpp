#pragma once
// The result of simulating one experiment: what `inflect run` prints and writes as report.json.
// Field names are the report.json keys (see io/report_json.hpp and docs/report.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace inflect::analysis {

/// Seconds per parallel dimension.
struct PerDim {
  double dp = 0, tp = 0, pp = 0, cp = 0, ep = 0;
  double total() const { return dp + tp + pp + cp + ep; }
};

/// The critical rank's step, split so that the parts add up to step_time_s.
struct Breakdown {
  double compute_s = 0;        // busy time of the compute stream (kernels incl. recompute)
  double compute_interference_s = 0;  // of compute_s: slowdown from communication overlapping it
  double compute_throttle_s = 0;      // of compute_s: kernels run below their board-power clock
                                      // (a lower power cap or a hot device)
  PerDim exposed_comm_s;       // compute stream idle while waiting on communication, by dimension
  double bubble_s = 0;         // compute stream idle waiting for other pipeline stages
  double other_s = 0;          // any remaining idle time (e.g. waiting for peers at a collective)
  std::string critical_rank_note;  // which rank was used
};

struct MemoryPart {
  std::string name;  // "weights", "gradients", "optimizer", "activations", "buffers"
  double bytes = 0;
};

struct MemoryReport {
  double peak_bytes = 0;       // largest rank
  double capacity_bytes = 0;   // device HBM
  bool fits = true;
  double over_by_bytes = 0;    // max(0, peak - capacity)
  int peak_stage = 0;          // pipeline stage of the largest rank
  std::vector<MemoryPart> parts;  // of the largest rank, largest first
  bool known = true;           // false for a replayed trace that carries no memory figures
};

struct SimulatorStats {
  double wall_s = 0;
  double compile_s = 0;  // building the execution graph (model + plan -> IR)
  double engine_s = 0;   // running it
  std::uint64_t events = 0;
  std::uint64_t ops = 0;
  int simulated_ranks = 0;
  int stored_ranks = 0;  // simulated ranks whose ops the graph stores (the others are replicas of them)
  int rank_classes = 0;  // templates the engine ran the simulated ranks from
  std::string fidelity;  // "full" | "symmetric"
  std::string fidelity_note;  // why the fidelity differs from the one asked for ("" when it does not)
};

/// Power over the (last simulated) step; docs/power.md defines each figure.
struct PowerReport {
  bool modeled = false;
  double cap_w = 0;                  // the limit each device held
  double avg_device_w = 0;           // mean over devices and the step
  double peak_device_w = 0;          // highest instantaneous draw of any device
  double peak_avg_device_w = 0;      // highest 100 ms average of any device (what telemetry reads)
  double avg_node_w = 0;             // devices + the node's other parts + its fabric share
  double cluster_avg_w = 0;          // all nodes (IT power)
  double facility_avg_w = 0;         // cluster_avg_w * PUE
  double energy_per_step_j = 0;      // cluster_avg_w * step time (IT energy)
  double facility_energy_per_step_j = 0;
  std::optional<double> energy_per_token_j;  // energy_per_step_j / tokens per step (unknown with them)
  double avg_clock_mhz = 0;          // compute-stream kernels' clock, weighted by their time
  double max_clock_mhz = 0;          // the device's maximum
};

struct ThermalReport {
  bool modeled = false;
  std::string cooling;                    // "air" | "liquid"
  double inlet_c = 0;
  double peak_temp_c = 0;                 // hottest device
  double throttled_fraction = 0;          // device-time spent in kernels below the max clock
  double power_throttled_fraction = 0;    // ... held there by the power limit
  double thermal_throttled_fraction = 0;  // ... held there by temperature
  std::string limiter;                    // "none" | "power" | "thermal": the larger share
  bool reached_shutdown = false;          // a device passed its shutdown temperature
};

/// One simulated step of a multi-step run (training.steps).
struct StepRecord {
  double step_time_s = 0;
  double peak_temp_c = 0;
  double avg_device_w = 0;
};

struct RunReport {
  std::string name;
  std::string model;
  std::string device;
  std::string topology;
  int nodes = 0;
  int devices = 0;
  std::string plan;  // e.g. "tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1"
  /// False when the plan was not run (its memory does not fit); the timing fields are then 0 and
  /// report.json writes them as null; `not_simulated` says why.
  bool simulated = true;
  std::string not_simulated;

  double step_time_s = 0;
  /// Unknown (nullopt) for a replayed trace that does not carry them (workload::GraphFacts), and
  /// then so is every figure made from them: the report says null, never 0.
  std::optional<double> tokens_per_step;
  std::optional<double> model_flops_per_step;  // no recomputation
  std::optional<double> tokens_per_s;
  double hardware_flops_per_step = 0;  // including recomputed work
  std::optional<double> model_tflops_per_gpu;
  double hardware_tflops_per_gpu = 0;
  std::optional<double> mfu;  // model FLOP/s per GPU / dense peak at the precision
  double peak_tflops_per_gpu = 0;

  MemoryReport memory;
  Breakdown breakdown;
  PowerReport power;
  ThermalReport thermal;
  std::vector<StepRecord> steps;  // every simulated step, first to last
  SimulatorStats simulator;
};

}  // namespace inflect::analysis
