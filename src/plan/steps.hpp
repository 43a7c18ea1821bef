#pragma once
// The ops of one pipeline step of a chunk, as pending ops: a forward (receive, embedding, each
// layer's blocks with their TP, CP, EP and TP-overlap communication, head, send), a backward
// (the same in reverse, with recomputation and, for zero-bubble B steps, input gradients only) or
// a zero-bubble W step (weight gradients). Separate because this is what a Megatron-style layer
// does on one rank; gradient buckets and ZeRO gathers it asks of DataParallelOps, and how the ops
// become graph ops and dependencies is OpIssuer's.
#include <cstdint>

#include "inflect/workload/exec_graph.hpp"
#include "plan/data_parallel.hpp"
#include "plan/group_table.hpp"
#include "plan/kernel_blocks.hpp"
#include "plan/pending_ops.hpp"
#include "plan/plan_context.hpp"
#include "plan/streams.hpp"

namespace inflect::plan::compiler {

class StepBuilder {
 public:
  StepBuilder(const PlanContext& ctx, const Streams& streams, const KernelBlocks& blocks, GroupTable& groups, DataParallelOps& dp_ops)
      : ctx_(ctx), streams_(streams), blocks_(blocks), groups_(groups), dp_ops_(dp_ops) {}

  /// Forward of micro-batch `mb` through `chunk` on rank r.
  void forward_ops(workload::RankId r, int mb, int chunk, StepOps& out);
  /// Backward of `mb` through `chunk`: with weight gradients (B), or input gradients only (a
  /// zero-bubble B step). `last`: the step completes the chunk's gradients (its buckets flush).
  void backward_ops(workload::RankId r, int mb, int chunk, bool with_weights, bool last, StepOps& out);
  /// A zero-bubble W step: the weight gradients of `mb` through `chunk`.
  void weight_ops(workload::RankId r, int mb, int chunk, bool last, StepOps& out);

 private:
  void layer_forward_ops(workload::RankId r, int layer, int mb, workload::Phase ph, StepOps& out);
  void moe_forward_ops(workload::RankId r, int layer, int mb, workload::Phase ph, StepOps& out);
  void moe_backward_ops(workload::RankId r, int layer, int mb, bool with_weights, StepOps& out);
  double cp_gathered_kv_bytes() const;
  void ring_ops(workload::RankId r, Dim dim, int layer, int mb, workload::Phase ph, const Block& step, double bytes, const char* name,
                StepOps& out);
  bool tp_overlapped(int blk, int layer) const;
  void overlapped_forward_block(workload::RankId r, int blk, int layer, int mb, workload::Phase ph, StepOps& out);
  void overlapped_backward_block(workload::RankId r, int blk, int layer, int mb, bool with_weights, StepOps& out);

  const PlanContext& ctx_;
  const Streams& streams_;
  const KernelBlocks& blocks_;
  GroupTable& groups_;
  DataParallelOps& dp_ops_;
};

}  // namespace inflect::plan::compiler
