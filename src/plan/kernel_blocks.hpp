#pragma once
// The kernels of a rank's steps, cut once into blocks at the points where communication goes
// (Block: kernels back to back on the compute stream between two communication points) and
// added to the graph's kernel table before any rank is built: the dense blocks, their cuts for
// context parallelism, TP overlap and zero-bubble input/weight splits, the MoE pieces around the
// EP all-to-alls, embedding, head, and each stage's optimizer. Separate because cutting kernels
// is done once per compile, while the steps that place the blocks run for every rank; the kernel
// ids the steps read are fixed here, in one order.
#include <cstdint>
#include <vector>

#include "inflect/workload/exec_graph.hpp"
#include "plan/plan_context.hpp"

namespace inflect::plan::compiler {

/// Kernels that run back to back on the compute stream between two communication points.
struct Block {
  std::vector<std::uint32_t> kernels;
};

/// A TP block cut around the GEMMs Transformer Engine overlaps with the block's sequence-parallel
/// collectives (`parallel.tp_comm_overlap`). Forward: pre, then the GEMM that reads the gathered
/// input in tp row slices pipelined with a ring exchange of the input shards (TE's
/// "ring_exchange"), mid, the GEMM that writes the block output in kTeRsSplits row slices, each
/// slice's reduce-scatter running while the next slice computes (TE's "pipeline"), post.
/// Backward: pre, the first input-gradient GEMM in tp slices behind the ring exchange of the
/// output gradient, mid (up to the last input-gradient GEMM), the input gradient's
/// reduce-scatter running beside the weight-gradient GEMM `beside` (TE's "bulk"), post.
struct TpOverlapBlock {
  Block pre, gather_slice, mid, scatter_slice, beside, post;
};
/// Row slices of TE's pipelined GEMM + reduce-scatter: its default num_splits for the "pipeline"
/// method (transformer_engine/pytorch/module/base.py, get_default_config); ring exchange uses tp.
constexpr int kTeRsSplits = 4;

/// Every block the steps use, by what it computes. Blocks a plan does not need stay empty.
struct KernelBlocks {
  KernelBlocks(const PlanContext& ctx, workload::ExecutionGraph& g);

  Block attn_fwd, mlp_fwd, attn_bwd, mlp_bwd, embed_fwd, embed_bwd, head_fwd, head_bwd, core_recompute;
  /// torchtitan's op-level selective recompute of a dense layer (parallel.selective_recompute).
  Block layer_recompute;
  /// The attention core uncut, for context parallelism by all-gather (parallel.cp_comm).
  Block attn_core_whole_fwd, attn_core_whole_bwd;
  Block attn_dgrad, mlp_dgrad, attn_wgrad, mlp_wgrad;  // backward split for zero-bubble W steps
  // Context parallelism: the attention block around its core, and one ring step of the core (1/cp).
  Block attn_pre_fwd, attn_ring_fwd, attn_post_fwd, attn_post_bwd, attn_ring_bwd, attn_pre_bwd;
  Block attn_post_dgrad, attn_pre_dgrad;
  // Mixture-of-experts MLP pieces around the EP all-to-alls (workload::MoeKernels), and their
  // input-gradient / weight-gradient split.
  Block moe_pre_fwd, moe_experts_fwd, moe_post_fwd, moe_post_bwd, moe_experts_bwd, moe_pre_bwd;
  Block moe_experts_dgrad, moe_pre_dgrad, moe_experts_wgrad, moe_pre_wgrad;
  // With moe_shared_expert_overlap: the pre piece without the shared experts, and those alone.
  Block moe_route_fwd, moe_shared_fwd, moe_route_bwd, moe_shared_bwd, moe_route_dgrad, moe_shared_dgrad;
  bool shared_overlap = false;  // moe_shared_expert_overlap applies (ep > 1, shared experts): the route and shared pieces exist
  // parallel.tp_comm_overlap: the dense blocks cut for it (forward; backward; input-gradient only).
  TpOverlapBlock ov_attn_fwd, ov_mlp_fwd, ov_attn_bwd, ov_mlp_bwd, ov_attn_dgrad, ov_mlp_dgrad;
  std::vector<Block> optimizer;  // per stage
  /// DiLoCo's sync step (PlanContext::diloco_sync), per stage, on one fragment of the rank's
  /// optimizer shard: the pseudo-gradient and the outer optimizer (plan/diloco.hpp).
  std::vector<Block> pseudo_gradient, outer_update;
};

}  // namespace inflect::plan::compiler
