#include "inflect/plan/compiler.hpp"

#include <fmt/format.h>

#include <memory>
#include <unordered_map>

#include "inflect/core/error.hpp"
#include "inflect/plan/placement.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/workload/layer_costs.hpp"

namespace inflect::plan {
namespace {

using core::Error;
using core::ErrorKind;
using workload::CollectiveKind;
using workload::GroupId;
using workload::OpId;
using workload::OpType;
using workload::ParallelDim;
using workload::Phase;
using workload::RankId;

const char* schedule_name(Schedule s) { return s == Schedule::gpipe ? "gpipe" : "1f1b"; }
const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

/// Kernels that run back to back on the compute stream between two communication points.
struct Block {
  std::vector<std::uint32_t> kernels;
};

/// Kinds of process group, for the group cache key.
enum GroupType : std::uint64_t { kTp = 1, kCp, kDp, kPpFwd, kPpBwd };

class Compiler {
 public:
  Compiler(const Experiment& e, const CompileOptions& o) : e_(e), o_(o), m_(*e.workload.model), p_(e.parallel) {}
  CompiledPlan run();

 private:
  Block add_block(const std::string& name, const std::vector<workload::KernelSpec>& ks);
  GroupId group(GroupType type, RankId r);
  GroupId group_uncached(GroupType type, RankId r);
  std::vector<RankId> members(GroupType type, RankId r) const;
  RankId base(GroupType type, RankId r) const { return members(type, r).front(); }
  std::uint32_t collective(CollectiveKind k, ParallelDim d, GroupId grp, double bytes, const char* name);
  void emit_rank(RankId r);
  void emit_forward(RankId r, int mb, Phase ph, std::vector<OpId>& frontier);
  void emit_layer_forward(RankId r, int layer, int mb, Phase ph, std::vector<OpId>& frontier);
  void emit_backward(RankId r, int mb, bool last_mb, std::vector<OpId>& frontier);
  void compute(RankId r, const Block& b, Phase ph, int layer, int mb, std::vector<OpId>& frontier);
  OpId comm(RankId r, std::uint8_t stream, std::uint32_t coll, Phase ph, int layer, int mb, std::vector<OpId>& frontier);
  void flush_bucket(RankId r, double& pending, std::vector<OpId>& frontier, std::vector<OpId>& dp_ops);

