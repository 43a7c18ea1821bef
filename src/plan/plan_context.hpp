#pragma once
// What every part of the compiler reads: the experiment and its plan, and what follows from them
// (the data-parallel degree, the schedule's shape with its micro-batches, the chunk layout, the
// rank mesh, the layer's kernels, and the message, gradient and parameter sizes). Computed once,
// before any rank is built, then read-only: the parts that build the graph (groups, kernel blocks,
// steps, data-parallel ops, issuing, stage replay) share one copy instead of each deriving what it
// needs.
#include <vector>

#include "inflect/plan/compiler.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/plan/placement.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/workload/layer_costs.hpp"

namespace inflect::plan::compiler {

struct PlanContext {
  /// From a plan check_plan has accepted.
  PlanContext(const Experiment& e, const CompileOptions& o);

  const Experiment& experiment;
  const CompileOptions& options;
  const workload::ModelSpec& model;
  const ParallelPlan& plan;
  int dp = 1;
  int workers = 1;    // DiLoCo's workers (training.diloco), 1 without
  int worker_dp = 1;  // data-parallel ranks per worker: dp / workers
  bool diloco_sync = false;  // building a DiLoCo sync step (CompileOptions::diloco_step)
  ScheduleShape shape;  // with the micro-batches per step of one data-parallel rank
  PipelineLayout layout;
  Mesh mesh;
  workload::ShardShape shard;   // how one rank holds a layer
  workload::LayerKernels layer;  // one layer's kernels as one rank runs them
  workload::MoeKernels moe;      // the MoE MLP's pieces (empty for a dense model)

  double pp_message_bytes = 0;       // activations (or their gradient) one PP send carries
  bool pp_gather = false;            // PP sends are scattered over TP and all-gathered on receipt
  bool overlap_param_gather = false; // ZeRO-1/2's parameter gather moved under the first forward
  double grad_bytes = 4;             // per parameter, of the gradients accumulated and reduced
  double ep_bytes = 0;               // one EP dispatch (or combine) all-to-all, per rank
  // With DiLoCo, dp below is a worker's (worker_dp): no data-parallel group leaves its worker.
  int dp_group_size = 1;             // the group that reduce-scatters and gathers: dp*cp, or the shard group
  int replicas = 1;                  // hybrid sharding: data-parallel replicas of each shard group
  int edp_group_size = 1;            // ranks holding the same experts: dp*cp/ep
  MemoryEstimate memory;                   // its stages[s] hold the parameters one rank of stage s holds
  std::vector<double> stage_shard_params;  // ... of which it updates (its optimizer shard; DiLoCo syncs these)

  /// The rank with r's coordinates but pipeline stage `stage`.
  workload::RankId at_stage(workload::RankId r, int stage) const;
  /// Does the boundary chunk -> next(chunk) carry data to rank - 1?
  bool flows_up(int chunk) const;
};

}  // namespace inflect::plan::compiler
