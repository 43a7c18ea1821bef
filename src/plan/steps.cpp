#include "plan/steps.hpp"

#include "inflect/core/error.hpp"

namespace inflect::plan::compiler {

using workload::CollectiveKind;
using workload::GroupId;
using workload::ParallelDim;
using workload::Phase;
using workload::RankId;

void StepBuilder::layer_forward_ops(RankId r, int layer, int mb, Phase ph, StepOps& out) {
  const double tb = ctx_.layer.tp_boundary_bytes.value();
  const bool tp = ctx_.plan.tp > 1;
  const GroupId tg = tp ? groups_.group(kTp, r) : 0;
  for (int blk = 0; blk < 2; ++blk) {
    if (tp_overlapped(blk, layer)) {
      overlapped_forward_block(r, blk, layer, mb, ph, out);
      continue;
    }
    if (tp && ctx_.plan.sequence_parallel)
      comm(streams_.tp, groups_.collective(CollectiveKind::all_gather, ParallelDim::tp, tg, tb, blk ? "tp_ag_mlp" : "tp_ag_attn"), ph, layer, mb,
           out);
    if (blk == 0 && ctx_.plan.cp > 1) {
      compute(streams_.compute, blocks_.attn_pre_fwd, ph, layer, mb, out);
      if (ctx_.plan.cp_comm == CpComm::all_gather) {
        // All-gather K and V of the whole sequence, then attend the local queries to it in one
        // kernel: the gather is on the critical path (Llama 3's CP; torchtitan's allgather rotation).
        comm(streams_.cp_send, groups_.collective(CollectiveKind::all_gather, ParallelDim::cp, groups_.group(kCp, r), cp_gathered_kv_bytes(), "cp_ag_kv"),
             ph, layer, mb, out);
        compute(streams_.compute, blocks_.attn_core_whole_fwd, ph, layer, mb, out);
      } else {
        ring_ops(r, Dim::cp, layer, mb, ph, blocks_.attn_ring_fwd, ctx_.layer.cp_kv_bytes.value(), "cp_ring_kv", out);
      }
      compute(streams_.compute, blocks_.attn_post_fwd, ph, layer, mb, out);
    } else if (blk == 1 && ctx_.model.moe_layer(layer)) {
      moe_forward_ops(r, layer, mb, ph, out);
    } else {
      compute(streams_.compute, blk ? blocks_.mlp_fwd : blocks_.attn_fwd, ph, layer, mb, out);
    }
    if (tp)
      comm(streams_.tp,
           groups_.collective(ctx_.plan.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, ParallelDim::tp, tg, tb,
                      blk ? (ctx_.plan.sequence_parallel ? "tp_rs_mlp" : "tp_ar_mlp") : (ctx_.plan.sequence_parallel ? "tp_rs_attn" : "tp_ar_attn")),
           ph, layer, mb, out);
  }
}

// MoE MLP: router and shared experts, token dispatch over the EP group, the rank's experts, and
// the combine back (Megatron-Core's all-to-all token dispatcher).
void StepBuilder::moe_forward_ops(RankId r, int layer, int mb, Phase ph, StepOps& out) {
  if (blocks_.shared_overlap) {
    // Route, then dispatch while the shared experts compute; the routed experts wait for both.
    compute(streams_.compute, blocks_.moe_route_fwd, ph, layer, mb, out);
    comm(streams_.ep, groups_.collective(CollectiveKind::all_to_all, ParallelDim::ep, groups_.group(kEp, r), ctx_.ep_bytes, "ep_dispatch"), ph,
         layer, mb, out, true);
    const int dispatch = static_cast<int>(out.size()) - 1;
    compute(streams_.compute, blocks_.moe_shared_fwd, ph, layer, mb, out);
    const std::size_t at = out.size();
    compute(streams_.compute, blocks_.moe_experts_fwd, ph, layer, mb, out);
    out[at].wait = dispatch;
  } else {
    compute(streams_.compute, blocks_.moe_pre_fwd, ph, layer, mb, out);
    if (ctx_.plan.ep > 1)
      comm(streams_.ep, groups_.collective(CollectiveKind::all_to_all, ParallelDim::ep, groups_.group(kEp, r), ctx_.ep_bytes, "ep_dispatch"), ph,
           layer, mb, out);
    compute(streams_.compute, blocks_.moe_experts_fwd, ph, layer, mb, out);
  }
  if (ctx_.plan.ep > 1)
    comm(streams_.ep, groups_.collective(CollectiveKind::all_to_all, ParallelDim::ep, groups_.group(kEp, r), ctx_.ep_bytes, "ep_combine"), ph,
         layer, mb, out);
  compute(streams_.compute, blocks_.moe_post_fwd, ph, layer, mb, out);
}

// A ring over the CP or TP group: `step` runs n times (n = cp or tp); while step i computes, the
// chunk step i+1 needs moves one hop around the ring (sent to the next rank, received from the
// previous), so the transfer hides behind the compute unless it is slower. A chunk is forwarded
// once it has arrived. CP: ring attention (Liu et al. 2023; Megatron-Core's context parallelism),
// each step the attention core over one KV chunk. TP: Transformer Engine's ring-exchange
// all-gather, each step a row slice of the GEMM over one rank's input shard.
// K and V of the whole sequence (the CP all-gather's output, and its gradient's reduce-scatter input).
double StepBuilder::cp_gathered_kv_bytes() const { return ctx_.layer.cp_kv_bytes.value() * ctx_.plan.cp; }

void StepBuilder::ring_ops(RankId r, Dim dim, int layer, int mb, Phase ph, const Block& step, double bytes, const char* name, StepOps& out) {
  const bool cp = dim == Dim::cp;
  const int n = cp ? ctx_.plan.cp : ctx_.plan.tp;
  const GroupType ring = cp ? kCpRing : kTpRing;
  const ParallelDim pd = cp ? ParallelDim::cp : ParallelDim::tp;
  const std::uint8_t send_stream = cp ? streams_.cp_send : streams_.tp, recv_stream = cp ? streams_.cp_recv : streams_.tp_recv;
  Coords c = ctx_.mesh.coords(r);
  if (cp)
    c.cp = (c.cp + n - 1) % n;
  else
    c.tp = (c.tp + n - 1) % n;
  const RankId from = ctx_.mesh.rank(c);
  const std::uint32_t send = groups_.collective(CollectiveKind::send_recv, pd, groups_.group(ring, r), bytes, name);
  const std::uint32_t recv =
      ctx_.options.fidelity == Fidelity::full ? groups_.collective(CollectiveKind::send_recv, pd, groups_.group(ring, from), bytes, name) : 0;
  int arrived = -1;  // position in `out` of the receive that brought the current chunk
  for (int i = 0; i < n; ++i) {
    int next = -1;
    if (i + 1 < n) {
      comm(send_stream, send, ph, layer, mb, out, true);
      if (arrived >= 0) out.back().wait = arrived;
      next = static_cast<int>(out.size()) - 1;
      // In symmetric fidelity the previous rank is a mirror of this one: its send to us is our
      // send to the next rank, moved in the same instant, so that send stands for the receive.
      if (ctx_.options.fidelity == Fidelity::full) {
        comm(recv_stream, recv, ph, layer, mb, out, true);
        next = static_cast<int>(out.size()) - 1;
      }
    }
    const std::size_t at = out.size();
    compute(streams_.compute, step, ph, layer, mb, out);
    if (arrived >= 0) out[at].wait = arrived;
    arrived = next;
  }
}

// parallel.tp_comm_overlap applies to a block with SP collectives around dense GEMMs: not to an
// MoE MLP (its GEMMs sit between the EP all-to-alls) nor to ring attention (its own overlap).
bool StepBuilder::tp_overlapped(int blk, int layer) const {
  if (!ctx_.plan.tp_comm_overlap) return false;
  return blk == 0 ? ctx_.plan.cp == 1 : !ctx_.model.moe_layer(layer);
}

// One dense block forward with TE's TP overlap (TpOverlapBlock): the all-gather as a ring
// exchange of the tp input shards under the GEMM's row slices, the reduce-scatter in
// kTeRsSplits pieces, each behind the GEMM slice that wrote it. The last piece is in line: the
// block's output (the residual add) waits for it.
void StepBuilder::overlapped_forward_block(RankId r, int blk, int layer, int mb, Phase ph, StepOps& out) {
  const TpOverlapBlock& b = blk ? blocks_.ov_mlp_fwd : blocks_.ov_attn_fwd;
  const double tb = ctx_.layer.tp_boundary_bytes.value();
  compute(streams_.compute, b.pre, ph, layer, mb, out);
  ring_ops(r, Dim::tp, layer, mb, ph, b.gather_slice, tb / ctx_.plan.tp, blk ? "tp_ag_mlp_ring" : "tp_ag_attn_ring", out);
  compute(streams_.compute, b.mid, ph, layer, mb, out);
  const std::uint32_t rs = groups_.collective(CollectiveKind::reduce_scatter, ParallelDim::tp, groups_.group(kTp, r), tb / kTeRsSplits,
                                              blk ? "tp_rs_mlp_piece" : "tp_rs_attn_piece");
  for (int i = 0; i < kTeRsSplits; ++i) {
    compute(streams_.compute, b.scatter_slice, ph, layer, mb, out);
    comm(streams_.tp, rs, ph, layer, mb, out, i + 1 < kTeRsSplits);
  }
  compute(streams_.compute, b.post, ph, layer, mb, out);
}

// One dense block backward with TE's TP overlap: the output gradient's all-gather as a ring
// exchange under the first input-gradient GEMM's row slices; the input gradient's
// reduce-scatter beside the weight-gradient GEMM, the rest of the block waiting for it. Without
// weight gradients (a zero-bubble B step) nothing is left to hide it: it runs in line.
void StepBuilder::overlapped_backward_block(RankId r, int blk, int layer, int mb, bool with_weights, StepOps& out) {
  const TpOverlapBlock& b = with_weights ? (blk ? blocks_.ov_mlp_bwd : blocks_.ov_attn_bwd) : (blk ? blocks_.ov_mlp_dgrad : blocks_.ov_attn_dgrad);
  const double tb = ctx_.layer.tp_boundary_bytes.value();
  compute(streams_.compute, b.pre, Phase::backward, layer, mb, out);
  ring_ops(r, Dim::tp, layer, mb, Phase::backward, b.gather_slice, tb / ctx_.plan.tp, blk ? "tp_ag_mlp_grad_ring" : "tp_ag_attn_grad_ring", out);
  compute(streams_.compute, b.mid, Phase::backward, layer, mb, out);
  const bool beside = !b.beside.kernels.empty();
  comm(
      streams_.tp,
      groups_.collective(CollectiveKind::reduce_scatter, ParallelDim::tp, groups_.group(kTp, r), tb, blk ? "tp_rs_mlp_grad" : "tp_rs_attn_grad"),
      Phase::backward, layer, mb, out, beside);
  const int rs = static_cast<int>(out.size()) - 1;
  compute(streams_.compute, b.beside, Phase::backward, layer, mb, out);
  const std::size_t at = out.size();
  compute(streams_.compute, b.post, Phase::backward, layer, mb, out);
  if (beside) out[at].wait = rs;
}

void StepBuilder::moe_backward_ops(RankId r, int layer, int mb, bool with_weights, StepOps& out) {
  compute(streams_.compute, blocks_.moe_post_bwd, Phase::backward, layer, mb, out);
  if (blocks_.shared_overlap) {
    // The combine gradient travels while the shared experts' backward computes.
    comm(streams_.ep, groups_.collective(CollectiveKind::all_to_all, ParallelDim::ep, groups_.group(kEp, r), ctx_.ep_bytes, "ep_combine_grad"),
         Phase::backward, layer, mb, out, true);
    const int combine = static_cast<int>(out.size()) - 1;
    compute(streams_.compute, with_weights ? blocks_.moe_shared_bwd : blocks_.moe_shared_dgrad, Phase::backward, layer, mb, out);
    const std::size_t at = out.size();
    compute(streams_.compute, with_weights ? blocks_.moe_experts_bwd : blocks_.moe_experts_dgrad, Phase::backward, layer, mb, out);
    out[at].wait = combine;
    comm(streams_.ep, groups_.collective(CollectiveKind::all_to_all, ParallelDim::ep, groups_.group(kEp, r), ctx_.ep_bytes, "ep_dispatch_grad"),
         Phase::backward, layer, mb, out);
    compute(streams_.compute, with_weights ? blocks_.moe_route_bwd : blocks_.moe_route_dgrad, Phase::backward, layer, mb, out);
    return;
  }
  if (ctx_.plan.ep > 1)
    comm(streams_.ep, groups_.collective(CollectiveKind::all_to_all, ParallelDim::ep, groups_.group(kEp, r), ctx_.ep_bytes, "ep_combine_grad"),
         Phase::backward, layer, mb, out);
  compute(streams_.compute, with_weights ? blocks_.moe_experts_bwd : blocks_.moe_experts_dgrad, Phase::backward, layer, mb, out);
  if (ctx_.plan.ep > 1)
    comm(streams_.ep, groups_.collective(CollectiveKind::all_to_all, ParallelDim::ep, groups_.group(kEp, r), ctx_.ep_bytes, "ep_dispatch_grad"),
         Phase::backward, layer, mb, out);
  compute(streams_.compute, with_weights ? blocks_.moe_pre_bwd : blocks_.moe_pre_dgrad, Phase::backward, layer, mb, out);
}

void StepBuilder::forward_ops(RankId r, int mb, int chunk, StepOps& out) {
  const int s = ctx_.mesh.coords(r).pp;
  const auto ci = static_cast<std::size_t>(chunk);
  const int prev = ctx_.layout.prev(chunk), next = ctx_.layout.next(chunk);
  const int first = ctx_.layout.first_layer[ci], n = ctx_.layout.layers[ci];
  // Megatron-Core's --overlap-param-gather: the all-gathers of the parameters the optimizer
  // updated are issued at once, before anything else of the step (in steady state: right after
  // the previous step's optimizer), and each layer of the first micro-batch waits for its own.
  std::vector<int> param_gathers;
  if (ctx_.overlap_param_gather && mb == 0)  // PlanContext sets it only under ZeRO 1/2
    for (int l = 0; l < n; ++l) param_gathers.push_back(dp_ops_.gather_params(r, first + l, mb, Phase::forward, out));
  if (prev >= 0 && ctx_.layout.owner[static_cast<std::size_t>(prev)] != s) {
    const RankId from = ctx_.at_stage(r, ctx_.layout.owner[static_cast<std::size_t>(prev)]);
    comm(ctx_.flows_up(prev) ? streams_.recv_act_up : streams_.recv_act_down,
         groups_.collective(CollectiveKind::send_recv, ParallelDim::pp, groups_.group(kPpAct, from, prev), ctx_.pp_message_bytes, "pp_act"),
         Phase::forward, -1, mb, out);
    if (ctx_.pp_gather)
      comm(streams_.tp,
           groups_.collective(CollectiveKind::all_gather, ParallelDim::tp, groups_.group(kTp, r), ctx_.pp_message_bytes * ctx_.plan.tp,
                              "pp_act_gather"),
           Phase::forward, -1, mb, out);
  }
  if (prev < 0) compute(streams_.compute, blocks_.embed_fwd, Phase::forward, -1, mb, out);
  if (!param_gathers.empty()) {
    for (int l = 0; l < n; ++l) {
      const std::size_t at = out.size();
      layer_forward_ops(r, first + l, mb, Phase::forward, out);
      core::check_invariant(out[at].wait < 0, "a layer's first op waits for one thing");
      out[at].wait = param_gathers[static_cast<std::size_t>(l)];
    }
  } else if (ctx_.plan.zero < 3) {
    for (int l = 0; l < n; ++l) layer_forward_ops(r, first + l, mb, Phase::forward, out);
  } else {
    // ZeRO-3 / FSDP: each layer's parameters are all-gathered before it runs, the next layer's
    // gather issued as this one starts (FSDP's forward prefetch), on their own stream.
    int ag = dp_ops_.gather_params(r, first, mb, Phase::forward, out);
    for (int l = 0; l < n; ++l) {
      const int next_ag = l + 1 < n ? dp_ops_.gather_params(r, first + l + 1, mb, Phase::forward, out) : -1;
      const std::size_t at = out.size();
      layer_forward_ops(r, first + l, mb, Phase::forward, out);
      out[at].wait = ag;
      ag = next_ag;
    }
  }
  if (next < 0) compute(streams_.compute, blocks_.head_fwd, Phase::forward, -1, mb, out);
  if (next >= 0 && ctx_.layout.owner[static_cast<std::size_t>(next)] != s)
    comm(ctx_.flows_up(chunk) ? streams_.send_act_up : streams_.send_act_down,
         groups_.collective(CollectiveKind::send_recv, ParallelDim::pp, groups_.group(kPpAct, r, chunk), ctx_.pp_message_bytes, "pp_act"),
         Phase::forward, -1, mb, out, true);
}

void StepBuilder::backward_ops(RankId r, int mb, int chunk, bool with_weights, bool last, StepOps& out) {
  const int s = ctx_.mesh.coords(r).pp;
  const auto ci = static_cast<std::size_t>(chunk);
  const int prev = ctx_.layout.prev(chunk), next = ctx_.layout.next(chunk);
  const double tb = ctx_.layer.tp_boundary_bytes.value();
  const bool tp = ctx_.plan.tp > 1;
  const GroupId tg = tp ? groups_.group(kTp, r) : 0;
  const double embed_grad = static_cast<double>(ctx_.model.vocab * ctx_.model.hidden) / ctx_.plan.tp * ctx_.grad_bytes;

  if (next >= 0 && ctx_.layout.owner[static_cast<std::size_t>(next)] != s) {
    const RankId from = ctx_.at_stage(r, ctx_.layout.owner[static_cast<std::size_t>(next)]);
    comm(ctx_.flows_up(chunk) ? streams_.recv_grad_down : streams_.recv_grad_up,
         groups_.collective(CollectiveKind::send_recv, ParallelDim::pp, groups_.group(kPpGrad, from, chunk), ctx_.pp_message_bytes, "pp_grad"),
         Phase::backward, -1, mb, out);
    if (ctx_.pp_gather)
      comm(streams_.tp,
           groups_.collective(CollectiveKind::all_gather, ParallelDim::tp, tg, ctx_.pp_message_bytes * ctx_.plan.tp, "pp_grad_gather"),
           Phase::backward, -1, mb, out);
  }
  if (next < 0) {
    compute(streams_.compute, blocks_.head_bwd, Phase::backward, -1, mb, out);
    dp_ops_.add_grads(r, chunk, embed_grad, 0, last, out);
  }
  const Block& mlp = with_weights ? blocks_.mlp_bwd : blocks_.mlp_dgrad;
  const Block& attn = with_weights ? blocks_.attn_bwd : blocks_.attn_dgrad;
  // ZeRO-3 / FSDP resharded after forward: gather each layer again, one layer ahead (backward
  // prefetch), before its backward (and its recomputation).
  const bool regather = ctx_.plan.zero >= 3 && ctx_.plan.reshard_after_forward;
  int ag = regather ? dp_ops_.gather_params(r, ctx_.layout.first_layer[ci] + ctx_.layout.layers[ci] - 1, mb, Phase::backward, out) : -1;
  for (int l = ctx_.layout.layers[ci] - 1; l >= 0; --l) {
    const int layer = ctx_.layout.first_layer[ci] + l;
    const int next_ag = regather && l > 0 ? dp_ops_.gather_params(r, layer - 1, mb, Phase::backward, out) : -1;
    const std::size_t at = out.size();
    if (ctx_.plan.recompute == Recompute::full) layer_forward_ops(r, layer, mb, Phase::recompute, out);
    const bool op_recompute = ctx_.plan.recompute == Recompute::selective && ctx_.plan.selective_recompute == SelectiveRecompute::every_other_matmul;
    const bool core_recompute = ctx_.plan.recompute == Recompute::selective && !op_recompute;
    if (op_recompute) compute(streams_.compute, blocks_.layer_recompute, Phase::recompute, layer, mb, out);
    for (int blk = 1; blk >= 0; --blk) {
      if (tp_overlapped(blk, layer)) {
        if (blk == 0 && core_recompute)
          compute(streams_.compute, blocks_.core_recompute, Phase::recompute, layer, mb, out);
        overlapped_backward_block(r, blk, layer, mb, with_weights, out);
        continue;
      }
      if (tp && ctx_.plan.sequence_parallel)
        comm(streams_.tp, groups_.collective(CollectiveKind::all_gather, ParallelDim::tp, tg, tb, blk ? "tp_ag_mlp_grad" : "tp_ag_attn_grad"),
             Phase::backward, layer, mb, out);
      if (blk == 0 && core_recompute)
        compute(streams_.compute, blocks_.core_recompute, Phase::recompute, layer, mb, out);
      if (blk == 0 && ctx_.plan.cp > 1) {
        compute(streams_.compute, with_weights ? blocks_.attn_post_bwd : blocks_.attn_post_dgrad, Phase::backward, layer, mb, out);
        if (ctx_.plan.cp_comm == CpComm::all_gather) {
          // K and V gathered again (not kept from forward), then the gradients of the whole
          // sequence's K and V reduce-scattered back to their owners.
          const GroupId cg = groups_.group(kCp, r);
          comm(streams_.cp_send, groups_.collective(CollectiveKind::all_gather, ParallelDim::cp, cg, cp_gathered_kv_bytes(), "cp_ag_kv"),
               Phase::backward, layer, mb, out);
          compute(streams_.compute, blocks_.attn_core_whole_bwd, Phase::backward, layer, mb, out);
          comm(streams_.cp_send, groups_.collective(CollectiveKind::reduce_scatter, ParallelDim::cp, cg, cp_gathered_kv_bytes(), "cp_rs_dkv"),
               Phase::backward, layer, mb, out);
        } else {
          // K and V travel the ring again, with their gradient accumulators: twice the bytes.
          ring_ops(r, Dim::cp, layer, mb, Phase::backward, blocks_.attn_ring_bwd, 2 * ctx_.layer.cp_kv_bytes.value(), "cp_ring_kv_dkv", out);
        }
        compute(streams_.compute, with_weights ? blocks_.attn_pre_bwd : blocks_.attn_pre_dgrad, Phase::backward, layer, mb, out);
      } else if (blk == 1 && ctx_.model.moe_layer(layer)) {
        moe_backward_ops(r, layer, mb, with_weights, out);
      } else {
        compute(streams_.compute, blk ? mlp : attn, Phase::backward, layer, mb, out);
      }
      if (tp)
        comm(streams_.tp,
             groups_.collective(ctx_.plan.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, ParallelDim::tp, tg, tb,
                        blk ? (ctx_.plan.sequence_parallel ? "tp_rs_mlp_grad" : "tp_ar_mlp_grad")
                            : (ctx_.plan.sequence_parallel ? "tp_rs_attn_grad" : "tp_ar_attn_grad")),
             Phase::backward, layer, mb, out);
    }
    if (regather) {
      // The layer's first op that extends the chain waits for its parameters (a ring send of a
      // gradient shard before it, with TP overlap, needs none).
      std::size_t i = at;
      while (out[i].side) ++i;
      core::check_invariant(out[i].wait < 0, "a layer's first op waits for one thing");
      out[i].wait = ag;
    }
    ag = next_ag;
    if (with_weights) dp_ops_.layer_grads(r, chunk, layer, last, out);
  }
  if (prev < 0) {
    compute(streams_.compute, blocks_.embed_bwd, Phase::backward, -1, mb, out);
    dp_ops_.add_grads(r, chunk, embed_grad, 0, last, out);
  }
  if (prev >= 0 && ctx_.layout.owner[static_cast<std::size_t>(prev)] != s)
    comm(ctx_.flows_up(prev) ? streams_.send_grad_down : streams_.send_grad_up,
         groups_.collective(CollectiveKind::send_recv, ParallelDim::pp, groups_.group(kPpGrad, r, prev), ctx_.pp_message_bytes, "pp_grad"),
         Phase::backward, -1, mb, out, true);
  if ((last || ctx_.plan.zero >= 2) && with_weights) dp_ops_.flush_bucket(r, chunk, out);
}

// A zero-bubble W step: the weight-gradient GEMMs of every layer of the chunk, no communication.
void StepBuilder::weight_ops(RankId r, int mb, int chunk, bool last, StepOps& out) {
  const auto ci = static_cast<std::size_t>(chunk);
  for (int l = ctx_.layout.layers[ci] - 1; l >= 0; --l) {
    const int layer = ctx_.layout.first_layer[ci] + l;
    if (ctx_.model.moe_layer(layer)) {
      compute(streams_.compute, blocks_.moe_experts_wgrad, Phase::backward, layer, mb, out);
      compute(streams_.compute, blocks_.moe_pre_wgrad, Phase::backward, layer, mb, out);
    } else {
      compute(streams_.compute, blocks_.mlp_wgrad, Phase::backward, layer, mb, out);
    }
    compute(streams_.compute, blocks_.attn_wgrad, Phase::backward, layer, mb, out);
    dp_ops_.layer_grads(r, chunk, layer, last, out);
  }
  if (last || ctx_.plan.zero >= 2) dp_ops_.flush_bucket(r, chunk, out);
}

}  // namespace inflect::plan::compiler
