#pragma once
// A cheap analytical estimate of a plan's step time, for ranking tens of thousands of plans
// before the engine simulates the best few. It uses the engine's own building blocks — the
// kernels of workload/layer_costs, their durations from hw::ComputeModel, collective times from
// net::lower_collective's alpha-beta estimate on the same topology, plan::estimate_memory — and
// replaces the event-by-event replay with closed forms (docs/search.md):
//
//   per micro-batch and stage   f, b = the stage's kernels + the TP, CP and EP communication
//                               that the compiler leaves exposed (TP and EP are not overlapped;
//                               CP hops hide behind the ring's attention steps); ZeRO-3 waits
//                               for a layer's gather when it outlasts the layer; w = the weight-
//                               gradient share of b (zero-bubble and DualPipe defer it)
//   pipeline                    m * (f + b) + bubble, with the bubble of each schedule's paper:
//                                 1f1b, gpipe     (p-1)(f+b)            (Narayanan et al. 2021)
//                                 interleaved     (p-1)(f+b)/v          (ibid.)
//                                 zero-bubble     (p-1)(f+b-2w)         (ZB-H1, Qi et al. 2024)
//                                 dualpipe(v)     (p/2-1)(f+2b-3w)      (DeepSeek-V3 report, table 2)
//                               plus the activations' send/recv on the fill and drain path
//   data parallelism            gradient buckets filled evenly through the last backward, each
//                               reduced in turn: exposed = max(d, n*d - b*(1-1/n)) for n buckets
//                               of d seconds (all of it when overlap_grad_reduce is off); the
//                               ZeRO-1/2 parameter gather after the optimizer, exposed
//   optimizer                   the Adam kernel over the rank's (sharded) parameters
// Network contention between concurrent collectives is not modeled (each is uncontended): the
// engine's job, which is why the best plans are simulated.
#include <memory>
#include <unordered_map>

#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/power_model.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/plan/experiment.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/search/space.hpp"

namespace inflect::search {

struct Estimate {
  bool fits = false;
  double memory_peak_bytes = 0;
  int memory_peak_stage = 0;
  /// Seconds; the parts add up to step_s. Zero when the plan does not fit (not estimated).
  double step_s = 0;
  double compute_s = 0;    // kernels of the critical stage, incl. recomputation, and the optimizer
  double tp_s = 0, cp_s = 0, ep_s = 0, pp_s = 0, dp_s = 0;  // exposed communication
  double bubble_s = 0;
};

/// Estimates plans of one base experiment. Not thread-safe (it memoizes kernel and collective
/// times); use one per thread, sharing the topology.
class Estimator {
 public:
  Estimator(const plan::Experiment& base, std::shared_ptr<const net::Topology> topology);
  ~Estimator();
  Estimator(const Estimator&) = delete;
  Estimator& operator=(const Estimator&) = delete;
  /// Memory of the candidate's plan (plan::estimate_memory, the engine's own accounting) and,
  /// when it fits (or `even_if_over_memory`), its step-time estimate.
  Estimate estimate(const Candidate& c, bool even_if_over_memory = false);

 private:
  struct LayerTimes;
  const LayerTimes& layer_times(const Candidate& c);
  double collective_s(net::CollectiveOp op, int group, const Candidate& c, double bytes);
  /// A kernel's seconds at the clock the power cap allows (the engine's rule, per kernel; heat
  /// is left to the engine).
  double kernel_s(const core::KernelCost& k) const;
  double seconds_of(const std::vector<workload::KernelSpec>& ks, int which = 0) const;

  plan::Experiment e_;  // the base, its plan overwritten per candidate
  std::shared_ptr<const net::Topology> topo_;
  hw::ComputeModel compute_;
  hw::PowerModel power_;
  net::CollectiveTuning tuning_;
  std::unordered_map<std::uint64_t, std::unique_ptr<LayerTimes>> layers_;
  std::unordered_map<std::uint64_t, plan::ScheduleFacts> schedules_;
  std::unordered_map<std::uint64_t, net::CollectiveCostModel> collectives_;  // per group and op
};

}  // namespace inflect::search
