#pragma once
// The result of simulating one experiment: what `inflect run` prints and writes as report.json.
// Field names are the report.json keys (see io/report_json.hpp and docs/report.md).
#include <cstdint>
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
  std::string fidelity;  // "full" | "symmetric"
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
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double model_flops_per_step = 0;     // no recomputation
  double hardware_flops_per_step = 0;  // including recomputed work
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;                      // model FLOP/s per GPU / dense peak at the precision
  double peak_tflops_per_gpu = 0;

  MemoryReport memory;
  Breakdown breakdown;
  SimulatorStats simulator;
};

}  // namespace inflect::analysis
