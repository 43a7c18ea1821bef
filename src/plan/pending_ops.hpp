#pragma once
// A step's ops as they are decided, before they are added to the graph (PendingOp, StepOps), and
// the two ways ops are appended to a step: a block's kernels on the compute stream, a collective
// on its stream. Separate because the parts that decide ops (steps, data parallelism) and the
// part that adds them (op_issue) share this one form and nothing else.
#include <cstdint>
#include <vector>

#include "inflect/workload/exec_graph.hpp"
#include "plan/kernel_blocks.hpp"

namespace inflect::plan::compiler {

/// An op decided on but not yet added to the graph. A step's ops are collected first so that two
/// steps can be woven together op by op (DualPipe's overlapped forward-and-backward pairs).
struct PendingOp {
  workload::OpType type = workload::OpType::compute;
  std::uint8_t stream = 0;
  std::uint32_t payload = 0;
  workload::Phase phase = workload::Phase::forward;
  std::int16_t layer = -1;
  std::uint16_t micro_batch = 0;
  bool side = false;  // depends on the step's chain but does not extend it (sends, DP buckets)
  std::int32_t wait = -1;  // also waits for this earlier op of the same step (a prefetched gather)
};
using StepOps = std::vector<PendingOp>;

/// Appends the block's kernels as compute ops on `stream` (the compute stream).
inline void compute(std::uint8_t stream, const Block& b, workload::Phase ph, int layer, int mb, StepOps& out) {
  for (std::uint32_t k : b.kernels)
    out.push_back({workload::OpType::compute, stream, k, ph, static_cast<std::int16_t>(layer), static_cast<std::uint16_t>(mb), false});
}

/// Appends collective `coll` on `stream`; a side op depends on the step's chain without extending it.
inline void comm(std::uint8_t stream, std::uint32_t coll, workload::Phase ph, int layer, int mb, StepOps& out, bool side = false) {
  out.push_back({workload::OpType::collective, stream, coll, ph, static_cast<std::int16_t>(layer), static_cast<std::uint16_t>(mb), side});
}

}  // namespace inflect::plan::compiler