  const Experiment& e_;
  const CompileOptions& o_;
  const workload::ModelSpec& m_;
  const ParallelPlan& p_;
  workload::ExecutionGraph g_;
  int dp_ = 1;
  int mbs_ = 1;
  std::vector<int> stage_layers_;  // layers of each stage (plan::layers_per_stage)
  std::vector<int> first_layer_;   // global index of each stage's first layer
  std::unique_ptr<Mesh> mesh_;
  workload::LayerKernels lk_;
  Block attn_fwd_, mlp_fwd_, attn_bwd_, mlp_bwd_, embed_fwd_, embed_bwd_, head_fwd_, head_bwd_, core_recompute_;
  std::vector<Block> optimizer_;     // per stage
  std::vector<double> stage_params_; // parameters one rank of each stage holds
  std::unordered_map<std::uint64_t, GroupId> groups_;
  std::unordered_map<std::uint64_t, GroupId> by_rank_;
  struct CollKey {
    const char* name;
    GroupId group;
    double bytes;
    int kind, dim;
    bool operator==(const CollKey&) const = default;
  };
  struct CollKeyHash {
    std::size_t operator()(const CollKey& k) const {
      std::size_t h = std::hash<const void*>()(k.name);
      h ^= std::hash<std::uint64_t>()(k.group) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      h ^= std::hash<double>()(k.bytes) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      return h ^ static_cast<std::size_t>(k.kind * 31 + k.dim);
    }
  };
  // Collective entries, deduplicated. Names are string literals, so their addresses identify them
  // (no string hashing on a path taken once per collective op).
  std::unordered_map<CollKey, std::uint32_t, CollKeyHash> colls_;
  std::uint8_t s_compute_ = 0, s_tp_ = 0, s_cp_ = 0, s_recv_f_ = 0, s_send_f_ = 0, s_recv_b_ = 0, s_send_b_ = 0, s_dp_ = 0;
  double pp_msg_bytes_ = 0;
  double grad_bytes_ = 4;
  int dp_group_size_ = 1;
};

Block Compiler::add_block(const std::string& name, const std::vector<workload::KernelSpec>& ks) {
  Block b;
  if (ks.empty()) return b;
  if (!o_.fuse_blocks) {
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

std::vector<RankId> Compiler::members(GroupType type, RankId r) const {
  Coords c = mesh_->coords(r);
  switch (type) {
    case kTp: return mesh_->group(r, Dim::tp);
    case kCp: return mesh_->group(r, Dim::cp);
    case kDp: return mesh_->group2(r, Dim::dp, Dim::cp);
    case kPpFwd: {  // r (stage s) sends to stage s+1
      Coords n = c;
      n.pp = c.pp + 1;
      return {r, mesh_->rank(n)};
    }
    case kPpBwd: {  // r (stage s) sends to stage s-1
      Coords n = c;
      n.pp = c.pp - 1;
      return {r, mesh_->rank(n)};
    }
  }
  return {r};
}

// The group of `type` containing rank r (for PP: the pair r sends on). In symmetric fidelity a
// group also lists its mirrors: the same group of every rank the simulated rank stands for.
GroupId Compiler::group(GroupType type, RankId r) {
  // Per-(type, rank) memo first: finding the group's base rank allocates, and the compiler asks
  // for a rank's groups once per collective op (millions of times in full fidelity).
  const std::uint64_t rank_key = (static_cast<std::uint64_t>(type) << 40) | static_cast<std::uint64_t>(r);
  if (auto m = by_rank_.find(rank_key); m != by_rank_.end()) return m->second;
  const GroupId id = group_uncached(type, r);
  by_rank_[rank_key] = id;
  return id;
}

GroupId Compiler::group_uncached(GroupType type, RankId r) {
  const RankId b = (type == kPpFwd || type == kPpBwd) ? r : base(type, r);
  const std::uint64_t key = (static_cast<std::uint64_t>(type) << 40) | static_cast<std::uint64_t>(b);
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second;
  workload::Group grp;
  grp.members = members(type, r);
  if (o_.fidelity == Fidelity::symmetric) {
    // Class of r: every rank of the same stage. Enumerate the distinct groups of that class.
    const Coords c = mesh_->coords(r);
    std::vector<RankId> seen_bases;
    for (int tp = 0; tp < p_.tp; ++tp)
      for (int cp = 0; cp < p_.cp; ++cp)
        for (int dp = 0; dp < dp_; ++dp) {
          Coords x{tp, cp, c.pp, dp};
          RankId xr = mesh_->rank(x);
          std::vector<RankId> mem = members(type, xr);
          RankId xb = (type == kPpFwd || type == kPpBwd) ? xr : mem.front();
          if (xb == b) continue;
          if (type != kPpFwd && type != kPpBwd) {
            // Only the first rank of a group enumerates it.
            if (xr != xb) continue;
          }
          grp.mirrors.push_back(std::move(mem));
        }
  }
  GroupId id = g_.add_group(std::move(grp));
  groups_[key] = id;
  return id;
}

std::uint32_t Compiler::collective(CollectiveKind k, ParallelDim d, GroupId grp, double bytes, const char* name) {
  const CollKey key{name, grp, bytes, static_cast<int>(k), static_cast<int>(d)};
  if (auto it = colls_.find(key); it != colls_.end()) return it->second;
  const std::uint32_t id = g_.add_collective(workload::Collective{k, d, grp, core::Bytes(bytes), name});
  colls_[key] = id;
  return id;
}

void Compiler::compute(RankId r, const Block& b, Phase ph, int layer, int mb, std::vector<OpId>& frontier) {
  for (std::uint32_t k : b.kernels) {
    OpId id = g_.add_op(r, s_compute_, OpType::compute, k, ph, static_cast<std::int16_t>(layer),
                        static_cast<std::uint16_t>(mb), frontier);
    frontier.assign(1, id);
  }
}

OpId Compiler::comm(RankId r, std::uint8_t stream, std::uint32_t coll, Phase ph, int layer, int mb,
                    std::vector<OpId>& frontier) {
  OpId id = g_.add_op(r, stream, OpType::collective, coll, ph, static_cast<std::int16_t>(layer),
                      static_cast<std::uint16_t>(mb), frontier);
  frontier.assign(1, id);
  return id;
}

void Compiler::emit_layer_forward(RankId r, int layer, int mb, Phase ph, std::vector<OpId>& frontier) {
  const double tb = lk_.tp_boundary_bytes.value();
  const bool tp = p_.tp > 1;
  const GroupId tg = tp ? group(kTp, r) : 0;
  for (int blk = 0; blk < 2; ++blk) {
    if (tp && p_.sequence_parallel)
      comm(r, s_tp_, collective(CollectiveKind::all_gather, ParallelDim::tp, tg, tb, blk ? "tp_ag_mlp" : "tp_ag_attn"), ph,
           layer, mb, frontier);
    if (blk == 0 && p_.cp > 1)
      comm(r, s_cp_, collective(CollectiveKind::all_gather, ParallelDim::cp, group(kCp, r), lk_.cp_kv_bytes.value() * p_.cp, "cp_ag_kv"),
           ph, layer, mb, frontier);
    compute(r, blk ? mlp_fwd_ : attn_fwd_, ph, layer, mb, frontier);
    if (tp)
      comm(r, s_tp_,
           collective(p_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, ParallelDim::tp, tg, tb,
                      blk ? (p_.sequence_parallel ? "tp_rs_mlp" : "tp_ar_mlp") : (p_.sequence_parallel ? "tp_rs_attn" : "tp_ar_attn")),
           ph, layer, mb, frontier);
  }
}

void Compiler::emit_forward(RankId r, int mb, Phase ph, std::vector<OpId>& frontier) {
  const int s = mesh_->coords(r).pp;
  if (s > 0) {
    Coords prev = mesh_->coords(r);
    prev.pp -= 1;
    comm(r, s_recv_f_, collective(CollectiveKind::send_recv, ParallelDim::pp, group(kPpFwd, mesh_->rank(prev)), pp_msg_bytes_, "pp_act"),
         ph, -1, mb, frontier);
  }
  if (s == 0) compute(r, embed_fwd_, ph, -1, mb, frontier);
  const auto si = static_cast<std::size_t>(s);
  for (int l = 0; l < stage_layers_[si]; ++l) emit_layer_forward(r, first_layer_[si] + l, mb, ph, frontier);
  if (s == p_.pp - 1) compute(r, head_fwd_, ph, -1, mb, frontier);
  if (s < p_.pp - 1) {
    std::vector<OpId> f = frontier;
    comm(r, s_send_f_, collective(CollectiveKind::send_recv, ParallelDim::pp, group(kPpFwd, r), pp_msg_bytes_, "pp_act"), ph, -1, mb, f);
  }
}

void Compiler::flush_bucket(RankId r, double& pending, std::vector<OpId>& frontier, std::vector<OpId>& dp_ops) {
  if (pending <= 0 || dp_group_size_ <= 1) {
    pending = 0;
    return;
  }
  std::vector<OpId> f = frontier;
  const auto kind = p_.zero >= 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
  dp_ops.push_back(comm(r, s_dp_, collective(kind, ParallelDim::dp, group(kDp, r), pending, p_.zero >= 1 ? "dp_rs_grads" : "dp_ar_grads"),
                        Phase::backward, -1, 0, f));
  pending = 0;
}

void Compiler::emit_backward(RankId r, int mb, bool last_mb, std::vector<OpId>& frontier) {
  const int s = mesh_->coords(r).pp;
  const double tb = lk_.tp_boundary_bytes.value();
  const bool tp = p_.tp > 1;
  const GroupId tg = tp ? group(kTp, r) : 0;
  // Gradient buckets: only the last micro-batch's backward finishes the accumulated gradients.
  const bool buckets = last_mb && p_.overlap_grad_reduce;
  double pending = 0;
  std::vector<OpId> dp_ops;
  const double layer_grad = m_.layer_params() / p_.tp * grad_bytes_;
  const double embed_grad = static_cast<double>(m_.vocab * m_.hidden) / p_.tp * grad_bytes_;

  if (s < p_.pp - 1) {
    Coords c = mesh_->coords(r);
    c.pp += 1;
    comm(r, s_recv_b_, collective(CollectiveKind::send_recv, ParallelDim::pp, group(kPpBwd, mesh_->rank(c)), pp_msg_bytes_, "pp_grad"),
         Phase::backward, -1, mb, frontier);
  }
  if (s == p_.pp - 1) {
    compute(r, head_bwd_, Phase::backward, -1, mb, frontier);
    pending += embed_grad;
  }
  const auto si = static_cast<std::size_t>(s);
  for (int l = stage_layers_[si] - 1; l >= 0; --l) {
    const int layer = first_layer_[si] + l;
    if (p_.recompute == Recompute::full) emit_layer_forward(r, layer, mb, Phase::recompute, frontier);
    for (int blk = 1; blk >= 0; --blk) {
      if (tp && p_.sequence_parallel)
        comm(r, s_tp_, collective(CollectiveKind::all_gather, ParallelDim::tp, tg, tb, blk ? "tp_ag_mlp_grad" : "tp_ag_attn_grad"),
             Phase::backward, layer, mb, frontier);
      if (blk == 0 && p_.recompute == Recompute::selective) compute(r, core_recompute_, Phase::recompute, layer, mb, frontier);
      compute(r, blk ? mlp_bwd_ : attn_bwd_, Phase::backward, layer, mb, frontier);
      if (tp)
        comm(r, s_tp_,
             collective(p_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, ParallelDim::tp, tg, tb,
                        blk ? (p_.sequence_parallel ? "tp_rs_mlp_grad" : "tp_ar_mlp_grad")
                            : (p_.sequence_parallel ? "tp_rs_attn_grad" : "tp_ar_attn_grad")),
             Phase::backward, layer, mb, frontier);
      if (blk == 0 && p_.cp > 1)
        comm(r, s_cp_, collective(CollectiveKind::reduce_scatter, ParallelDim::cp, group(kCp, r), lk_.cp_kv_bytes.value() * p_.cp, "cp_rs_dkv"),
             Phase::backward, layer, mb, frontier);
    }
    if (buckets) {
      pending += layer_grad;
      if (pending >= p_.grad_bucket_bytes.value()) flush_bucket(r, pending, frontier, dp_ops);
    }
  }
  if (s == 0) {
    compute(r, embed_bwd_, Phase::backward, -1, mb, frontier);
    pending += embed_grad;
  }
  if (s > 0) {
    std::vector<OpId> f = frontier;
    comm(r, s_send_b_, collective(CollectiveKind::send_recv, ParallelDim::pp, group(kPpBwd, r), pp_msg_bytes_, "pp_grad"), Phase::backward, -1, mb, f);
  }
  if (!last_mb) return;
  if (!buckets) {
    // No overlap: one reduction of all gradients after the backward.
    pending = stage_params_[static_cast<std::size_t>(s)] * grad_bytes_;
  }
  flush_bucket(r, pending, frontier, dp_ops);
  if (!dp_ops.empty()) frontier.assign(1, dp_ops.back());  // the dp stream runs in order: the last implies all
  compute(r, optimizer_[static_cast<std::size_t>(s)], Phase::optimizer, -1, 0, frontier);
  if (p_.zero >= 1 && dp_group_size_ > 1) {
    const double param_bytes = stage_params_[static_cast<std::size_t>(s)] * core::bytes_per_element(e_.training.precision);
    comm(r, s_dp_, collective(CollectiveKind::all_gather, ParallelDim::dp, group(kDp, r), param_bytes, "dp_ag_params"), Phase::optimizer, -1, 0,
         frontier);
  }
}

void Compiler::emit_rank(RankId r) {
  const int s = mesh_->coords(r).pp;
  std::vector<OpId> frontier;
  for (const auto& st : stage_schedule(p_.schedule, s, p_.pp, mbs_)) {
    if (st.kind == StepKind::forward) emit_forward(r, st.micro_batch, Phase::forward, frontier);
    else emit_backward(r, st.micro_batch, st.micro_batch == mbs_ - 1, frontier);
  }
}

CompiledPlan Compiler::run() {
  check_plan(e_);
  dp_ = derive_dp(e_);
  mbs_ = static_cast<int>(e_.training.global_batch / (static_cast<std::int64_t>(dp_) * e_.training.micro_batch));
  stage_layers_ = layers_per_stage(m_, p_.pp);
  for (int n = 0, s = 0; s < p_.pp; n += stage_layers_[static_cast<std::size_t>(s)], ++s) first_layer_.push_back(n);
  mesh_ = std::make_unique<Mesh>(p_, dp_);
  dp_group_size_ = dp_ * p_.cp;
  grad_bytes_ = grad_bytes_per_param(e_.training.precision);

  const workload::ShardShape shard = shard_shape(e_);
  lk_ = workload::transformer_layer(m_, shard);
  pp_msg_bytes_ = static_cast<double>(e_.training.micro_batch * e_.training.seq_len / p_.cp * m_.hidden) *
                  core::bytes_per_element(e_.training.precision) / (p_.sequence_parallel ? p_.tp : 1);

  s_compute_ = g_.stream("compute");
  s_tp_ = g_.stream("tp");
  if (p_.cp > 1) s_cp_ = g_.stream("cp");
  if (p_.pp > 1) {
    s_recv_f_ = g_.stream("pp_recv_act");
    s_send_f_ = g_.stream("pp_send_act");
    s_recv_b_ = g_.stream("pp_recv_grad");
    s_send_b_ = g_.stream("pp_send_grad");
  }
  s_dp_ = g_.stream("dp");

  attn_fwd_ = add_block("attn_fwd", lk_.attn_fwd);
  mlp_fwd_ = add_block("mlp_fwd", lk_.mlp_fwd);
  attn_bwd_ = add_block("attn_bwd", lk_.attn_bwd);
  mlp_bwd_ = add_block("mlp_bwd", lk_.mlp_bwd);
  embed_fwd_ = add_block("embed_fwd", workload::embedding_fwd(m_, shard));
  embed_bwd_ = add_block("embed_bwd", workload::embedding_bwd(m_, shard));
  head_fwd_ = add_block("head_fwd", workload::head_fwd(m_, shard));
  head_bwd_ = add_block("head_bwd", workload::head_bwd(m_, shard));
  {
    std::vector<workload::KernelSpec> core;
    for (const auto& k : lk_.attn_fwd)
      if (k.cost.cls == core::KernelClass::attention) core.push_back(k);
    core_recompute_ = add_block("attn_core_recompute", core);
  }
  MemoryEstimate mem = estimate_memory(e_, dp_);
  for (int s = 0; s < p_.pp; ++s) {
    double params = mem.stages[static_cast<std::size_t>(s)].params;
    stage_params_.push_back(params);
    double shard_params = p_.zero >= 1 ? params / dp_group_size_ : params;
    optimizer_.push_back(add_block(fmt::format("optimizer_stage{}", s), {workload::optimizer_step(shard_params, e_.training.precision)}));
  }

  std::vector<RankId> sim;
  std::vector<std::uint32_t> reps;
  if (o_.fidelity == Fidelity::full) {
    for (int r = 0; r < mesh_->ranks(); ++r) sim.push_back(r);
    reps.assign(sim.size(), 1);
  } else {
    for (int s = 0; s < p_.pp; ++s) sim.push_back(mesh_->rank(Coords{0, 0, s, 0}));
    reps.assign(sim.size(), static_cast<std::uint32_t>(p_.tp * p_.cp * dp_));
  }
  g_.set_ranks(mesh_->ranks(), sim, reps);
  for (std::size_t i = 0; i < sim.size(); ++i) {
    emit_rank(sim[i]);
    if (i == 0 && sim.size() > 1) {
      // Ranks of different stages differ only a little in size: size the arrays from the first,
      // with headroom, instead of regrowing them (tens of millions of ops in full fidelity).
      const double n = static_cast<double>(sim.size()) * 1.1;
      g_.reserve(static_cast<std::size_t>(static_cast<double>(g_.ops().size()) * n),
                 static_cast<std::size_t>(static_cast<double>(g_.dep_storage().size()) * n));
    }
  }

  CompiledPlan out;
  out.dp = dp_;
  out.micro_batches = mbs_;
  out.tokens_per_step = static_cast<double>(e_.training.global_batch * e_.training.seq_len);
  out.model_flops_per_step = workload::model_flops_per_token(m_, e_.training.seq_len) * out.tokens_per_step;
  out.summary = fmt::format("tp{} pp{} dp{} cp{}{} zero{} {} recompute={} mb{} m={}", p_.tp, p_.pp, dp_, p_.cp,
                            p_.sequence_parallel ? " sp" : "", p_.zero, schedule_name(p_.schedule), recompute_name(p_.recompute),
                            e_.training.micro_batch, mbs_);
  g_.name = e_.name;
  g_.meta()["model_flops_per_step"] = out.model_flops_per_step;
  g_.meta()["tokens_per_step"] = out.tokens_per_step;
  g_.meta()["memory_peak_bytes"] = mem.peak.value();
  g_.meta()["micro_batches"] = mbs_;
  out.memory = std::move(mem);
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
  if (m.layers % p.pp != 0) fail("parallel.pp", fmt::format("layers ({}) are not divisible by pp ({})", m.layers, p.pp));
  const auto& t = e.training;
  if (t.micro_batch < 1 || t.global_batch < 1) fail("training", "global_batch and micro_batch must be >= 1");
  if (t.global_batch % (static_cast<std::int64_t>(dp) * t.micro_batch) != 0)
    fail("training.global_batch", fmt::format("global_batch ({}) is not divisible by dp*micro_batch ({}*{} = {})", t.global_batch, dp,
                                              t.micro_batch, static_cast<std::int64_t>(dp) * t.micro_batch));
  if (t.seq_len % p.cp != 0) fail("training.seq_len", fmt::format("seq_len ({}) is not divisible by cp ({})", t.seq_len, p.cp));
  if (p.sequence_parallel && (t.seq_len / p.cp) % p.tp != 0)
    fail("parallel.sequence_parallel", fmt::format("sequence parallelism needs seq_len/cp ({}) divisible by tp ({})", t.seq_len / p.cp, p.tp));
  if (p.zero < 0 || p.zero > 1) fail("parallel.zero", fmt::format("zero: {} is not supported; allowed: 0, 1", p.zero));
  if (static_cast<std::int64_t>(e.training.global_batch / (static_cast<std::int64_t>(dp) * t.micro_batch)) > 65535)
    fail("training.global_batch", "more than 65535 micro-batches per step");
}

CompiledPlan compile(const Experiment& e, const CompileOptions& options) {
  Compiler c(e, options);
  return c.run();
}

}  // namespace inflect::plan
