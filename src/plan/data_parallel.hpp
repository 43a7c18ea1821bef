#pragma once
// Data parallelism's ops in a rank's steps: gradient buckets (filled as backward and W steps
// complete gradients, reduced on the dp stream as each fills; hybrid sharding's replica
// all-reduce behind each), ZeRO-3's per-layer parameter gathers on dp_gather, and the step's
// tail (the reduction without overlap; DualPipe's copies summed, the optimizer and ZeRO-1/2's
// parameter all-gather; a DiLoCo sync step's outer synchronisation). Separate because it is the
// one part that keeps state across a rank's steps (the bytes waiting for a bucket) and the ZeRO
// stage decides all of it, not the layer.
#include <cstdint>
#include <vector>

#include "inflect/workload/exec_graph.hpp"
#include "plan/group_table.hpp"
#include "plan/kernel_blocks.hpp"
#include "plan/pending_ops.hpp"
#include "plan/plan_context.hpp"
#include "plan/streams.hpp"

namespace inflect::plan::compiler {

class DataParallelOps {
 public:
  DataParallelOps(const PlanContext& ctx, const Streams& streams, const KernelBlocks& blocks, GroupTable& groups)
      : ctx_(ctx), streams_(streams), blocks_(blocks), groups_(groups) {}

  /// Before a rank's first step: no gradients wait for a bucket.
  void start_rank();
  /// Reduces the gradients of `chunk` waiting for a bucket (side ops of the step).
  void flush_bucket(workload::RankId r, int chunk, StepOps& out);
  /// Adds gradients of `chunk` to its bucket; flushes it once it is full.
  void add_grads(workload::RankId r, int chunk, double dense_bytes, double expert_bytes, bool last, StepOps& out);
  /// Adds one layer's gradients (and with ZeRO-3 reduces them at once).
  void layer_grads(workload::RankId r, int chunk, int layer, bool last, StepOps& out);
  /// ZeRO-3: gathers one layer's parameters; returns the position in `out` the layer waits on.
  int gather_params(workload::RankId r, int layer, int mb, workload::Phase ph, StepOps& out);
  /// The step's tail, first part: the reduction of every gradient when it did not overlap.
  void reduce_without_overlap(workload::RankId r, int stage, StepOps& out);
  /// The step's tail, after the last DP op: the optimizer and what goes around it (in a DiLoCo
  /// sync step, the outer sync or a streamed fragment's outer update after the optimizer).
  void optimizer_step(workload::RankId r, int stage, StepOps& out);
  /// A DiLoCo sync step with fragments > 1, before its first step: the fragment's pseudo-gradient,
  /// then its all-reduce across workers as a side op on its own stream (overlapped with the step).
  void fragment_start(workload::RankId r, int stage, StepOps& out);

 private:
  /// DiLoCo's outer collective of one fragment of the rank's optimizer shard (plan/diloco.hpp).
  std::uint32_t outer_collective(workload::RankId r, int stage);

  const PlanContext& ctx_;
  const Streams& streams_;
  const KernelBlocks& blocks_;
  GroupTable& groups_;
  // Per rank while emitting: gradient bytes waiting for a bucket, by chunk.
  std::vector<double> pending_, pending_experts_;
};

}  // namespace inflect::plan::compiler
