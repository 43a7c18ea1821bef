#pragma once
// Adds a step's pending ops to the graph with their dependencies: a plain step in order (a chain,
// side ops hanging off it, waits on earlier ops of the step), a DualPipe pair woven block by
// block, and before either, collectives that run back to back on one group fused into one op.
// Separate because it is the one place ops enter the graph and dependencies are decided; what the
// ops are is decided elsewhere (steps, data parallelism).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "inflect/workload/exec_graph.hpp"
#include "plan/group_table.hpp"
#include "plan/pending_ops.hpp"
#include "plan/plan_context.hpp"
#include "plan/streams.hpp"

namespace inflect::plan::compiler {

class OpIssuer {
 public:
  OpIssuer(const PlanContext& ctx, workload::ExecutionGraph& g, const Streams& streams, GroupTable& groups)
      : ctx_(ctx), g_(g), streams_(streams), groups_(groups) {}

  /// Before a rank's first step: forgets the previous rank's last DP and outer ops.
  void start_rank();
  /// Fuses collectives that run back to back in `ops` (CompileOptions::fuse_collectives).
  void fuse_collectives(StepOps& ops);
  /// Adds a step's ops after `frontier` (the ops the step waits for); leaves in it the step's end.
  void issue_step(workload::RankId r, const StepOps& ops, std::vector<workload::OpId>& frontier);
  /// Adds two steps overlapped (DualPipe's forward-and-backward pairs), both after `frontier`.
  void issue_pair(workload::RankId r, const StepOps& a, const StepOps& b, std::vector<workload::OpId>& frontier);
  /// The rank's last op on the dp stream so far, if any (the optimizer waits for it).
  std::optional<workload::OpId> last_dp_op() const;
  /// The rank's last DiLoCo outer collective so far, if any (a streamed fragment's outer update
  /// waits for it).
  std::optional<workload::OpId> last_outer_op() const;

 private:
  workload::OpId issue(workload::RankId r, const PendingOp& op, const std::vector<workload::OpId>& deps);
  void issue_chained(workload::RankId r, const StepOps& ops, std::size_t i, std::vector<workload::OpId>& chain,
                     std::vector<workload::OpId>& ids);

  const PlanContext& ctx_;
  workload::ExecutionGraph& g_;
  const Streams& streams_;
  GroupTable& groups_;
  workload::OpId last_dp_ = 0, last_outer_ = 0;
  bool has_dp_ = false, has_outer_ = false;
  std::vector<workload::OpId> ids_a_, ids_b_;  // op ids of the step(s) being issued, by position
  std::vector<workload::OpId> deps_;           // scratch: a chain plus the op it waits for
  // fuse_collectives' scratch.
  std::vector<char> waited_;
  std::vector<std::size_t> moved_to_;
};

}  // namespace inflect::plan::compiler
