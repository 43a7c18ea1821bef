#pragma once
// Per-rank peak memory of a plan: weights, gradients, optimizer states, activations (by schedule
// and recomputation) and communication buffers, against the device's HBM.
//
// Conventions (Megatron-LM with bf16/fp16 mixed precision; docs/plans.md tabulates the sharding):
//   weights      = params_on_rank * bytes(activation precision) (BF16 in FP8 recipes, plus TE's
//                  FP8 copy and transpose of each linear weight, 2 B)
//   gradients    = params_on_rank * grad_bytes_per_param (training.optimizer.gradients: fp32 main
//                  grads for bf16, as Megatron sets accumulate_allreduce_grads_in_fp32; fp16 for fp16)
//   optimizer    = params_on_rank * (master + 2 moments) (Adam, training.optimizer: 12 with an
//                  fp32 master copy and fp32 moments, 10 with NeMo's 16-bit remainders),
//                  divided over the data-parallel(*cp) group with ZeRO-1 (distributed optimizer);
//                  with training.diloco plus DiLoCo's outer copy and momentum, fp32 (8 B/param)
//   sharding     = ZeRO-1 the optimizer states, ZeRO-2 also the gradients, ZeRO-3 also the weights
//                  (plus the running and prefetched layers gathered): the dense part over dp*cp
//                  (or the hybrid shard group), routed experts (with ep > 1) over the
//                  expert-data-parallel group, dp*cp/ep ranks; with training.diloco dp is a
//                  worker's dp/K (plan/diloco.hpp)
//   activations  = activation_bytes_per_layer * the most layer-micro-batches the rank's schedule
//                  keeps live at once (plan/schedule.hpp: peak_activation_layers), plus the
//                  logits where a route ends (fp32, b*s*V/tp) and the embedding output where
//                  one starts
// Parameters follow the schedule's chunk layout: DualPipe holds two copies' chunks per rank.
//   buffers      = one gradient bucket + the pipeline send/recv buffers (+ with tp_comm_overlap
//                  Transformer Engine's 10 userbuffers of [s*b/cp, h] activations)
#include <string>
#include <vector>

#include "inflect/core/units.hpp"
#include "inflect/plan/experiment.hpp"
#include "inflect/plan/schedule.hpp"

namespace inflect::plan {

struct StageMemory {
  int stage = 0;
  double params = 0;  // parameters held by one rank of the stage
  double expert_params = 0;  // of which routed experts (sharded by tp and ep)
  /// The rank's share of its layers' weights (after TP and EP), embedding and head left out: the
  /// linear weights an FP8 recipe keeps FP8 copies of and casts once per step.
  double layer_params = 0;
  core::Bytes weights, gradients, optimizer, activations, buffers;
  core::Bytes total() const { return weights + gradients + optimizer + activations + buffers; }
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;
  int peak_stage = 0;
  core::Bytes peak;
  /// What the peak is compared with: the device's usable memory, reported_capacity - reserved.
  core::Bytes capacity;
  /// The device's memory as the driver reports it (hw::DeviceSpec::hbm_capacity).
  core::Bytes reported_capacity;
  /// What a framework cannot use of it: the driver's reserve, the CUDA/HIP context and the
  /// collective buffers of `communicators` communicators (hw::MemoryReserve).
  core::Bytes reserved;
  int communicators = 0;
  bool fits() const { return peak <= capacity; }
};

/// How one rank holds each layer under the experiment's plan.
workload::ShardShape shard_shape(const Experiment& e);
/// The parameters one rank holds of a layer: the dense part over tp (without EP the routed
/// experts count as dense: every rank holds them all) and, with EP, the rank's experts/ep of the
/// routed experts over tp. The two parts reduce and gather over different groups (the
/// data-parallel group, the expert-data-parallel group).
struct LayerShard {
  double dense = 0;
  double experts = 0;
  double total() const { return dense + experts; }
};
LayerShard layer_shard(const workload::ModelSpec& m, int layer, int tp, int ep);
/// Bytes per parameter of the gradients that are accumulated and reduced across data parallelism.
double grad_bytes_per_param(const TrainingSpec& t);
/// The communicators a rank of the plan runs collectives on, each holding its own NCCL/RCCL
/// buffers (hw::MemoryReserve::per_communicator): one per parallel dimension of more than one rank
/// (tp, cp, pp, the data-parallel gradient group dp*cp, ep) and, with ep, the expert-data-parallel
/// group dp*cp/ep when it has more than one rank. Megatron creates further groups (model-parallel,
/// embedding) whose few small collectives are not counted. (estimate_memory passes a DiLoCo
/// worker's dp and adds one for the outer all-reduce's group.)
int communicators(const ParallelPlan& p, int dp);
/// Micro-batches per step of one data-parallel rank.
std::int64_t micro_batches(const Experiment& e, int dp);
/// Hybrid sharding (parallel.shard_group): the group that reduce-scatters and gathers (dp*cp, or
/// the shard group when it is smaller) and how many replicas of it all-reduce across (1 without).
struct ShardGroups {
  int size = 1;
  int replicas = 1;
};
ShardGroups shard_groups(const ParallelPlan& p, int dp);
/// The pipeline schedule's shape under the experiment (stages, micro-batches, chunks, layers).
ScheduleShape schedule_shape(const Experiment& e, int dp);
MemoryEstimate estimate_memory(const Experiment& e, int dp);

/// What the memory model needs from the schedule: its chunk layout and every stage's
/// peak_activation_layers. It depends only on (schedule, ScheduleShape), so a caller estimating
/// many plans of one shape (`inflect search`) computes it once and passes it in.
struct ScheduleFacts {
  PipelineLayout layout;
  std::vector<double> peak_layers;  // per stage
};
ScheduleFacts schedule_facts(Schedule s, const ScheduleShape& shape);
/// estimate_memory with the facts of the experiment's schedule shape already computed.
MemoryEstimate estimate_memory(const Experiment& e, int dp, const ScheduleFacts& facts);

}  // namespace inflect::plan
