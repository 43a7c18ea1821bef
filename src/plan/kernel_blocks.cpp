#include "plan/kernel_blocks.hpp"

#include <fmt/format.h>

#include <string>
#include <utility>

#include "inflect/core/error.hpp"
#include "inflect/plan/diloco.hpp"
#include "inflect/workload/layer_costs.hpp"

namespace inflect::plan::compiler {
namespace {

/// Adds kernels to the graph as blocks: one fused kernel per block, or one per kernel without
/// CompileOptions::fuse_blocks.
class BlockCutter {
 public:
  BlockCutter(const PlanContext& ctx, workload::ExecutionGraph& g) : ctx_(ctx), g_(g) {}
  Block add_block(const std::string& name, const std::vector<workload::KernelSpec>& ks) const;
  TpOverlapBlock cut_tp_overlap(const std::string& name, const std::vector<workload::KernelSpec>& ks, bool forward) const;

 private:
  const PlanContext& ctx_;
  workload::ExecutionGraph& g_;
};

Block BlockCutter::add_block(const std::string& name, const std::vector<workload::KernelSpec>& ks) const {
  Block b;
  if (ks.empty()) return b;
  if (!ctx_.options.fuse_blocks) {
    for (const auto& k : ks) b.kernels.push_back(g_.add_kernel(workload::Kernel{name + "." + k.name, k.cost, {}}));
    return b;
  }
  workload::Kernel fused;
  fused.name = name;
  fused.cost.cls = ks.front().cost.cls;
  fused.cost.precision = ks.front().cost.precision;
  for (const auto& k : ks) {
    fused.cost.flops += k.cost.flops;
    fused.cost.bytes += k.cost.bytes;
    fused.parts.push_back(k.cost);
  }
  b.kernels.push_back(g_.add_kernel(std::move(fused)));
  return b;
}

// Cuts a dense block's kernels for TE's TP overlap (see TpOverlapBlock). Forward: around its
// first and last GEMMs. Backward: around its first GEMM (an input gradient) and its last
// input-gradient GEMM; the weight-gradient GEMMs after that one run beside the reduce-scatter.
TpOverlapBlock BlockCutter::cut_tp_overlap(const std::string& name, const std::vector<workload::KernelSpec>& ks, bool forward) const {
  std::size_t first = ks.size(), last = ks.size();
  for (std::size_t i = 0; i < ks.size(); ++i) {
    if (ks[i].cost.cls != core::KernelClass::gemm) continue;
    if (first == ks.size()) first = i;
    if (forward || !ks[i].weight_gradient) last = i;
  }
  core::check_invariant(first < last && last < ks.size(), "a TP-overlapped block needs two GEMMs");
  std::vector<workload::KernelSpec> pre(ks.begin(), ks.begin() + static_cast<std::ptrdiff_t>(first)), mid, beside, post;
  for (std::size_t i = first + 1; i < last; ++i) mid.push_back(ks[i]);
  if (!forward) mid.push_back(ks[last]);
  for (std::size_t i = last + 1; i < ks.size(); ++i) (!forward && ks[i].weight_gradient ? beside : post).push_back(ks[i]);
  core::check_invariant(!post.empty(), "a TP-overlapped block needs kernels after its reduce-scatter");
  TpOverlapBlock b;
  b.pre = add_block(name + "_pre", pre);
  b.gather_slice = add_block(name + "_gather_slice", {workload::gemm_row_slice(ks[first], ctx_.plan.tp)});
  b.mid = add_block(name + "_mid", mid);
  if (forward) b.scatter_slice = add_block(name + "_scatter_slice", {workload::gemm_row_slice(ks[last], kTeRsSplits)});
  b.beside = add_block(name + "_beside", beside);
  b.post = add_block(name + "_post", post);
  return b;
}

}  // namespace

KernelBlocks::KernelBlocks(const PlanContext& ctx, workload::ExecutionGraph& g) {
  const BlockCutter cutter(ctx, g);
  auto add_block = [&](const std::string& name, const std::vector<workload::KernelSpec>& ks) { return cutter.add_block(name, ks); };
  auto cut_tp_overlap = [&](const std::string& name, const std::vector<workload::KernelSpec>& ks, bool forward) {
    return cutter.cut_tp_overlap(name, ks, forward);
  };
  const bool split_backward = splits_backward(ctx.plan.schedule, ctx.shape);
  // The attention core of a pass, uncut (workload::KernelSpec::attention_core).
  auto attention_core_of = [](const std::vector<workload::KernelSpec>& ks) {
    std::vector<workload::KernelSpec> out;
    for (const auto& k : ks)
      if (k.attention_core) out.push_back(k);
    return out;
  };
  auto split = [](const std::vector<workload::KernelSpec>& ks, bool weights) {
    std::vector<workload::KernelSpec> out;
    for (const auto& k : ks)
      if (k.weight_gradient == weights) out.push_back(k);
    return out;
  };
  attn_fwd = add_block("attn_fwd", ctx.layer.attn_fwd);
  if (ctx.plan.cp > 1) {
    // The attention block cut at its core; the core in cp equal ring steps (load-balanced causal
    // chunks, as Megatron-Core's zigzag split makes them).
    auto cut = [&](const std::vector<workload::KernelSpec>& ks, std::vector<workload::KernelSpec>& pre,
                   std::vector<workload::KernelSpec>& core, std::vector<workload::KernelSpec>& post) {
      bool seen = false;
      for (auto k : ks) {
        if (k.attention_core) {
          k.cost.flops = core::Flops(k.cost.flops.value() / ctx.plan.cp);
          k.cost.bytes = core::Bytes(k.cost.bytes.value() / ctx.plan.cp);
          core.push_back(k);
          seen = true;
        } else {
          (seen ? post : pre).push_back(k);
        }
      }
    };
    std::vector<workload::KernelSpec> pre, core, post;
    cut(ctx.layer.attn_fwd, pre, core, post);
    attn_pre_fwd = add_block("attn_pre", pre);
    std::vector<workload::KernelSpec> ring_step = core;
    ring_step.insert(ring_step.end(), ctx.layer.cp_step_fwd.begin(), ctx.layer.cp_step_fwd.end());
    attn_ring_fwd = add_block("attn_core_ring_step", ring_step);
    if (ctx.plan.cp_comm == CpComm::all_gather) {
      attn_core_whole_fwd = add_block("attn_core", attention_core_of(ctx.layer.attn_fwd));
      attn_core_whole_bwd = add_block("attn_core_bwd", attention_core_of(ctx.layer.attn_bwd));
    }
    attn_post_fwd = add_block("attn_post", post);
    pre.clear(), core.clear(), post.clear();
    cut(ctx.layer.attn_bwd, pre, core, post);  // backward order: pre = output side, post = input side
    attn_post_bwd = add_block("attn_post_bwd", pre);
    core.insert(core.end(), ctx.layer.cp_step_bwd.begin(), ctx.layer.cp_step_bwd.end());
    attn_ring_bwd = add_block("attn_core_ring_step_bwd", core);
    attn_pre_bwd = add_block("attn_pre_bwd", post);
    if (split_backward) {
      attn_post_dgrad = add_block("attn_post_bwd_input", split(pre, false));
      attn_pre_dgrad = add_block("attn_pre_bwd_input", split(post, false));
    }
  }
  mlp_fwd = add_block("mlp_fwd", ctx.layer.mlp_fwd);
  attn_bwd = add_block("attn_bwd", ctx.layer.attn_bwd);
  mlp_bwd = add_block("mlp_bwd", ctx.layer.mlp_bwd);
  if (split_backward) {
    attn_dgrad = add_block("attn_bwd_input", split(ctx.layer.attn_bwd, false));
    mlp_dgrad = add_block("mlp_bwd_input", split(ctx.layer.mlp_bwd, false));
    attn_wgrad = add_block("attn_bwd_weight", split(ctx.layer.attn_bwd, true));
    mlp_wgrad = add_block("mlp_bwd_weight", split(ctx.layer.mlp_bwd, true));
  }
  if (ctx.plan.tp_comm_overlap) {
    if (ctx.plan.cp == 1) {
      ov_attn_fwd = cut_tp_overlap("attn_fwd", ctx.layer.attn_fwd, true);
      ov_attn_bwd = cut_tp_overlap("attn_bwd", ctx.layer.attn_bwd, false);
      if (split_backward) ov_attn_dgrad = cut_tp_overlap("attn_bwd_input", split(ctx.layer.attn_bwd, false), false);
    }
    if (ctx.model.moe.first_dense_layers > 0 || !ctx.model.is_moe()) {
      ov_mlp_fwd = cut_tp_overlap("mlp_fwd", ctx.layer.mlp_fwd, true);
      ov_mlp_bwd = cut_tp_overlap("mlp_bwd", ctx.layer.mlp_bwd, false);
      if (split_backward) ov_mlp_dgrad = cut_tp_overlap("mlp_bwd_input", split(ctx.layer.mlp_bwd, false), false);
    }
  }
  if (ctx.model.is_moe()) {
    const workload::MoeKernels& mk = ctx.moe;
    moe_pre_fwd = add_block("moe_router_shared", mk.pre_fwd);
    moe_experts_fwd = add_block("moe_experts", mk.experts_fwd);
    moe_post_fwd = add_block("moe_combine", mk.post_fwd);
    moe_post_bwd = add_block("moe_combine_bwd", mk.post_bwd);
    moe_experts_bwd = add_block("moe_experts_bwd", mk.experts_bwd);
    moe_pre_bwd = add_block("moe_router_shared_bwd", mk.pre_bwd);
    shared_overlap = ctx.plan.moe_shared_expert_overlap && ctx.plan.ep > 1 && ctx.model.moe.shared_experts > 0;
    if (shared_overlap) {
      auto part = [](const std::vector<workload::KernelSpec>& ks, bool shared) {
        std::vector<workload::KernelSpec> out;
        for (const auto& k : ks)
          if ((k.name.rfind("shared_", 0) == 0) == shared) out.push_back(k);
        return out;
      };
      moe_route_fwd = add_block("moe_router", part(mk.pre_fwd, false));
      moe_shared_fwd = add_block("moe_shared_experts", part(mk.pre_fwd, true));
      moe_route_bwd = add_block("moe_router_bwd", part(mk.pre_bwd, false));
      moe_shared_bwd = add_block("moe_shared_experts_bwd", part(mk.pre_bwd, true));
      if (split_backward) {
        moe_route_dgrad = add_block("moe_router_bwd_input", split(part(mk.pre_bwd, false), false));
        moe_shared_dgrad = add_block("moe_shared_experts_bwd_input", split(part(mk.pre_bwd, true), false));
      }
    }
    if (split_backward) {
      moe_experts_dgrad = add_block("moe_experts_bwd_input", split(mk.experts_bwd, false));
      moe_pre_dgrad = add_block("moe_router_shared_bwd_input", split(mk.pre_bwd, false));
      moe_experts_wgrad = add_block("moe_experts_bwd_weight", split(mk.experts_bwd, true));
      moe_pre_wgrad = add_block("moe_router_shared_bwd_weight", split(mk.pre_bwd, true));
    }
  }
  embed_fwd = add_block("embed_fwd", workload::embedding_fwd(ctx.model, ctx.shard));
  embed_bwd = add_block("embed_bwd", workload::embedding_bwd(ctx.model, ctx.shard));
  head_fwd = add_block("head_fwd", workload::head_fwd(ctx.model, ctx.shard));
  head_bwd = add_block("head_bwd", workload::head_bwd(ctx.model, ctx.shard));
  core_recompute = add_block("attn_core_recompute", attention_core_of(ctx.layer.attn_fwd));
  if (ctx.plan.recompute == Recompute::selective && ctx.plan.selective_recompute == SelectiveRecompute::every_other_matmul)
    layer_recompute = add_block("layer_op_recompute", workload::every_other_matmul_recompute(ctx.model, ctx.layer));
  for (int s = 0; s < ctx.plan.pp; ++s) {
    // The optimizer on the rank's shard; in an FP8 recipe then the FP8 copies of every linear
    // weight the rank holds (TE makes them on the step's first micro-batch; timed here, at the end
    // of the previous step, which puts the same work on the same rank once per step).
    std::vector<workload::KernelSpec> ks{
        workload::optimizer_step(ctx.stage_shard_params[static_cast<std::size_t>(s)], ctx.experiment.training.precision,
                                 ctx.experiment.training.optimizer)};
    for (auto& k : workload::fp8_weight_casts(ctx.memory.stages[static_cast<std::size_t>(s)].layer_params,
                                              ctx.experiment.training.precision))
      ks.push_back(std::move(k));
    optimizer.push_back(add_block(fmt::format("optimizer_stage{}", s), ks));
    if (ctx.diloco_sync) {
      const double fragment = ctx.stage_shard_params[static_cast<std::size_t>(s)] / ctx.experiment.training.diloco->fragments;
      pseudo_gradient.push_back(add_block(fmt::format("diloco_pseudo_gradient_stage{}", s), {pseudo_gradient_kernel(fragment)}));
      outer_update.push_back(
          add_block(fmt::format("diloco_outer_update_stage{}", s), {outer_update_kernel(fragment, ctx.experiment.training.precision)}));
    }
  }
}

}  // namespace inflect::plan::compiler
