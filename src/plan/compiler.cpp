#include "inflect/plan/compiler.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/plan/placement.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/workload/layer_costs.hpp"
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
// "tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1 m=192" (CompiledPlan::summary).
std::string plan_summary(const PlanContext& ctx) {
  const ParallelPlan& p = ctx.plan;
  std::string sharding = p.fsdp ? (p.reshard_after_forward ? "fsdp" : "fsdp(no-reshard)") : fmt::format("zero{}", p.zero);
  if (ctx.replicas > 1) sharding += fmt::format(" hybrid{}x{}", ctx.dp_group_size, ctx.replicas);
  if (p.ep > 1) sharding = fmt::format("ep{} ", p.ep) + sharding;
  std::string summary = fmt::format("tp{} pp{} dp{} cp{}{} {} {} recompute={} mb{} m={}", p.tp, p.pp, ctx.dp, p.cp,
                                    p.sequence_parallel ? (p.tp_comm_overlap ? " sp tp-overlap" : " sp") : "", sharding,
                                    schedule_label(p.schedule, p.virtual_stages), workload::recompute_name(p.recompute),
                                    ctx.experiment.training.micro_batch, ctx.micro_batches);
  if (!p.layers_per_stage.empty()) {
    std::vector<std::string> counts;
    for (int n : p.layers_per_stage) counts.push_back(std::to_string(n));
    summary += " layers=";
    summary += core::join(counts, "/");
  }
  return summary;
}

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
  const int mbs_ = ctx_.micro_batches;  // per step (the graph's metadata)
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
  out.micro_batches = mbs_;
  out.tokens_per_step = static_cast<double>(ctx_.experiment.training.global_batch * ctx_.experiment.training.seq_len);
  out.model_flops_per_step = workload::model_flops_per_token(ctx_.model, ctx_.experiment.training.seq_len) * out.tokens_per_step;
  out.summary = plan_summary(ctx_);
  g_.name = ctx_.experiment.name;
  g_.meta()["model_flops_per_step"] = out.model_flops_per_step;
  g_.meta()["tokens_per_step"] = out.tokens_per_step;
  g_.meta()["memory_peak_bytes"] = mem.peak.value();
  g_.meta()["micro_batches"] = mbs_;
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
  const auto& p = e.parallel;
  auto fail = [&](const std::string& key, const std::string& msg) {
    core::SourceLocation loc;
    loc.file = e.file;
    loc.key_path = key;
    throw Error(ErrorKind::input, msg, loc);
  };
  if (!e.workload.model) fail("model", "the compiler needs a model (a trace replays without compiling)");
  const auto& m = *e.workload.model;
  if (p.tp < 1 || p.pp < 1 || p.cp < 1 || p.dp < 0) fail("parallel", "tp, pp, cp must be >= 1 and dp >= 0");
  const int devices = e.cluster.devices();
  const int dp = derive_dp(e);
  if (dp < 1 || static_cast<long long>(p.tp) * p.pp * p.cp * dp != devices)
    fail("parallel", fmt::format("tp*pp*cp*dp = {}*{}*{}*{} = {} but the cluster has {} devices", p.tp, p.pp, p.cp, dp,
                                 static_cast<long long>(p.tp) * p.pp * p.cp * dp, devices));
  if (m.heads % p.tp != 0) fail("parallel.tp", fmt::format("heads ({}) are not divisible by tp ({})", m.heads, p.tp));
  if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
    fail("parallel.tp", fmt::format("kv_heads ({}) and tp ({}) do not divide one another", m.kv_heads, p.tp));
  if (p.layers_per_stage.empty() && m.layers % p.pp != 0)
    fail("parallel.pp", fmt::format("layers ({}) are not divisible by pp ({})", m.layers, p.pp));
  const auto& t = e.training;
  if (t.micro_batch < 1 || t.global_batch < 1) fail("training", "global_batch and micro_batch must be >= 1");
  if (t.global_batch % (static_cast<std::int64_t>(dp) * t.micro_batch) != 0)
    fail("training.global_batch", fmt::format("global_batch ({}) is not divisible by dp*micro_batch ({}*{} = {})", t.global_batch, dp,
                                              t.micro_batch, static_cast<std::int64_t>(dp) * t.micro_batch));
  if (t.seq_len % p.cp != 0) fail("training.seq_len", fmt::format("seq_len ({}) is not divisible by cp ({})", t.seq_len, p.cp));
  if (p.tp_comm_overlap && (p.tp < 2 || !p.sequence_parallel))
    fail("parallel.tp_comm_overlap", fmt::format("tp_comm_overlap overlaps the sequence-parallel all-gathers and "
                                                 "reduce-scatters: it needs tp > 1 (tp is {}) and sequence_parallel: true",
                                                 p.tp));
  if (p.sequence_parallel && (t.seq_len / p.cp) % p.tp != 0)
    fail("parallel.sequence_parallel", fmt::format("sequence parallelism needs seq_len/cp ({}) divisible by tp ({})", t.seq_len / p.cp, p.tp));
  if (auto why = schedule_problem(p.schedule, schedule_shape(e, dp)); !why.empty())
    fail(p.virtual_stages != 1 && why.find("virtual_stages") != std::string::npos ? "parallel.virtual_stages" : "parallel.schedule",
         fmt::format("schedule {}: {}", schedule_name(p.schedule), why));
  if (p.schedule == Schedule::custom) {
    const ScheduleReplay replay = replay_schedule(p.schedule, schedule_shape(e, dp));
    if (!replay.valid) fail("parallel.custom_schedule", fmt::format("the custom schedule cannot run: {}", replay.problem));
  }
  if (p.ep < 1 || (p.ep > 1 && (!m.is_moe() || m.moe.experts % p.ep != 0 || dp % p.ep != 0)))
    fail("parallel.ep", fmt::format("ep={} needs an MoE model whose experts and dp ({}) it divides", p.ep, dp));
  if (p.zero < 0 || p.zero > 3) fail("parallel.zero", fmt::format("zero: {} is not supported; allowed: 0..3", p.zero));
  if (p.fsdp && p.zero != 3) fail("parallel.fsdp", "fsdp is ZeRO-3: zero must be 3 (the loader sets it)");
  if (p.shard_group < 0 || (p.shard_group > 0 && ((dp * p.cp) % p.shard_group != 0 || p.zero == 0)))
    fail("parallel.shard_group", fmt::format("shard_group ({}) must divide dp*cp ({}) and needs zero >= 1", p.shard_group, dp * p.cp));
  if (static_cast<std::int64_t>(e.training.global_batch / (static_cast<std::int64_t>(dp) * t.micro_batch)) > 65535)
    fail("training.global_batch", "more than 65535 micro-batches per step");
}

CompiledPlan compile(const Experiment& e, const CompileOptions& options) {
  check_plan(e);  // before the compiler derives anything from the plan
  Compiler c(e, options);
  return c.run();
}

}  // namespace inflect::plan
