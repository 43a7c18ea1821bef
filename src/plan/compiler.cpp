// The compiler's orchestration (semantics in compiler.hpp). The parts it builds a graph from are
// in their own files (docs/architecture.md, "The compiler (plan)"): plan_context (what every part
// reads), streams, kernel_blocks, group_table, steps, data_parallel, op_issue and stage_replay.
// check_plan, derive_dp and compile are at the end.
#include "inflect/plan/compiler.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/plan/placement.hpp"
#include "inflect/plan/plan_summary.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/plan/validate.hpp"
#include "plan/data_parallel.hpp"
#include "plan/group_table.hpp"
#include "plan/kernel_blocks.hpp"
#include "plan/op_issue.hpp"
#include "plan/pending_ops.hpp"
#include "plan/plan_context.hpp"
#include "plan/stage_replay.hpp"
#include "plan/steps.hpp"
#include "plan/streams.hpp"

namespace inflect::plan {
namespace {

using compiler::DataParallelOps;
using compiler::GroupTable;
using compiler::KernelBlocks;
using compiler::OpIssuer;
using compiler::PlanContext;
using compiler::StageReplay;
using compiler::StepBuilder;
using compiler::StepOps;
using compiler::Streams;
using core::Error;
using core::ErrorKind;
using workload::OpId;
using workload::RankId;

// Builds the execution graph. What every rank shares is made once, as the members are
// constructed in the order declared (the context; then the streams and kernel blocks, added to
// the graph before any rank's ops, as they always were; then the parts that build ranks). Each
// simulated rank is then emitted (emit_rank: its stage's schedule walked, each step's ops built by
// the StepBuilder and added by the OpIssuer, then the step's tail) or, in full fidelity, added by
// the StageReplay as a replica of its stage's first rank.
class Compiler {
 public:
  Compiler(const Experiment& e, const CompileOptions& o)
      : ctx_(e, o),
        streams_(ctx_, g_),
        blocks_(ctx_, g_),
        groups_(ctx_, g_),
        replay_(ctx_, g_, groups_),
        dp_ops_(ctx_, streams_, blocks_, groups_),
        issuer_(ctx_, g_, streams_, groups_),
        steps_(ctx_, streams_, blocks_, groups_, dp_ops_) {}
  CompiledPlan run();

 private:
  void emit_rank(RankId r);

  const PlanContext ctx_;
  workload::ExecutionGraph g_;
  const Streams streams_;
  const KernelBlocks blocks_;
  GroupTable groups_;
  StageReplay replay_;
  DataParallelOps dp_ops_;
  OpIssuer issuer_;
  StepBuilder steps_;
};

void Compiler::emit_rank(RankId r) {
  const int s = ctx_.mesh.coords(r).pp;
  const std::vector<ScheduleStep> steps = stage_schedule(ctx_.plan.schedule, s, ctx_.shape);
  // The step that completes each chunk's weight gradients: the last backward or W on it.
  std::vector<int> last_weights(static_cast<std::size_t>(ctx_.layout.chunks), -1);
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == StepKind::backward || steps[i].kind == StepKind::backward_weight)
      last_weights[static_cast<std::size_t>(steps[i].chunk)] = static_cast<int>(i);
  dp_ops_.start_rank();
  issuer_.start_rank();

  std::vector<OpId> frontier;
  StepOps a, b;
  // A streamed DiLoCo fragment's all-reduce starts with the step, beside all of it.
  const bool streamed = ctx_.diloco_sync && ctx_.experiment.training.diloco->fragments > 1;
  if (streamed) {
    dp_ops_.fragment_start(r, s, a);
    issuer_.issue_step(r, a, frontier);
  }
  auto build = [&](std::size_t i, StepOps& out) {
    out.clear();
    const auto& st = steps[i];
    const bool last = last_weights[static_cast<std::size_t>(st.chunk)] == static_cast<int>(i);
    switch (st.kind) {
      case StepKind::forward: steps_.forward_ops(r, st.micro_batch, st.chunk, out); break;
      case StepKind::backward: steps_.backward_ops(r, st.micro_batch, st.chunk, true, last, out); break;
      case StepKind::backward_input: {
        // Its head and embedding gradients are final if its W is the chunk's last.
        const int lw = last_weights[static_cast<std::size_t>(st.chunk)];
        steps_.backward_ops(r, st.micro_batch, st.chunk, false, lw >= 0 && steps[static_cast<std::size_t>(lw)].micro_batch == st.micro_batch, out);
        break;
      }
      case StepKind::backward_weight: steps_.weight_ops(r, st.micro_batch, st.chunk, last, out); break;
    }
    issuer_.fuse_collectives(out);
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    build(i, a);
    if (steps[i].overlap_next && i + 1 < steps.size()) {
      build(i + 1, b);
      issuer_.issue_pair(r, a, b, frontier);
      ++i;
    } else {
      issuer_.issue_step(r, a, frontier);
    }
  }

