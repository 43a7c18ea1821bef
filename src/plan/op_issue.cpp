#include "plan/op_issue.hpp"

namespace inflect::plan::compiler {

using workload::OpId;
using workload::OpType;
using workload::ParallelDim;
using workload::RankId;

void OpIssuer::start_rank() { has_dp_ = has_outer_ = false; }

std::optional<OpId> OpIssuer::last_dp_op() const {
  if (!has_dp_) return std::nullopt;
  return last_dp_;
}

std::optional<OpId> OpIssuer::last_outer_op() const {
  if (!has_outer_) return std::nullopt;
  return last_outer_;
}

OpId OpIssuer::issue(RankId r, const PendingOp& op, const std::vector<OpId>& deps) {
  const OpId id = g_.add_op(r, op.stream, op.type, op.payload, op.phase, op.layer, op.micro_batch, deps);
  if (op.type == OpType::collective && op.stream == streams_.dp) {
    last_dp_ = id;
    has_dp_ = true;
  }
  if (ctx_.diloco_sync && op.type == OpType::collective && op.stream == streams_.diloco_outer) {
    last_outer_ = id;
    has_outer_ = true;
  }
  return id;
}

// Issues op `i` of a step on its chain `chain` (plus the earlier op it waits for, by position in
// `ids`), records its id, and extends the chain unless it is a side op.
void OpIssuer::issue_chained(RankId r, const StepOps& ops, std::size_t i, std::vector<OpId>& chain, std::vector<OpId>& ids) {
  const PendingOp& op = ops[i];
  if (op.wait >= 0) {
    deps_.assign(chain.begin(), chain.end());
    deps_.push_back(ids[static_cast<std::size_t>(op.wait)]);
    ids[i] = issue(r, op, deps_);
  } else {
    ids[i] = issue(r, op, chain);
  }
  if (!op.side) chain.assign(1, ids[i]);
}

// Merges collectives that follow one another back to back into one op (Collective::then): two
// adjacent collectives of a step on one stream and group, the second depending only on the first
// (the chain) and nothing else waiting for the first. The second starts the instant the first
// ends (every member's stream reaches it then, and nothing else runs in between), so one op
// running both in order is the same timing, as fusing a block's kernels is; a sequence-parallel
// step's reduce-scatter and next all-gather become one op (a third of a TP-heavy graph's ops).
// Only groups within a pipeline stage (not PP pairs or DualPipe mirrors), whose members all build
// the same steps and so fuse alike (the engine refuses a call that other members made
// differently). The op keeps the first's layer and phase (a backward's last reduce-scatter fuses
// with the next layer's recomputed all-gather); both are labels only.
void OpIssuer::fuse_collectives(StepOps& ops) {
  if (!ctx_.options.fuse_blocks || !ctx_.options.fuse_collectives || ops.size() < 2) return;
  waited_.assign(ops.size(), 0);
  for (const PendingOp& op : ops)
    if (op.wait >= 0) waited_[static_cast<std::size_t>(op.wait)] = 1;
  moved_to_.resize(ops.size());
  const auto& colls = g_.collectives();
  std::size_t out = 0, last = 0;  // `last`: the original position of the last op merged into ops[out - 1]
  for (std::size_t i = 0; i < ops.size(); ++i) {
    PendingOp op = ops[i];
    if (op.wait >= 0) op.wait = static_cast<std::int32_t>(moved_to_[static_cast<std::size_t>(op.wait)]);
    if (out > 0) {
      PendingOp& prev = ops[out - 1];
      if (prev.type == OpType::collective && op.type == OpType::collective && !prev.side && !op.side && op.wait < 0 &&
          !waited_[last] && prev.stream == op.stream && prev.micro_batch == op.micro_batch) {
        const workload::Collective& a = colls[prev.payload];
        const workload::Collective& b = colls[op.payload];
        if (a.group == b.group && a.dim == b.dim && a.dim != ParallelDim::pp && b.then.empty()) {
          prev.payload = groups_.fused(prev.payload, op.payload);
          moved_to_[i] = out - 1;
          last = i;
          continue;
        }
      }
    }
    moved_to_[i] = out;
    last = i;
    ops[out++] = op;
  }
  ops.resize(out);
}

// Ops of one step in order: each depends on the previous op of the chain; side ops hang off it.
void OpIssuer::issue_step(RankId r, const StepOps& ops, std::vector<OpId>& frontier) {
  ids_a_.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) issue_chained(r, ops, i, frontier, ids_a_);
}

// Two steps overlapped, as DualPipe's overlapped_forward_backward runs them: their compute ops
// alternate on the compute stream, each step's communication depends only on its own chain, so
// one step's communication runs while the other computes.
void OpIssuer::issue_pair(RankId r, const StepOps& a, const StepOps& b, std::vector<OpId>& frontier) {
  std::vector<OpId> fa = frontier, fb = frontier;
  std::size_t ia = 0, ib = 0;
  ids_a_.resize(a.size());
  ids_b_.resize(b.size());
  auto run = [&](const StepOps& ops, std::size_t& i, std::vector<OpId>& f, std::vector<OpId>& ids) {
    while (i < ops.size()) {
      issue_chained(r, ops, i, f, ids);
      ++i;
      // After a block (a run of compute ops, one op when fused), hand the compute stream over.
      if (ops[i - 1].type == OpType::compute && (i == ops.size() || ops[i].type != OpType::compute)) break;
    }
  };
  while (ia < a.size() || ib < b.size()) {
    run(a, ia, fa, ids_a_);
    run(b, ib, fb, ids_b_);
  }
  frontier = fa;
  if (fb != fa) frontier.insert(frontier.end(), fb.begin(), fb.end());
}

}  // namespace inflect::plan::compiler
