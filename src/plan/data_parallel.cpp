#include "plan/data_parallel.hpp"

#include "inflect/core/precision.hpp"
#include "inflect/plan/diloco.hpp"
#include "inflect/plan/memory.hpp"

namespace inflect::plan::compiler {

using workload::CollectiveKind;
using workload::ParallelDim;
using workload::Phase;
using workload::RankId;

void DataParallelOps::start_rank() {
  pending_.assign(static_cast<std::size_t>(ctx_.layout.chunks), 0);
  pending_experts_.assign(static_cast<std::size_t>(ctx_.layout.chunks), 0);
}

void DataParallelOps::flush_bucket(RankId r, int chunk, StepOps& out) {
  const auto ci = static_cast<std::size_t>(chunk);
  const bool rs = ctx_.plan.zero >= 1;
  const auto kind = rs ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
  if (pending_[ci] > 0 && ctx_.dp_group_size > 1)
    comm(streams_.dp, groups_.collective(kind, ParallelDim::dp, groups_.group(kDp, r), pending_[ci], rs ? "dp_rs_grads" : "dp_ar_grads"),
         Phase::backward, -1, 0, out, true);
  // Hybrid sharding (HSDP): the bucket's reduced shard is then all-reduced across the replicas,
  // bucket by bucket behind the backward, as FSDP's hybrid shard does after each reduce-scatter
  // (same stream: it follows its reduce-scatter). Routed experts were reduced over the whole
  // expert-data-parallel group already.
  if (pending_[ci] > 0 && ctx_.replicas > 1)
    comm(streams_.dp,
         groups_.collective(CollectiveKind::all_reduce, ParallelDim::dp, groups_.group(kRep, r), pending_[ci] / ctx_.dp_group_size,
                            "dp_ar_replicas"),
         Phase::backward, -1, 0, out, true);
  if (pending_experts_[ci] > 0 && ctx_.edp_group_size > 1)
    comm(streams_.dp,
         groups_.collective(kind, ParallelDim::dp, groups_.group(kEdp, r), pending_experts_[ci], rs ? "dp_rs_expert_grads" : "dp_ar_expert_grads"),
         Phase::backward, -1, 0, out, true);
  pending_[ci] = 0;
  pending_experts_[ci] = 0;
}

// Gradients of `chunk` completed by its last backward (or W) step go into DP buckets, launched
// as each fills, overlapped with the rest of the backward. Routed experts' gradients reduce over
// the expert-data-parallel group instead. Without overlap the reduction is one collective after
// the whole schedule (emit_rank).
void DataParallelOps::add_grads(RankId r, int chunk, double dense_bytes, double expert_bytes, bool last, StepOps& out) {
  // ZeRO-2/3 reduce-scatter every micro-batch's gradients (the rank keeps only its shard).
  if ((!last && ctx_.plan.zero < 2) || !ctx_.plan.overlap_grad_reduce) return;
  const auto ci = static_cast<std::size_t>(chunk);
  pending_[ci] += dense_bytes;
  pending_experts_[ci] += expert_bytes;
  if (pending_[ci] + pending_experts_[ci] >= ctx_.plan.grad_bucket_bytes.value()) flush_bucket(r, chunk, out);
}

void DataParallelOps::layer_grads(RankId r, int chunk, int layer, bool last, StepOps& out) {
  // Without EP every rank holds every expert: one group reduces all of the layer.
  const LayerShard held = layer_shard(ctx_.model, layer, ctx_.plan.tp, ctx_.plan.ep);
  add_grads(r, chunk, held.dense * ctx_.grad_bytes, held.experts * ctx_.grad_bytes, last, out);
  // ZeRO-3 / FSDP reduce-scatters each layer (its FSDP unit) as soon as its backward is done: the
  // dense part over the shard group, the routed experts over the expert-data-parallel group.
  if (ctx_.plan.zero >= 3 && ctx_.plan.overlap_grad_reduce) flush_bucket(r, chunk, out);
}

// All-gather of one layer's parameters (ZeRO-3), as side ops of the step: the dense part over the
// shard group; with EP the rank's routed experts (experts/ep of them) over the expert-data-
// parallel group, none when that group is one rank. Both run on the gather stream, in order, so
// the returned position (the last gather in `out`) is the one the layer's first op waits on.
int DataParallelOps::gather_params(RankId r, int layer, int mb, Phase ph, StepOps& out) {
  const double bpe = core::bytes_per_element(core::activation_precision(ctx_.experiment.training.precision));  // BF16 weights in FP8 recipes
  const LayerShard held = layer_shard(ctx_.model, layer, ctx_.plan.tp, ctx_.plan.ep);
  comm(streams_.dp_gather,
       groups_.collective(CollectiveKind::all_gather, ParallelDim::dp, groups_.group(kDp, r), held.dense * bpe, "dp_ag_layer_params"), ph, layer,
       mb, out, true);
  if (held.experts > 0 && ctx_.edp_group_size > 1)
    comm(
        streams_.dp_gather,
        groups_.collective(CollectiveKind::all_gather, ParallelDim::dp, groups_.group(kEdp, r), held.experts * bpe, "dp_ag_layer_expert_params"),
        ph, layer, mb, out, true);
  return static_cast<int>(out.size()) - 1;
}

// Without overlap (overlap_grad_reduce: false), one reduction of all the stage's gradients after
// the whole schedule.
void DataParallelOps::reduce_without_overlap(RankId r, int stage, StepOps& out) {
  const auto si = static_cast<std::size_t>(stage);
  if (!ctx_.plan.overlap_grad_reduce && (ctx_.dp_group_size > 1 || ctx_.replicas > 1)) {
    const StageMemory& held = ctx_.memory.stages[si];
    const double experts = ctx_.plan.ep > 1 ? held.expert_params : 0.0;
    pending_[0] = (held.params - experts) * ctx_.grad_bytes;
    pending_experts_[0] = experts * ctx_.grad_bytes;
    flush_bucket(r, 0, out);
  }
}

// After the last DP op: DualPipe's copies summed, the optimizer, with ZeRO-1/2 the parameter
// all-gather.
void DataParallelOps::optimizer_step(RankId r, int stage, StepOps& out) {
  const auto si = static_cast<std::size_t>(stage);
  if (ctx_.plan.schedule == Schedule::dualpipe) {
    // DualPipe keeps two copies of the model: rank s holds stages s and pp-1-s, and so does its
    // mirror rank pp-1-s, in the other direction. Each copy's gradients are only half of the
    // stage's, so the pair sums them before the update (deepseek-ai/DualPipe's example adds each
    // copy's gradient to its mirror's). After the data-parallel reduction, on the shards the
    // optimizer updates (ZeRO >= 1) or on the whole gradients (ZeRO 0).
    comm(streams_.dp,
         groups_.collective(CollectiveKind::all_reduce, ParallelDim::pp, groups_.group(kMirror, r),
                            ctx_.stage_shard_params[si] * ctx_.grad_bytes, "pp_ar_dualpipe_copies"),
         Phase::optimizer, -1, 0, out);
  }
  compute(streams_.compute, blocks_.optimizer[si], Phase::optimizer, -1, 0, out);
  if (ctx_.diloco_sync) {
    // DiLoCo's outer step on the rank's optimizer shard, after the inner optimizer and before
    // ZeRO-1/2's gather (one gather then serves both). Blocking (one fragment): the
    // pseudo-gradient, its all-reduce across the workers, the outer optimizer, in line. Streamed:
    // the fragment's all-reduce started with the step (fragment_start), and the compiler makes this
    // tail wait for it; here only the outer update of the fragment.
    if (ctx_.experiment.training.diloco->fragments == 1) {
      compute(streams_.compute, blocks_.pseudo_gradient[si], Phase::optimizer, -1, 0, out);
      comm(streams_.diloco_outer, outer_collective(r, stage), Phase::optimizer, -1, 0, out);
    }
    compute(streams_.compute, blocks_.outer_update[si], Phase::optimizer, -1, 0, out);
  }
  if ((ctx_.plan.zero == 1 || ctx_.plan.zero == 2) && !ctx_.overlap_param_gather) {
    const double bpe = core::bytes_per_element(core::activation_precision(ctx_.experiment.training.precision));  // BF16 weights in FP8 recipes
    const StageMemory& held = ctx_.memory.stages[si];
    const double experts = ctx_.plan.ep > 1 ? held.expert_params : 0.0;
    if (ctx_.dp_group_size > 1)
      comm(streams_.dp,
           groups_.collective(CollectiveKind::all_gather, ParallelDim::dp, groups_.group(kDp, r), (held.params - experts) * bpe,
                              "dp_ag_params"),
           Phase::optimizer, -1, 0, out);
    if (experts > 0 && ctx_.edp_group_size > 1)
      comm(streams_.dp, groups_.collective(CollectiveKind::all_gather, ParallelDim::dp, groups_.group(kEdp, r), experts * bpe, "dp_ag_expert_params"),
           Phase::optimizer, -1, 0, out);
  }
}

void DataParallelOps::fragment_start(RankId r, int stage, StepOps& out) {
  compute(streams_.compute, blocks_.pseudo_gradient[static_cast<std::size_t>(stage)], Phase::optimizer, -1, 0, out);
  comm(streams_.diloco_outer, outer_collective(r, stage), Phase::optimizer, -1, 0, out, true);
}

std::uint32_t DataParallelOps::outer_collective(RankId r, int stage) {
  const DilocoSpec& d = *ctx_.experiment.training.diloco;
  const OuterCollective o = plan::outer_collective(d, ctx_.stage_shard_params[static_cast<std::size_t>(stage)] / d.fragments);
  return groups_.collective(o.kind, ParallelDim::dp, groups_.group(kOuter, r), o.bytes,
                            o.kind == CollectiveKind::all_gather ? "diloco_outer_ag" : "diloco_outer_ar");
}

}  // namespace inflect::plan::compiler