  // Tail: without overlap, one reduction of all gradients; then the optimizer after the last DP
  // op (the dp stream runs in order: the last implies all); with ZeRO-1/2 the parameter all-gather.
  a.clear();
  dp_ops_.reduce_without_overlap(r, s, a);
  issuer_.fuse_collectives(a);
  issuer_.issue_step(r, a, frontier);
  if (const std::optional<OpId> dp = issuer_.last_dp_op()) frontier.push_back(*dp);
  if (const std::optional<OpId> outer = issuer_.last_outer_op(); streamed && outer) frontier.push_back(*outer);
  a.clear();
  dp_ops_.optimizer_step(r, s, a);
  issuer_.fuse_collectives(a);
  issuer_.issue_step(r, a, frontier);
}

CompiledPlan Compiler::run() {
  std::vector<RankId> sim;
  std::vector<std::uint32_t> reps;
  if (ctx_.options.fidelity == Fidelity::full) {
    for (int r = 0; r < ctx_.mesh.ranks(); ++r) sim.push_back(r);
    reps.assign(sim.size(), 1);
  } else {
    for (int s = 0; s < ctx_.plan.pp; ++s) sim.push_back(ctx_.mesh.rank(Coords{0, 0, s, 0}));
    reps.assign(sim.size(), static_cast<std::uint32_t>(ctx_.plan.tp * ctx_.plan.cp * ctx_.dp));
  }
  g_.set_ranks(ctx_.mesh.ranks(), sim, reps);
  const bool replay_stages = ctx_.options.fidelity == Fidelity::full && ctx_.options.replay_stage_ranks;
  for (std::size_t i = 0; i < sim.size(); ++i) {
    // Full fidelity: a stage's later ranks replay its first rank's requests (see StageReplay).
    if (replay_stages && replay_.add_replica(sim[i])) continue;
    const bool record = replay_stages && replay_.start_recording(sim[i]);
    emit_rank(sim[i]);
    // Full fidelity: a rank whose ops copy an earlier rank's (on its own groups) is stored as a
    // replica of it, so the graph holds each class of ranks once (ExecutionGraph::end_rank).
    if (ctx_.options.fidelity == Fidelity::full) {
      g_.end_rank(sim[i]);
      if (record) replay_.finish_recording();
      continue;
    }
    if (i == 0 && sim.size() > 1) {
      // Ranks of different stages differ only a little in size: size the arrays from the first,
      // with headroom, instead of regrowing them (tens of millions of ops in full fidelity).
      const double n = static_cast<double>(sim.size()) * 1.1;
      g_.reserve(static_cast<std::size_t>(static_cast<double>(g_.ops().size()) * n),
                 static_cast<std::size_t>(static_cast<double>(g_.dep_storage().size()) * n));
    }
  }

  const MemoryEstimate& mem = ctx_.memory;
  CompiledPlan out;
  out.dp = ctx_.dp;
  out.micro_batches = ctx_.shape.micro_batches;
  out.summary = plan_label(ctx_.experiment);
  g_.name = ctx_.experiment.name;
  g_.facts() = step_facts(ctx_.experiment);
  g_.facts().memory_peak = mem.peak;
  out.memory = mem;
  out.graph = std::move(g_);
  return out;
}

}  // namespace

int derive_dp(const Experiment& e) {
  const auto& p = e.parallel;
  if (p.dp > 0) return p.dp;
  return e.cluster.devices() / (p.tp * p.pp * p.cp);
}

void check_plan(const Experiment& e) {
  core::SourceLocation loc;
  loc.file = e.file;
  if (!e.workload.model) {
    loc.key_path = "model";
    throw Error(ErrorKind::input, "the compiler needs a model (a trace replays without compiling)", loc);
  }
  const std::vector<Problem> problems = validate(e);
  if (problems.empty()) return;
  // Named at the first problem's key, as the loader would; the others follow in the message.
  loc.key_path = problems.front().key;
  std::string message = problems.front().message;
  for (std::size_t i = 1; i < problems.size(); ++i) message += fmt::format("; also {}: {}", problems[i].key, problems[i].message);
  throw Error(ErrorKind::input, message, loc);
}

CompiledPlan compile(const Experiment& e, const CompileOptions& options) {
  check_plan(e);  // before the compiler derives anything from the plan
  Compiler c(e, options);
  return c.run();
}

}  // namespace inflect::plan
