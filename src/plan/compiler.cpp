// The compiler (semantics in compiler.hpp). One Compiler per compile(): run() checks the plan,
// builds the rank-independent pieces once (kernel blocks of each layer kind, cut for CP, MoE,
// zero-bubble's split backward and TP overlap; per-stage parameters and optimizer kernels from the
// memory estimate), then emits each simulated rank (emit_rank: its stage's steps built as pending
// ops, collectives fused, issued on dependency chains) or, in full fidelity, replays a stage's
// first rank for the others. Process groups and collectives are created once and cached (group,
// collective), so ranks that ask for the same group share it. check_plan, derive_dp and compile
// are at the end.
#include "inflect/plan/compiler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <memory>
#include <unordered_map>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/plan/placement.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/plan/validate.hpp"
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


constexpr std::uint32_t kNoColl = 0xffffffffu;  // "not found" for a collective id

/// Kernels that run back to back on the compute stream between two communication points.
struct Block {
  std::vector<std::uint32_t> kernels;
};

/// An op decided on but not yet added to the graph. A step's ops are collected first so that two
/// steps can be woven together op by op (DualPipe's overlapped forward-and-backward pairs).
struct PendingOp {
  OpType type = OpType::compute;
  std::uint8_t stream = 0;
  std::uint32_t payload = 0;
  Phase phase = Phase::forward;
  std::int16_t layer = -1;
  std::uint16_t micro_batch = 0;
  bool side = false;  // depends on the step's chain but does not extend it (sends, DP buckets)
  std::int32_t wait = -1;  // also waits for this earlier op of the same step (a prefetched gather)
};
using StepOps = std::vector<PendingOp>;

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

/// Kinds of process group, for the group cache key. PP groups are one per chunk boundary and
/// direction of data (a pair: sender, receiver), so that each pairs its calls in micro-batch order.
enum GroupType : std::uint64_t { kTp = 1, kCp, kDp, kPpAct, kPpGrad, kEp, kEdp, kRep, kCpRing, kTpRing, kMirror };
/// Pairs named by their sender (a PP boundary, a TP/CP ring hop) rather than by their first member.
constexpr bool named_by_sender(GroupType t) { return t == kPpAct || t == kPpGrad || t == kCpRing || t == kTpRing; }

class Compiler {
 public:
  Compiler(const Experiment& e, const CompileOptions& o) : e_(e), o_(o), m_(*e.workload.model), p_(e.parallel) {}
  CompiledPlan run();

 private:
  Block add_block(const std::string& name, const std::vector<workload::KernelSpec>& ks);
  GroupId group(GroupType type, RankId r, int chunk = 0);
  GroupId group_uncached(GroupType type, RankId r, int chunk);
  std::vector<RankId> members(GroupType type, RankId r, int chunk) const;
  std::uint32_t collective(CollectiveKind k, ParallelDim d, GroupId grp, double bytes, const char* name);
  RankId at_stage(RankId r, int stage) const;
  bool flows_up(int chunk) const;  // does the boundary chunk -> next(chunk) carry data to rank - 1?

  void emit_rank(RankId r);
  std::uint64_t group_key(GroupType type, RankId r, int chunk) const;
  struct StageRecording;
  void finish_recording(StageRecording& rec);
  bool replay(RankId r, const StageRecording& rec);
  void forward_ops(RankId r, int mb, int chunk, StepOps& out);
  void layer_forward_ops(RankId r, int layer, int mb, Phase ph, StepOps& out);
  void backward_ops(RankId r, int mb, int chunk, bool with_weights, bool last, StepOps& out);
  void weight_ops(RankId r, int mb, int chunk, bool last, StepOps& out);
  void add_grads(RankId r, int chunk, double dense_bytes, double expert_bytes, bool last, StepOps& out);
  void layer_grads(RankId r, int chunk, int layer, bool last, StepOps& out);
  int gather_params(RankId r, int layer, int mb, Phase ph, StepOps& out);
  std::vector<RankId> dp_members(RankId r) const;
  void moe_forward_ops(RankId r, int layer, int mb, Phase ph, StepOps& out);
  void ring_ops(RankId r, Dim dim, int layer, int mb, Phase ph, const Block& step, double bytes, const char* name, StepOps& out);
  TpOverlapBlock cut_tp_overlap(const std::string& name, const std::vector<workload::KernelSpec>& ks, bool forward);
  bool tp_overlapped(int blk, int layer) const;
  void overlapped_forward_block(RankId r, int blk, int layer, int mb, Phase ph, StepOps& out);
  void overlapped_backward_block(RankId r, int blk, int layer, int mb, bool with_weights, StepOps& out);
  void moe_backward_ops(RankId r, int layer, int mb, bool with_weights, StepOps& out);
  void flush_bucket(RankId r, int chunk, StepOps& out);
  void compute(const Block& b, Phase ph, int layer, int mb, StepOps& out);
  void comm(std::uint8_t stream, std::uint32_t coll, Phase ph, int layer, int mb, StepOps& out, bool side = false);
  OpId issue(RankId r, const PendingOp& op, const std::vector<OpId>& deps);
  void issue_chained(RankId r, const StepOps& ops, std::size_t i, std::vector<OpId>& chain, std::vector<OpId>& ids);
  void issue_step(RankId r, const StepOps& ops, std::vector<OpId>& frontier);
  void fuse_collectives(StepOps& ops);
  std::uint32_t fused(std::uint32_t first, std::uint32_t next);
  void issue_pair(RankId r, const StepOps& a, const StepOps& b, std::vector<OpId>& frontier);

  const Experiment& e_;
  const CompileOptions& o_;
  const workload::ModelSpec& m_;
  const ParallelPlan& p_;
  workload::ExecutionGraph g_;
  int dp_ = 1;
  int mbs_ = 1;
  ScheduleShape shape_;
  PipelineLayout layout_;
  std::unique_ptr<Mesh> mesh_;
  workload::LayerKernels lk_;
  Block attn_fwd_, mlp_fwd_, attn_bwd_, mlp_bwd_, embed_fwd_, embed_bwd_, head_fwd_, head_bwd_, core_recompute_;
  Block attn_dgrad_, mlp_dgrad_, attn_wgrad_, mlp_wgrad_;  // backward split for zero-bubble W steps
  // Context parallelism: the attention block around its core, and one ring step of the core (1/cp).
  Block attn_pre_fwd_, attn_ring_fwd_, attn_post_fwd_, attn_post_bwd_, attn_ring_bwd_, attn_pre_bwd_;
  Block attn_post_dgrad_, attn_pre_dgrad_;
  // Mixture-of-experts MLP pieces around the EP all-to-alls (workload::MoeKernels), and their
  // input-gradient / weight-gradient split.
  Block moe_pre_fwd_, moe_experts_fwd_, moe_post_fwd_, moe_post_bwd_, moe_experts_bwd_, moe_pre_bwd_;
  Block moe_experts_dgrad_, moe_pre_dgrad_, moe_experts_wgrad_, moe_pre_wgrad_;
  // With moe_shared_expert_overlap: the pre piece without the shared experts, and those alone.
  Block moe_route_fwd_, moe_shared_fwd_, moe_route_bwd_, moe_shared_bwd_, moe_route_dgrad_, moe_shared_dgrad_;
  bool shared_overlap_ = false;
  // parallel.tp_comm_overlap: the dense blocks cut for it (forward; backward; input-gradient only).
  TpOverlapBlock ov_attn_fwd_, ov_mlp_fwd_, ov_attn_bwd_, ov_mlp_bwd_, ov_attn_dgrad_, ov_mlp_dgrad_;
  double ep_bytes_ = 0;
  int edp_group_size_ = 1;  // ranks holding the same experts: dp*cp/ep
  std::vector<double> stage_expert_params_;
  std::vector<Block> optimizer_;     // per stage
  std::vector<double> stage_params_; // parameters one rank of each stage holds
  std::vector<double> stage_shard_params_;  // ... of which it updates (its optimizer shard)
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
  std::array<std::pair<CollKey, std::uint32_t>, 8> recent_colls_{};  // see collective()
  std::size_t next_recent_coll_ = 0;
  std::uint8_t s_compute_ = 0, s_tp_ = 0, s_tp_recv_ = 0, s_cp_send_ = 0, s_cp_recv_ = 0, s_dp_ = 0, s_ep_ = 0, s_ag_ = 0;
  int replicas_ = 1;  // hybrid sharding: data-parallel replicas of each shard group
  // PP streams by what they carry and which way: activations and gradients, towards rank + 1
  // ("down") and rank - 1 ("up"); one stream per peer and kind, so a send to one peer never
  // waits behind a send to another.
  std::uint8_t s_recv_act_down_ = 0, s_send_act_down_ = 0, s_recv_grad_up_ = 0, s_send_grad_up_ = 0;
  std::uint8_t s_recv_act_up_ = 0, s_send_act_up_ = 0, s_recv_grad_down_ = 0, s_send_grad_down_ = 0;
  double pp_msg_bytes_ = 0;
  double grad_bytes_ = 4;
  int dp_group_size_ = 1;
  // Per rank while emitting: gradient bytes waiting for a bucket, by chunk; the last DP op.
  std::vector<double> pending_, pending_experts_;
  OpId last_dp_ = 0;
  bool has_dp_ = false;
  std::vector<OpId> ids_a_, ids_b_;  // op ids of the step(s) being issued, by position
  std::vector<OpId> deps_;           // scratch: a chain plus the op it waits for

  // Full fidelity, stage replay (CompileOptions::replay_stage_ranks). emit_rank depends on its
  // rank only through the rank's pipeline stage and the process groups it asks for (group(), by
  // type, chunk and a rank that is the emitting rank or one at fixed coordinate offsets from it:
  // its TP/CP ring predecessor, its peer in another stage). So each stage's first rank is
  // emitted while its requests are recorded — each group request as the offset of the asked-for
  // rank from the emitting one, each collective with the group it got — and the stage's other
  // ranks replay them from their own coordinates, in the same order, so that the same groups and
  // collectives are created with the same ids as emitting them would; they are added to the graph
  // as replicas (ExecutionGraph::add_replica) without their ops. A replay whose groups would not
  // correspond one-to-one falls back to emitting the rank.
  struct GroupAsk {
    GroupType type;
    int chunk;
    Coords offset;  // of the asked-for rank from the emitting rank, per dimension, modulo its size
    GroupId got;    // what the emitting rank got
  };
  /// A collective asked for (by its key), or two fused (by the recorded rank's ids).
  struct CollAsk {
    CollKey key{};
    std::uint32_t first = kNoColl, next = kNoColl;  // fused(first, next) when first != kNoColl
    std::uint32_t got = 0;
  };
  struct StageRecording {
    bool recorded = false;  // its first rank has been emitted
    bool usable = false;
    std::vector<GroupAsk> groups;           // distinct, in first-ask order
    std::vector<CollAsk> colls;             // distinct, in first-ask order (plain and fused share ids)
    std::uint32_t kept = 0;                 // the kept rank the stage's ranks copy
    std::vector<std::uint32_t> kept_colls;  // the emitted rank's counterparts of that rank's collectives
  };
  std::vector<StageRecording> stage_recordings_;
  StageRecording* recording_ = nullptr;
  RankId recording_rank_ = 0;
  std::unordered_map<std::uint64_t, char> recorded_groups_;
  std::unordered_map<CollKey, char, CollKeyHash> recorded_colls_;
  std::unordered_map<std::uint64_t, char> recorded_fused_;
  // Fused collectives by (first, next) (fuse_collectives), and fuse_collectives' scratch.
  std::unordered_map<std::uint64_t, std::uint32_t> fused_;
  std::vector<char> waited_;
  std::vector<std::size_t> moved_to_;
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

RankId Compiler::at_stage(RankId r, int stage) const {
  Coords c = mesh_->coords(r);
  c.pp = stage;
  return mesh_->rank(c);
}

bool Compiler::flows_up(int chunk) const {
  // The second arm of DualPipeV and DualPipe's second direction run from rank p-1 back to 0.
  return (p_.schedule == Schedule::dualpipe || p_.schedule == Schedule::dualpipev) && chunk >= p_.pp;
}

// For PP groups r is the sender: the rank holding `chunk` (activations) or the chunk after it
// (gradients); the receiver holds the other side of the boundary.
std::vector<RankId> Compiler::members(GroupType type, RankId r, int chunk) const {
  switch (type) {
    case kTp: return mesh_->group(r, Dim::tp);
    case kCp: return mesh_->group(r, Dim::cp);
    case kCpRing: {  // r and the next rank of its context-parallel ring
      Coords c = mesh_->coords(r);
      c.cp = (c.cp + 1) % p_.cp;
      return {r, mesh_->rank(c)};
    }
    case kTpRing: {  // r and the next rank of its tensor-parallel ring
      Coords c = mesh_->coords(r);
      c.tp = (c.tp + 1) % p_.tp;
      return {r, mesh_->rank(c)};
    }
    case kMirror: {  // DualPipe: r and the pipeline rank that holds the same two stages, lower rank first
      Coords c = mesh_->coords(r);
      c.pp = p_.pp - 1 - c.pp;
      const RankId m = mesh_->rank(c);
      return {std::min(r, m), std::max(r, m)};
    }
    case kDp: {  // the data-parallel (x cp) group, or with hybrid sharding r's shard group
      std::vector<RankId> all = mesh_->group2(r, Dim::dp, Dim::cp);
      if (replicas_ == 1) return all;
      const auto at = static_cast<std::size_t>(std::find(all.begin(), all.end(), r) - all.begin());
      const std::size_t size = all.size() / static_cast<std::size_t>(replicas_), first = at / size * size;
      return {all.begin() + static_cast<std::ptrdiff_t>(first), all.begin() + static_cast<std::ptrdiff_t>(first + size)};
    }
    case kRep: {  // hybrid sharding: the ranks holding the same shard, one per replica
      std::vector<RankId> all = mesh_->group2(r, Dim::dp, Dim::cp);
      const auto at = static_cast<std::size_t>(std::find(all.begin(), all.end(), r) - all.begin());
      const std::size_t size = all.size() / static_cast<std::size_t>(replicas_);
      std::vector<RankId> out;
      for (std::size_t i = at % size; i < all.size(); i += size) out.push_back(all[i]);
      return out;
    }
    case kPpAct: return {r, at_stage(r, layout_.owner[static_cast<std::size_t>(layout_.next(chunk))])};
    case kPpGrad: return {r, at_stage(r, layout_.owner[static_cast<std::size_t>(chunk)])};
    case kEp: {  // ep consecutive data-parallel ranks
      Coords c = mesh_->coords(r);
      const int first = c.dp / p_.ep * p_.ep;
      std::vector<RankId> out;
      for (int d = first; d < first + p_.ep; ++d) {
        c.dp = d;
        out.push_back(mesh_->rank(c));
      }
      return out;
    }
    case kEdp: {  // the ranks holding the same experts: same place in their EP group, every cp
      Coords c = mesh_->coords(r);
      const int j = c.dp % p_.ep;
      std::vector<RankId> out;
      for (int d = j; d < dp_; d += p_.ep)
        for (int cp = 0; cp < p_.cp; ++cp) {
          c.dp = d;
          c.cp = cp;
          out.push_back(mesh_->rank(c));
        }
      return out;
    }
  }
  return {r};
}

// The group of `type` containing rank r (for PP: the pair r sends on across the boundary after
// `chunk`). In symmetric fidelity a group also lists its mirrors: the same group of every rank
// the simulated rank stands for.
GroupId Compiler::group(GroupType type, RankId r, int chunk) {
  // Per-(type, chunk, rank) memo first: finding the group's base rank allocates, and the compiler
  // asks for a rank's groups once per collective op (millions of times in full fidelity).
  const std::uint64_t rank_key =
      (static_cast<std::uint64_t>(type) << 48) | (static_cast<std::uint64_t>(chunk) << 32) | static_cast<std::uint64_t>(r);
  GroupId id;
  if (auto m = by_rank_.find(rank_key); m != by_rank_.end()) {
    id = m->second;
  } else {
    id = group_uncached(type, r, chunk);
    by_rank_[rank_key] = id;
  }
  if (recording_ && recorded_groups_.emplace(rank_key, 0).second) {
    const Coords at = mesh_->coords(recording_rank_), to = mesh_->coords(r);
    Coords offset;
    for (Dim d : {Dim::tp, Dim::cp, Dim::pp, Dim::dp}) {
      const int n = mesh_->size(d);
      offset.set(d, ((to.get(d) - at.get(d)) % n + n) % n);
    }
    recording_->groups.push_back(GroupAsk{type, chunk, offset, id});
  }
  return id;
}

// The key group_uncached files a group under: groups with the same key are the same group.
std::uint64_t Compiler::group_key(GroupType type, RankId r, int chunk) const {
  const RankId b = named_by_sender(type) ? r : members(type, r, chunk).front();
  return (static_cast<std::uint64_t>(type) << 48) | (static_cast<std::uint64_t>(chunk) << 32) | static_cast<std::uint64_t>(b);
}

GroupId Compiler::group_uncached(GroupType type, RankId r, int chunk) {
  const bool pp = named_by_sender(type);
  const std::uint64_t key = group_key(type, r, chunk);
  const RankId b = static_cast<RankId>(key & 0xffffffffu);
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second;
  workload::Group grp;
  grp.members = members(type, r, chunk);
  if (o_.fidelity == Fidelity::symmetric) {
    // Class of r: every rank of the same stage. Enumerate the distinct groups of that class, in
    // the order of their first ranks along (tp, cp, dp). A group other than a PP pair or a DualPipe
    // mirror pair (one member in each of two stages) lies inside the stage, so once one of its
    // members has been seen the others need not be asked for it:
    // each rank is visited once, not once per member of its group (16k ranks x 128-rank groups).
    const Coords c = mesh_->coords(r);
    std::vector<std::int32_t> order(static_cast<std::size_t>(mesh_->ranks()), -1);  // rank -> visit index
    std::vector<char> seen(static_cast<std::size_t>(mesh_->ranks()), 0);
    std::vector<std::pair<std::int32_t, std::vector<RankId>>> found;  // (first member's index, members)
    std::int32_t next = 0;
    for (int tp = 0; tp < p_.tp; ++tp)
      for (int cp = 0; cp < p_.cp; ++cp)
        for (int dp = 0; dp < dp_; ++dp) order[static_cast<std::size_t>(mesh_->rank(Coords{tp, cp, c.pp, dp}))] = next++;
    for (int tp = 0; tp < p_.tp; ++tp)
      for (int cp = 0; cp < p_.cp; ++cp)
        for (int dp = 0; dp < dp_; ++dp) {
          const RankId xr = mesh_->rank(Coords{tp, cp, c.pp, dp});
          if (!pp && seen[static_cast<std::size_t>(xr)]) continue;
          std::vector<RankId> mem = members(type, xr, chunk);
          const RankId xb = pp ? xr : mem.front();
          if (!pp)
            for (RankId m : mem) seen[static_cast<std::size_t>(m)] = 1;
          if (xb == b) continue;
          // A DualPipe mirror pair has one member in this stage (xr) and one in the mirror stage:
          // it is ordered by the one here.
          found.push_back({order[static_cast<std::size_t>(type == kMirror ? xr : xb)], std::move(mem)});
        }
    std::sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (auto& f : found) grp.mirrors.push_back(std::move(f.second));
  }
  GroupId id = g_.add_group(std::move(grp));
  groups_[key] = id;
  return id;
}

std::uint32_t Compiler::collective(CollectiveKind k, ParallelDim d, GroupId grp, double bytes, const char* name) {
  const CollKey key{name, grp, bytes, static_cast<int>(k), static_cast<int>(d)};
  // A rank asks for the same few collectives over and over (each layer's TP gathers and
  // scatters): a small cache of the latest answers skips hashing for most of the millions of calls.
  std::uint32_t id = kNoColl;
  for (const auto& [ck, cid] : recent_colls_)
    if (ck == key) {
      id = cid;
      break;
    }
  if (id == kNoColl) {
    if (auto it = colls_.find(key); it != colls_.end()) {
      id = it->second;
    } else {
      id = g_.add_collective(workload::Collective{k, d, grp, core::Bytes(bytes), name});
      colls_[key] = id;
    }
    recent_colls_[next_recent_coll_] = {key, id};
    next_recent_coll_ = (next_recent_coll_ + 1) % recent_colls_.size();
  }
  if (recording_ && recorded_colls_.emplace(key, 0).second) recording_->colls.push_back(CollAsk{key, kNoColl, kNoColl, id});
  return id;
}

void Compiler::compute(const Block& b, Phase ph, int layer, int mb, StepOps& out) {
  for (std::uint32_t k : b.kernels)
    out.push_back({OpType::compute, s_compute_, k, ph, static_cast<std::int16_t>(layer), static_cast<std::uint16_t>(mb), false});
}

void Compiler::comm(std::uint8_t stream, std::uint32_t coll, Phase ph, int layer, int mb, StepOps& out, bool side) {
  out.push_back({OpType::collective, stream, coll, ph, static_cast<std::int16_t>(layer), static_cast<std::uint16_t>(mb), side});
}

void Compiler::layer_forward_ops(RankId r, int layer, int mb, Phase ph, StepOps& out) {
  const double tb = lk_.tp_boundary_bytes.value();
  const bool tp = p_.tp > 1;
  const GroupId tg = tp ? group(kTp, r) : 0;
  for (int blk = 0; blk < 2; ++blk) {
    if (tp_overlapped(blk, layer)) {
      overlapped_forward_block(r, blk, layer, mb, ph, out);
      continue;
    }
    if (tp && p_.sequence_parallel)
      comm(s_tp_, collective(CollectiveKind::all_gather, ParallelDim::tp, tg, tb, blk ? "tp_ag_mlp" : "tp_ag_attn"), ph, layer, mb, out);
    if (blk == 0 && p_.cp > 1) {
      compute(attn_pre_fwd_, ph, layer, mb, out);
      ring_ops(r, Dim::cp, layer, mb, ph, attn_ring_fwd_, lk_.cp_kv_bytes.value(), "cp_ring_kv", out);
      compute(attn_post_fwd_, ph, layer, mb, out);
    } else if (blk == 1 && m_.moe_layer(layer)) {
      moe_forward_ops(r, layer, mb, ph, out);
    } else {
      compute(blk ? mlp_fwd_ : attn_fwd_, ph, layer, mb, out);
    }
    if (tp)
      comm(s_tp_,
           collective(p_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, ParallelDim::tp, tg, tb,
                      blk ? (p_.sequence_parallel ? "tp_rs_mlp" : "tp_ar_mlp") : (p_.sequence_parallel ? "tp_rs_attn" : "tp_ar_attn")),
           ph, layer, mb, out);
  }
}

// MoE MLP: router and shared experts, token dispatch over the EP group, the rank's experts, and
// the combine back (Megatron-Core's all-to-all token dispatcher).
void Compiler::moe_forward_ops(RankId r, int layer, int mb, Phase ph, StepOps& out) {
  if (shared_overlap_) {
    // Route, then dispatch while the shared experts compute; the routed experts wait for both.
    compute(moe_route_fwd_, ph, layer, mb, out);
    comm(s_ep_, collective(CollectiveKind::all_to_all, ParallelDim::ep, group(kEp, r), ep_bytes_, "ep_dispatch"), ph, layer, mb, out, true);
    const int dispatch = static_cast<int>(out.size()) - 1;
    compute(moe_shared_fwd_, ph, layer, mb, out);
    const std::size_t at = out.size();
    compute(moe_experts_fwd_, ph, layer, mb, out);
    out[at].wait = dispatch;
  } else {
    compute(moe_pre_fwd_, ph, layer, mb, out);
    if (p_.ep > 1)
      comm(s_ep_, collective(CollectiveKind::all_to_all, ParallelDim::ep, group(kEp, r), ep_bytes_, "ep_dispatch"), ph, layer, mb, out);
    compute(moe_experts_fwd_, ph, layer, mb, out);
  }
  if (p_.ep > 1) comm(s_ep_, collective(CollectiveKind::all_to_all, ParallelDim::ep, group(kEp, r), ep_bytes_, "ep_combine"), ph, layer, mb, out);
  compute(moe_post_fwd_, ph, layer, mb, out);
}

// A ring over the CP or TP group: `step` runs n times (n = cp or tp); while step i computes, the
// chunk step i+1 needs moves one hop around the ring (sent to the next rank, received from the
// previous), so the transfer hides behind the compute unless it is slower. A chunk is forwarded
// once it has arrived. CP: ring attention (Liu et al. 2023; Megatron-Core's context parallelism),
// each step the attention core over one KV chunk. TP: Transformer Engine's ring-exchange
// all-gather, each step a row slice of the GEMM over one rank's input shard.
void Compiler::ring_ops(RankId r, Dim dim, int layer, int mb, Phase ph, const Block& step, double bytes, const char* name, StepOps& out) {
  const bool cp = dim == Dim::cp;
  const int n = cp ? p_.cp : p_.tp;
  const GroupType ring = cp ? kCpRing : kTpRing;
  const ParallelDim pd = cp ? ParallelDim::cp : ParallelDim::tp;
  const std::uint8_t send_stream = cp ? s_cp_send_ : s_tp_, recv_stream = cp ? s_cp_recv_ : s_tp_recv_;
  Coords c = mesh_->coords(r);
  if (cp)
    c.cp = (c.cp + n - 1) % n;
  else
    c.tp = (c.tp + n - 1) % n;
  const RankId from = mesh_->rank(c);
  const std::uint32_t send = collective(CollectiveKind::send_recv, pd, group(ring, r), bytes, name);
  const std::uint32_t recv = o_.fidelity == Fidelity::full ? collective(CollectiveKind::send_recv, pd, group(ring, from), bytes, name) : 0;
  int arrived = -1;  // position in `out` of the receive that brought the current chunk
  for (int i = 0; i < n; ++i) {
    int next = -1;
    if (i + 1 < n) {
      comm(send_stream, send, ph, layer, mb, out, true);
      if (arrived >= 0) out.back().wait = arrived;
      next = static_cast<int>(out.size()) - 1;
      // In symmetric fidelity the previous rank is a mirror of this one: its send to us is our
      // send to the next rank, moved in the same instant, so that send stands for the receive.
      if (o_.fidelity == Fidelity::full) {
        comm(recv_stream, recv, ph, layer, mb, out, true);
        next = static_cast<int>(out.size()) - 1;
      }
    }
    const std::size_t at = out.size();
    compute(step, ph, layer, mb, out);
    if (arrived >= 0) out[at].wait = arrived;
    arrived = next;
  }
}

// parallel.tp_comm_overlap applies to a block with SP collectives around dense GEMMs: not to an
// MoE MLP (its GEMMs sit between the EP all-to-alls) nor to ring attention (its own overlap).
bool Compiler::tp_overlapped(int blk, int layer) const {
  if (!p_.tp_comm_overlap) return false;
  return blk == 0 ? p_.cp == 1 : !m_.moe_layer(layer);
}

// One dense block forward with TE's TP overlap (TpOverlapBlock): the all-gather as a ring
// exchange of the tp input shards under the GEMM's row slices, the reduce-scatter in
// kTeRsSplits pieces, each behind the GEMM slice that wrote it. The last piece is in line: the
// block's output (the residual add) waits for it.
void Compiler::overlapped_forward_block(RankId r, int blk, int layer, int mb, Phase ph, StepOps& out) {
  const TpOverlapBlock& b = blk ? ov_mlp_fwd_ : ov_attn_fwd_;
  const double tb = lk_.tp_boundary_bytes.value();
  compute(b.pre, ph, layer, mb, out);
  ring_ops(r, Dim::tp, layer, mb, ph, b.gather_slice, tb / p_.tp, blk ? "tp_ag_mlp_ring" : "tp_ag_attn_ring", out);
  compute(b.mid, ph, layer, mb, out);
  const std::uint32_t rs =
      collective(CollectiveKind::reduce_scatter, ParallelDim::tp, group(kTp, r), tb / kTeRsSplits, blk ? "tp_rs_mlp_piece" : "tp_rs_attn_piece");
  for (int i = 0; i < kTeRsSplits; ++i) {
    compute(b.scatter_slice, ph, layer, mb, out);
    comm(s_tp_, rs, ph, layer, mb, out, i + 1 < kTeRsSplits);
  }
  compute(b.post, ph, layer, mb, out);
}

// One dense block backward with TE's TP overlap: the output gradient's all-gather as a ring
// exchange under the first input-gradient GEMM's row slices; the input gradient's
// reduce-scatter beside the weight-gradient GEMM, the rest of the block waiting for it. Without
// weight gradients (a zero-bubble B step) nothing is left to hide it: it runs in line.
void Compiler::overlapped_backward_block(RankId r, int blk, int layer, int mb, bool with_weights, StepOps& out) {
  const TpOverlapBlock& b = with_weights ? (blk ? ov_mlp_bwd_ : ov_attn_bwd_) : (blk ? ov_mlp_dgrad_ : ov_attn_dgrad_);
  const double tb = lk_.tp_boundary_bytes.value();
  compute(b.pre, Phase::backward, layer, mb, out);
  ring_ops(r, Dim::tp, layer, mb, Phase::backward, b.gather_slice, tb / p_.tp, blk ? "tp_ag_mlp_grad_ring" : "tp_ag_attn_grad_ring", out);
  compute(b.mid, Phase::backward, layer, mb, out);
  const bool beside = !b.beside.kernels.empty();
  comm(s_tp_, collective(CollectiveKind::reduce_scatter, ParallelDim::tp, group(kTp, r), tb, blk ? "tp_rs_mlp_grad" : "tp_rs_attn_grad"),
       Phase::backward, layer, mb, out, beside);
  const int rs = static_cast<int>(out.size()) - 1;
  compute(b.beside, Phase::backward, layer, mb, out);
  const std::size_t at = out.size();
  compute(b.post, Phase::backward, layer, mb, out);
  if (beside) out[at].wait = rs;
}

// Cuts a dense block's kernels for TE's TP overlap (see TpOverlapBlock). Forward: around its
// first and last GEMMs. Backward: around its first GEMM (an input gradient) and its last
// input-gradient GEMM; the weight-gradient GEMMs after that one run beside the reduce-scatter.
TpOverlapBlock Compiler::cut_tp_overlap(const std::string& name, const std::vector<workload::KernelSpec>& ks, bool forward) {
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
  b.gather_slice = add_block(name + "_gather_slice", {workload::gemm_row_slice(ks[first], p_.tp)});
  b.mid = add_block(name + "_mid", mid);
  if (forward) b.scatter_slice = add_block(name + "_scatter_slice", {workload::gemm_row_slice(ks[last], kTeRsSplits)});
  b.beside = add_block(name + "_beside", beside);
  b.post = add_block(name + "_post", post);
  return b;
}

void Compiler::moe_backward_ops(RankId r, int layer, int mb, bool with_weights, StepOps& out) {
  compute(moe_post_bwd_, Phase::backward, layer, mb, out);
  if (shared_overlap_) {
    // The combine gradient travels while the shared experts' backward computes.
    comm(s_ep_, collective(CollectiveKind::all_to_all, ParallelDim::ep, group(kEp, r), ep_bytes_, "ep_combine_grad"), Phase::backward, layer, mb,
         out, true);
    const int combine = static_cast<int>(out.size()) - 1;
    compute(with_weights ? moe_shared_bwd_ : moe_shared_dgrad_, Phase::backward, layer, mb, out);
    const std::size_t at = out.size();
    compute(with_weights ? moe_experts_bwd_ : moe_experts_dgrad_, Phase::backward, layer, mb, out);
    out[at].wait = combine;
    comm(s_ep_, collective(CollectiveKind::all_to_all, ParallelDim::ep, group(kEp, r), ep_bytes_, "ep_dispatch_grad"), Phase::backward, layer,
         mb, out);
    compute(with_weights ? moe_route_bwd_ : moe_route_dgrad_, Phase::backward, layer, mb, out);
    return;
  }
  if (p_.ep > 1)
    comm(s_ep_, collective(CollectiveKind::all_to_all, ParallelDim::ep, group(kEp, r), ep_bytes_, "ep_combine_grad"), Phase::backward, layer, mb,
         out);
  compute(with_weights ? moe_experts_bwd_ : moe_experts_dgrad_, Phase::backward, layer, mb, out);
  if (p_.ep > 1)
    comm(s_ep_, collective(CollectiveKind::all_to_all, ParallelDim::ep, group(kEp, r), ep_bytes_, "ep_dispatch_grad"), Phase::backward, layer, mb,
         out);
  compute(with_weights ? moe_pre_bwd_ : moe_pre_dgrad_, Phase::backward, layer, mb, out);
}

void Compiler::forward_ops(RankId r, int mb, int chunk, StepOps& out) {
  const int s = mesh_->coords(r).pp;
  const auto ci = static_cast<std::size_t>(chunk);
  const int prev = layout_.prev(chunk), next = layout_.next(chunk);
  if (prev >= 0 && layout_.owner[static_cast<std::size_t>(prev)] != s) {
    const RankId from = at_stage(r, layout_.owner[static_cast<std::size_t>(prev)]);
    comm(flows_up(prev) ? s_recv_act_up_ : s_recv_act_down_,
         collective(CollectiveKind::send_recv, ParallelDim::pp, group(kPpAct, from, prev), pp_msg_bytes_, "pp_act"), Phase::forward, -1, mb,
         out);
  }
  if (prev < 0) compute(embed_fwd_, Phase::forward, -1, mb, out);
  const int first = layout_.first_layer[ci], n = layout_.layers[ci];
  if (p_.zero < 3) {
    for (int l = 0; l < n; ++l) layer_forward_ops(r, first + l, mb, Phase::forward, out);
  } else {
    // ZeRO-3 / FSDP: each layer's parameters are all-gathered before it runs, the next layer's
    // gather issued as this one starts (FSDP's forward prefetch), on their own stream.
    int ag = gather_params(r, first, mb, Phase::forward, out);
    for (int l = 0; l < n; ++l) {
      const int next_ag = l + 1 < n ? gather_params(r, first + l + 1, mb, Phase::forward, out) : -1;
      const std::size_t at = out.size();
      layer_forward_ops(r, first + l, mb, Phase::forward, out);
      out[at].wait = ag;
      ag = next_ag;
    }
  }
  if (next < 0) compute(head_fwd_, Phase::forward, -1, mb, out);
  if (next >= 0 && layout_.owner[static_cast<std::size_t>(next)] != s)
    comm(flows_up(chunk) ? s_send_act_up_ : s_send_act_down_,
         collective(CollectiveKind::send_recv, ParallelDim::pp, group(kPpAct, r, chunk), pp_msg_bytes_, "pp_act"), Phase::forward, -1, mb, out,
         true);
}

void Compiler::flush_bucket(RankId r, int chunk, StepOps& out) {
  const auto ci = static_cast<std::size_t>(chunk);
  const bool rs = p_.zero >= 1;
  const auto kind = rs ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
  if (pending_[ci] > 0 && dp_group_size_ > 1)
    comm(s_dp_, collective(kind, ParallelDim::dp, group(kDp, r), pending_[ci], rs ? "dp_rs_grads" : "dp_ar_grads"), Phase::backward, -1, 0, out,
         true);
  // Hybrid sharding (HSDP): the bucket's reduced shard is then all-reduced across the replicas,
  // bucket by bucket behind the backward, as FSDP's hybrid shard does after each reduce-scatter
  // (same stream: it follows its reduce-scatter). Routed experts were reduced over the whole
  // expert-data-parallel group already.
  if (pending_[ci] > 0 && replicas_ > 1)
    comm(s_dp_, collective(CollectiveKind::all_reduce, ParallelDim::dp, group(kRep, r), pending_[ci] / dp_group_size_, "dp_ar_replicas"),
         Phase::backward, -1, 0, out, true);
  if (pending_experts_[ci] > 0 && edp_group_size_ > 1)
    comm(s_dp_,
         collective(kind, ParallelDim::dp, group(kEdp, r), pending_experts_[ci], rs ? "dp_rs_expert_grads" : "dp_ar_expert_grads"),
         Phase::backward, -1, 0, out, true);
  pending_[ci] = 0;
  pending_experts_[ci] = 0;
}

// Gradients of `chunk` completed by its last backward (or W) step go into DP buckets, launched
// as each fills, overlapped with the rest of the backward. Routed experts' gradients reduce over
// the expert-data-parallel group instead. Without overlap the reduction is one collective after
// the whole schedule (emit_rank).
void Compiler::add_grads(RankId r, int chunk, double dense_bytes, double expert_bytes, bool last, StepOps& out) {
  // ZeRO-2/3 reduce-scatter every micro-batch's gradients (the rank keeps only its shard).
  if ((!last && p_.zero < 2) || !p_.overlap_grad_reduce) return;
  const auto ci = static_cast<std::size_t>(chunk);
  pending_[ci] += dense_bytes;
  pending_experts_[ci] += expert_bytes;
  if (pending_[ci] + pending_experts_[ci] >= p_.grad_bucket_bytes.value()) flush_bucket(r, chunk, out);
}

void Compiler::layer_grads(RankId r, int chunk, int layer, bool last, StepOps& out) {
  // Without EP every rank holds every expert: one group reduces all of the layer.
  const LayerShard held = layer_shard(m_, layer, p_.tp, p_.ep);
  add_grads(r, chunk, held.dense * grad_bytes_, held.experts * grad_bytes_, last, out);
  // ZeRO-3 / FSDP reduce-scatters each layer (its FSDP unit) as soon as its backward is done: the
  // dense part over the shard group, the routed experts over the expert-data-parallel group.
  if (p_.zero >= 3 && p_.overlap_grad_reduce) flush_bucket(r, chunk, out);
}

// All-gather of one layer's parameters (ZeRO-3), as side ops of the step: the dense part over the
// shard group; with EP the rank's routed experts (experts/ep of them) over the expert-data-
// parallel group, none when that group is one rank. Both run on the gather stream, in order, so
// the returned position (the last gather in `out`) is the one the layer's first op waits on.
int Compiler::gather_params(RankId r, int layer, int mb, Phase ph, StepOps& out) {
  const double bpe = core::bytes_per_element(e_.training.precision);
  const LayerShard held = layer_shard(m_, layer, p_.tp, p_.ep);
  comm(s_ag_, collective(CollectiveKind::all_gather, ParallelDim::dp, group(kDp, r), held.dense * bpe, "dp_ag_layer_params"), ph,
       layer, mb, out, true);
  if (held.experts > 0 && edp_group_size_ > 1)
    comm(s_ag_, collective(CollectiveKind::all_gather, ParallelDim::dp, group(kEdp, r), held.experts * bpe, "dp_ag_layer_expert_params"),
         ph, layer, mb, out, true);
  return static_cast<int>(out.size()) - 1;
}

void Compiler::backward_ops(RankId r, int mb, int chunk, bool with_weights, bool last, StepOps& out) {
  const int s = mesh_->coords(r).pp;
  const auto ci = static_cast<std::size_t>(chunk);
  const int prev = layout_.prev(chunk), next = layout_.next(chunk);
  const double tb = lk_.tp_boundary_bytes.value();
  const bool tp = p_.tp > 1;
  const GroupId tg = tp ? group(kTp, r) : 0;
  const double embed_grad = static_cast<double>(m_.vocab * m_.hidden) / p_.tp * grad_bytes_;

  if (next >= 0 && layout_.owner[static_cast<std::size_t>(next)] != s) {
    const RankId from = at_stage(r, layout_.owner[static_cast<std::size_t>(next)]);
    comm(flows_up(chunk) ? s_recv_grad_down_ : s_recv_grad_up_,
         collective(CollectiveKind::send_recv, ParallelDim::pp, group(kPpGrad, from, chunk), pp_msg_bytes_, "pp_grad"), Phase::backward, -1, mb,
         out);
  }
  if (next < 0) {
    compute(head_bwd_, Phase::backward, -1, mb, out);
    add_grads(r, chunk, embed_grad, 0, last, out);
  }
  const Block& mlp = with_weights ? mlp_bwd_ : mlp_dgrad_;
  const Block& attn = with_weights ? attn_bwd_ : attn_dgrad_;
  // ZeRO-3 / FSDP resharded after forward: gather each layer again, one layer ahead (backward
  // prefetch), before its backward (and its recomputation).
  const bool regather = p_.zero >= 3 && p_.reshard_after_forward;
  int ag = regather ? gather_params(r, layout_.first_layer[ci] + layout_.layers[ci] - 1, mb, Phase::backward, out) : -1;
  for (int l = layout_.layers[ci] - 1; l >= 0; --l) {
    const int layer = layout_.first_layer[ci] + l;
    const int next_ag = regather && l > 0 ? gather_params(r, layer - 1, mb, Phase::backward, out) : -1;
    const std::size_t at = out.size();
    if (p_.recompute == Recompute::full) layer_forward_ops(r, layer, mb, Phase::recompute, out);
    for (int blk = 1; blk >= 0; --blk) {
      if (tp_overlapped(blk, layer)) {
        if (blk == 0 && p_.recompute == Recompute::selective) compute(core_recompute_, Phase::recompute, layer, mb, out);
        overlapped_backward_block(r, blk, layer, mb, with_weights, out);
        continue;
      }
      if (tp && p_.sequence_parallel)
        comm(s_tp_, collective(CollectiveKind::all_gather, ParallelDim::tp, tg, tb, blk ? "tp_ag_mlp_grad" : "tp_ag_attn_grad"),
             Phase::backward, layer, mb, out);
      if (blk == 0 && p_.recompute == Recompute::selective) compute(core_recompute_, Phase::recompute, layer, mb, out);
      if (blk == 0 && p_.cp > 1) {
        compute(with_weights ? attn_post_bwd_ : attn_post_dgrad_, Phase::backward, layer, mb, out);
        // K and V travel the ring again, with their gradient accumulators: twice the bytes.
        ring_ops(r, Dim::cp, layer, mb, Phase::backward, attn_ring_bwd_, 2 * lk_.cp_kv_bytes.value(), "cp_ring_kv_dkv", out);
        compute(with_weights ? attn_pre_bwd_ : attn_pre_dgrad_, Phase::backward, layer, mb, out);
      } else if (blk == 1 && m_.moe_layer(layer)) {
        moe_backward_ops(r, layer, mb, with_weights, out);
      } else {
        compute(blk ? mlp : attn, Phase::backward, layer, mb, out);
      }
      if (tp)
        comm(s_tp_,
             collective(p_.sequence_parallel ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, ParallelDim::tp, tg, tb,
                        blk ? (p_.sequence_parallel ? "tp_rs_mlp_grad" : "tp_ar_mlp_grad")
                            : (p_.sequence_parallel ? "tp_rs_attn_grad" : "tp_ar_attn_grad")),
             Phase::backward, layer, mb, out);
    }
    if (regather) {
      // The layer's first op that extends the chain waits for its parameters (a ring send of a
      // gradient shard before it, with TP overlap, needs none).
      std::size_t i = at;
      while (out[i].side) ++i;
      core::check_invariant(out[i].wait < 0, "a layer's first op waits for one thing");
      out[i].wait = ag;
    }
    ag = next_ag;
    if (with_weights) layer_grads(r, chunk, layer, last, out);
  }
  if (prev < 0) {
    compute(embed_bwd_, Phase::backward, -1, mb, out);
    add_grads(r, chunk, embed_grad, 0, last, out);
  }
  if (prev >= 0 && layout_.owner[static_cast<std::size_t>(prev)] != s)
    comm(flows_up(prev) ? s_send_grad_down_ : s_send_grad_up_,
         collective(CollectiveKind::send_recv, ParallelDim::pp, group(kPpGrad, r, prev), pp_msg_bytes_, "pp_grad"), Phase::backward, -1, mb, out,
         true);
  if ((last || p_.zero >= 2) && with_weights) flush_bucket(r, chunk, out);
}

// A zero-bubble W step: the weight-gradient GEMMs of every layer of the chunk, no communication.
void Compiler::weight_ops(RankId r, int mb, int chunk, bool last, StepOps& out) {
  const auto ci = static_cast<std::size_t>(chunk);
  for (int l = layout_.layers[ci] - 1; l >= 0; --l) {
    const int layer = layout_.first_layer[ci] + l;
    if (m_.moe_layer(layer)) {
      compute(moe_experts_wgrad_, Phase::backward, layer, mb, out);
      compute(moe_pre_wgrad_, Phase::backward, layer, mb, out);
    } else {
      compute(mlp_wgrad_, Phase::backward, layer, mb, out);
    }
    compute(attn_wgrad_, Phase::backward, layer, mb, out);
    layer_grads(r, chunk, layer, last, out);
  }
  if (last || p_.zero >= 2) flush_bucket(r, chunk, out);
}

OpId Compiler::issue(RankId r, const PendingOp& op, const std::vector<OpId>& deps) {
  const OpId id = g_.add_op(r, op.stream, op.type, op.payload, op.phase, op.layer, op.micro_batch, deps);
  if (op.type == OpType::collective && op.stream == s_dp_) {
    last_dp_ = id;
    has_dp_ = true;
  }
  return id;
}

// Issues op `i` of a step on its chain `chain` (plus the earlier op it waits for, by position in
// `ids`), records its id, and extends the chain unless it is a side op.
void Compiler::issue_chained(RankId r, const StepOps& ops, std::size_t i, std::vector<OpId>& chain, std::vector<OpId>& ids) {
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
void Compiler::fuse_collectives(StepOps& ops) {
  if (!o_.fuse_blocks || !o_.fuse_collectives || ops.size() < 2) return;
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
          prev.payload = fused(prev.payload, op.payload);
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

// The collective that runs `first`, then `next` (Collective::then), added once.
std::uint32_t Compiler::fused(std::uint32_t first, std::uint32_t next) {
  const std::uint64_t key = (static_cast<std::uint64_t>(first) << 32) | next;
  std::uint32_t id;
  if (auto it = fused_.find(key); it != fused_.end()) {
    id = it->second;
  } else {
    workload::Collective c = g_.collectives()[first];
    const workload::Collective& n = g_.collectives()[next];
    core::check_invariant(n.then.empty(), "a fused collective is only ever extended at its end");
    c.name += '+';
    c.name += n.name;
    c.then.push_back(workload::CollectivePart{n.kind, n.bytes, n.name});
    id = g_.add_collective(std::move(c));
    fused_[key] = id;
  }
  if (recording_ && recorded_fused_.emplace(key, 0).second) recording_->colls.push_back(CollAsk{CollKey{}, first, next, id});
  return id;
}

// Ops of one step in order: each depends on the previous op of the chain; side ops hang off it.
void Compiler::issue_step(RankId r, const StepOps& ops, std::vector<OpId>& frontier) {
  ids_a_.resize(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) issue_chained(r, ops, i, frontier, ids_a_);
}

// Two steps overlapped, as DualPipe's overlapped_forward_backward runs them: their compute ops
// alternate on the compute stream, each step's communication depends only on its own chain, so
// one step's communication runs while the other computes.
void Compiler::issue_pair(RankId r, const StepOps& a, const StepOps& b, std::vector<OpId>& frontier) {
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

void Compiler::emit_rank(RankId r) {
  const int s = mesh_->coords(r).pp;
  const std::vector<ScheduleStep> steps = stage_schedule(p_.schedule, s, shape_);
  // The step that completes each chunk's weight gradients: the last backward or W on it.
  std::vector<int> last_weights(static_cast<std::size_t>(layout_.chunks), -1);
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == StepKind::backward || steps[i].kind == StepKind::backward_weight)
      last_weights[static_cast<std::size_t>(steps[i].chunk)] = static_cast<int>(i);
  pending_.assign(static_cast<std::size_t>(layout_.chunks), 0);
  pending_experts_.assign(static_cast<std::size_t>(layout_.chunks), 0);
  has_dp_ = false;

  std::vector<OpId> frontier;
  StepOps a, b;
  auto build = [&](std::size_t i, StepOps& out) {
    out.clear();
    const auto& st = steps[i];
    const bool last = last_weights[static_cast<std::size_t>(st.chunk)] == static_cast<int>(i);
    switch (st.kind) {
      case StepKind::forward: forward_ops(r, st.micro_batch, st.chunk, out); break;
      case StepKind::backward: backward_ops(r, st.micro_batch, st.chunk, true, last, out); break;
      case StepKind::backward_input: {
        // Its head and embedding gradients are final if its W is the chunk's last.
        const int lw = last_weights[static_cast<std::size_t>(st.chunk)];
        backward_ops(r, st.micro_batch, st.chunk, false, lw >= 0 && steps[static_cast<std::size_t>(lw)].micro_batch == st.micro_batch, out);
        break;
      }
      case StepKind::backward_weight: weight_ops(r, st.micro_batch, st.chunk, last, out); break;
    }
    fuse_collectives(out);
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    build(i, a);
    if (steps[i].overlap_next && i + 1 < steps.size()) {
      build(i + 1, b);
      issue_pair(r, a, b, frontier);
      ++i;
    } else {
      issue_step(r, a, frontier);
    }
  }

  // Tail: without overlap, one reduction of all gradients; then the optimizer after the last DP
  // op (the dp stream runs in order: the last implies all); with ZeRO-1 the parameter all-gather.
  a.clear();
  const auto si = static_cast<std::size_t>(s);
  if (!p_.overlap_grad_reduce && (dp_group_size_ > 1 || replicas_ > 1)) {
    const double experts = p_.ep > 1 ? stage_expert_params_[si] : 0.0;
    pending_[0] = (stage_params_[si] - experts) * grad_bytes_;
    pending_experts_[0] = experts * grad_bytes_;
    flush_bucket(r, 0, a);
  }
  fuse_collectives(a);
  issue_step(r, a, frontier);
  if (has_dp_) frontier.push_back(last_dp_);
  a.clear();
  if (p_.schedule == Schedule::dualpipe) {
    // DualPipe keeps two copies of the model: rank s holds stages s and pp-1-s, and so does its
    // mirror rank pp-1-s, in the other direction. Each copy's gradients are only half of the
    // stage's, so the pair sums them before the update (deepseek-ai/DualPipe's example adds each
    // copy's gradient to its mirror's). After the data-parallel reduction, on the shards the
    // optimizer updates (ZeRO >= 1) or on the whole gradients (ZeRO 0).
    comm(s_dp_,
         collective(CollectiveKind::all_reduce, ParallelDim::pp, group(kMirror, r), stage_shard_params_[si] * grad_bytes_,
                    "pp_ar_dualpipe_copies"),
         Phase::optimizer, -1, 0, a);
  }
  compute(optimizer_[si], Phase::optimizer, -1, 0, a);
  if (p_.zero == 1 || p_.zero == 2) {
    const double bpe = core::bytes_per_element(e_.training.precision);
    const double experts = p_.ep > 1 ? stage_expert_params_[si] : 0.0;
    if (dp_group_size_ > 1)
      comm(s_dp_, collective(CollectiveKind::all_gather, ParallelDim::dp, group(kDp, r), (stage_params_[si] - experts) * bpe, "dp_ag_params"),
           Phase::optimizer, -1, 0, a);
    if (experts > 0 && edp_group_size_ > 1)
      comm(s_dp_, collective(CollectiveKind::all_gather, ParallelDim::dp, group(kEdp, r), experts * bpe, "dp_ag_expert_params"),
           Phase::optimizer, -1, 0, a);
  }
  fuse_collectives(a);
  issue_step(r, a, frontier);
}

// The stage's first rank has been emitted and ended: note which kept rank the stage's ranks will
// copy and what the emitted rank's collectives are in that rank's terms; the recording is usable
// if every collective's group came from a recorded group request.
void Compiler::finish_recording(StageRecording& rec) {
  if (!g_.replicas().empty() && g_.replicas().back().rank == recording_rank_) {
    rec.kept = g_.replicas().back().kept;
    rec.kept_colls = g_.replicas().back().colls;
  } else {
    rec.kept = static_cast<std::uint32_t>(g_.kept_ranks().size() - 1);
    rec.kept_colls = g_.kept_ranks().back().colls;
  }
  std::unordered_map<GroupId, char> got;
  for (const GroupAsk& a : rec.groups) got.emplace(a.got, 0);
  std::unordered_map<std::uint32_t, char> asked;
  for (const CollAsk& c : rec.colls) asked.emplace(c.got, 0);
  rec.usable = std::all_of(rec.colls.begin(), rec.colls.end(),
                           [&](const CollAsk& c) { return c.first != kNoColl || got.count(c.key.group) > 0; }) &&
               std::all_of(rec.kept_colls.begin(), rec.kept_colls.end(), [&](std::uint32_t c) { return asked.count(c) > 0; });
}

// Adds rank r as a replica of its stage's recording, asking for the groups and collectives that
// emitting it would have asked for, in the same order. Returns false, having created nothing,
// when r's groups would not correspond one-to-one to the recorded rank's.
bool Compiler::replay(RankId r, const StageRecording& rec) {
  const Coords at = mesh_->coords(r);
  std::vector<RankId> asked(rec.groups.size());
  std::unordered_map<GroupId, std::uint64_t> fwd;
  std::unordered_map<std::uint64_t, GroupId> bwd;
  for (std::size_t i = 0; i < rec.groups.size(); ++i) {
    const GroupAsk& a = rec.groups[i];
    Coords to;
    for (Dim d : {Dim::tp, Dim::cp, Dim::pp, Dim::dp}) to.set(d, (at.get(d) + a.offset.get(d)) % mesh_->size(d));
    asked[i] = mesh_->rank(to);
    const std::uint64_t key = group_key(a.type, asked[i], a.chunk);
    if (fwd.emplace(a.got, key).first->second != key || bwd.emplace(key, a.got).first->second != a.got) return false;
  }
  std::unordered_map<GroupId, GroupId> groups;
  for (std::size_t i = 0; i < rec.groups.size(); ++i) groups[rec.groups[i].got] = group(rec.groups[i].type, asked[i], rec.groups[i].chunk);
  std::unordered_map<std::uint32_t, std::uint32_t> colls;
  for (const CollAsk& c : rec.colls)
    colls[c.got] = c.first != kNoColl ? fused(colls.at(c.first), colls.at(c.next))
                                      : collective(static_cast<CollectiveKind>(c.key.kind), static_cast<ParallelDim>(c.key.dim),
                                                   groups.at(c.key.group), c.key.bytes, c.key.name);
  std::vector<std::uint32_t> mine;
  mine.reserve(rec.kept_colls.size());
  for (std::uint32_t c : rec.kept_colls) mine.push_back(colls.at(c));
  g_.add_replica(r, rec.kept, std::move(mine));
  return true;
}

CompiledPlan Compiler::run() {
  check_plan(e_);  // plan::validate's rules: everything below divides by the degrees it checks
  dp_ = derive_dp(e_);
  mbs_ = static_cast<int>(e_.training.global_batch / (static_cast<std::int64_t>(dp_) * e_.training.micro_batch));
  shape_ = schedule_shape(e_, dp_);
  layout_ = pipeline_layout(p_.schedule, shape_);
  mesh_ = std::make_unique<Mesh>(p_, dp_);
  dp_group_size_ = dp_ * p_.cp;
  if (p_.shard_group > 0 && p_.shard_group < dp_group_size_) {
    replicas_ = dp_group_size_ / p_.shard_group;
    dp_group_size_ = p_.shard_group;  // the group that reduce-scatters and gathers
  }
  grad_bytes_ = grad_bytes_per_param(e_.training.precision);

  const workload::ShardShape shard = shard_shape(e_);
  lk_ = workload::transformer_layer(m_, shard);
  pp_msg_bytes_ = static_cast<double>(e_.training.micro_batch * e_.training.seq_len / p_.cp * m_.hidden) *
                  core::bytes_per_element(e_.training.precision) / (p_.sequence_parallel ? p_.tp : 1);

  s_compute_ = g_.stream("compute");
  s_tp_ = g_.stream("tp");
  // plan::validate: tp_comm_overlap needs tp > 1 and sequence parallelism.
  if (p_.tp_comm_overlap && o_.fidelity == Fidelity::full) s_tp_recv_ = g_.stream("tp_recv");
  if (p_.cp > 1) {
    s_cp_send_ = g_.stream("cp_send");
    s_cp_recv_ = g_.stream("cp_recv");
  }
  if (p_.pp > 1) {
    s_recv_act_down_ = g_.stream("pp_recv_act");
    s_send_act_down_ = g_.stream("pp_send_act");
    s_recv_grad_up_ = g_.stream("pp_recv_grad");
    s_send_grad_up_ = g_.stream("pp_send_grad");
    if (p_.schedule == Schedule::dualpipe || p_.schedule == Schedule::dualpipev) {
      s_recv_act_up_ = g_.stream("pp_recv_act_up");
      s_send_act_up_ = g_.stream("pp_send_act_up");
      s_recv_grad_down_ = g_.stream("pp_recv_grad_down");
      s_send_grad_down_ = g_.stream("pp_send_grad_down");
    }
  }
  s_dp_ = g_.stream("dp");
  if (p_.ep > 1) s_ep_ = g_.stream("ep");
  if (p_.zero >= 3) s_ag_ = g_.stream("dp_gather");
  edp_group_size_ = dp_ * p_.cp / p_.ep;

  const bool split_backward = splits_backward(p_.schedule, shape_);
  auto split = [](const std::vector<workload::KernelSpec>& ks, bool weights) {
    std::vector<workload::KernelSpec> out;
    for (const auto& k : ks)
      if (k.weight_gradient == weights) out.push_back(k);
    return out;
  };
  attn_fwd_ = add_block("attn_fwd", lk_.attn_fwd);
  if (p_.cp > 1) {
    // The attention block cut at its core; the core in cp equal ring steps (load-balanced causal
    // chunks, as Megatron-Core's zigzag split makes them).
    auto cut = [&](const std::vector<workload::KernelSpec>& ks, std::vector<workload::KernelSpec>& pre,
                   std::vector<workload::KernelSpec>& core, std::vector<workload::KernelSpec>& post) {
      bool seen = false;
      for (auto k : ks) {
        if (core::is_attention(k.cost.cls)) {
          k.cost.flops = core::Flops(k.cost.flops.value() / p_.cp);
          k.cost.bytes = core::Bytes(k.cost.bytes.value() / p_.cp);
          core.push_back(k);
          seen = true;
        } else {
          (seen ? post : pre).push_back(k);
        }
      }
    };
    std::vector<workload::KernelSpec> pre, core, post;
    cut(lk_.attn_fwd, pre, core, post);
    attn_pre_fwd_ = add_block("attn_pre", pre);
    attn_ring_fwd_ = add_block("attn_core_ring_step", core);
    attn_post_fwd_ = add_block("attn_post", post);
    pre.clear(), core.clear(), post.clear();
    cut(lk_.attn_bwd, pre, core, post);  // backward order: pre = output side, post = input side
    attn_post_bwd_ = add_block("attn_post_bwd", pre);
    attn_ring_bwd_ = add_block("attn_core_ring_step_bwd", core);
    attn_pre_bwd_ = add_block("attn_pre_bwd", post);
    if (split_backward) {
      attn_post_dgrad_ = add_block("attn_post_bwd_input", split(pre, false));
      attn_pre_dgrad_ = add_block("attn_pre_bwd_input", split(post, false));
    }
  }
  mlp_fwd_ = add_block("mlp_fwd", lk_.mlp_fwd);
  attn_bwd_ = add_block("attn_bwd", lk_.attn_bwd);
  mlp_bwd_ = add_block("mlp_bwd", lk_.mlp_bwd);
  if (split_backward) {
    attn_dgrad_ = add_block("attn_bwd_input", split(lk_.attn_bwd, false));
    mlp_dgrad_ = add_block("mlp_bwd_input", split(lk_.mlp_bwd, false));
    attn_wgrad_ = add_block("attn_bwd_weight", split(lk_.attn_bwd, true));
    mlp_wgrad_ = add_block("mlp_bwd_weight", split(lk_.mlp_bwd, true));
  }
  if (p_.tp_comm_overlap) {
    if (p_.cp == 1) {
      ov_attn_fwd_ = cut_tp_overlap("attn_fwd", lk_.attn_fwd, true);
      ov_attn_bwd_ = cut_tp_overlap("attn_bwd", lk_.attn_bwd, false);
      if (split_backward) ov_attn_dgrad_ = cut_tp_overlap("attn_bwd_input", split(lk_.attn_bwd, false), false);
    }
    if (m_.moe.first_dense_layers > 0 || !m_.is_moe()) {
      ov_mlp_fwd_ = cut_tp_overlap("mlp_fwd", lk_.mlp_fwd, true);
      ov_mlp_bwd_ = cut_tp_overlap("mlp_bwd", lk_.mlp_bwd, false);
      if (split_backward) ov_mlp_dgrad_ = cut_tp_overlap("mlp_bwd_input", split(lk_.mlp_bwd, false), false);
    }
  }
  if (m_.is_moe()) {
    const workload::MoeKernels mk = workload::moe_mlp(m_, shard);
    ep_bytes_ = mk.dispatch_bytes.value();
    moe_pre_fwd_ = add_block("moe_router_shared", mk.pre_fwd);
    moe_experts_fwd_ = add_block("moe_experts", mk.experts_fwd);
    moe_post_fwd_ = add_block("moe_combine", mk.post_fwd);
    moe_post_bwd_ = add_block("moe_combine_bwd", mk.post_bwd);
    moe_experts_bwd_ = add_block("moe_experts_bwd", mk.experts_bwd);
    moe_pre_bwd_ = add_block("moe_router_shared_bwd", mk.pre_bwd);
    shared_overlap_ = p_.moe_shared_expert_overlap && p_.ep > 1 && m_.moe.shared_experts > 0;
    if (shared_overlap_) {
      auto part = [](const std::vector<workload::KernelSpec>& ks, bool shared) {
        std::vector<workload::KernelSpec> out;
        for (const auto& k : ks)
          if ((k.name.rfind("shared_", 0) == 0) == shared) out.push_back(k);
        return out;
      };
      moe_route_fwd_ = add_block("moe_router", part(mk.pre_fwd, false));
      moe_shared_fwd_ = add_block("moe_shared_experts", part(mk.pre_fwd, true));
      moe_route_bwd_ = add_block("moe_router_bwd", part(mk.pre_bwd, false));
      moe_shared_bwd_ = add_block("moe_shared_experts_bwd", part(mk.pre_bwd, true));
      if (split_backward) {
        moe_route_dgrad_ = add_block("moe_router_bwd_input", split(part(mk.pre_bwd, false), false));
        moe_shared_dgrad_ = add_block("moe_shared_experts_bwd_input", split(part(mk.pre_bwd, true), false));
      }
    }
    if (split_backward) {
      moe_experts_dgrad_ = add_block("moe_experts_bwd_input", split(mk.experts_bwd, false));
      moe_pre_dgrad_ = add_block("moe_router_shared_bwd_input", split(mk.pre_bwd, false));
      moe_experts_wgrad_ = add_block("moe_experts_bwd_weight", split(mk.experts_bwd, true));
      moe_pre_wgrad_ = add_block("moe_router_shared_bwd_weight", split(mk.pre_bwd, true));
    }
  }
  embed_fwd_ = add_block("embed_fwd", workload::embedding_fwd(m_, shard));
  embed_bwd_ = add_block("embed_bwd", workload::embedding_bwd(m_, shard));
  head_fwd_ = add_block("head_fwd", workload::head_fwd(m_, shard));
  head_bwd_ = add_block("head_bwd", workload::head_bwd(m_, shard));
  {
    std::vector<workload::KernelSpec> core;
    for (const auto& k : lk_.attn_fwd)
      if (core::is_attention(k.cost.cls)) core.push_back(k);
    core_recompute_ = add_block("attn_core_recompute", core);
  }
  MemoryEstimate mem = estimate_memory(e_, dp_);
  for (int s = 0; s < p_.pp; ++s) {
    double params = mem.stages[static_cast<std::size_t>(s)].params;
    const double experts = p_.ep > 1 ? mem.stages[static_cast<std::size_t>(s)].expert_params : 0.0;
    stage_params_.push_back(params);
    stage_expert_params_.push_back(mem.stages[static_cast<std::size_t>(s)].expert_params);
    // ZeRO >= 1: each rank updates its shard, dense parameters over dp*cp (or the shard group),
    // routed experts over dp*cp/ep (the expert-data-parallel group).
    stage_shard_params_.push_back(p_.zero >= 1 ? (params - experts) / dp_group_size_ + experts / edp_group_size_ : params);
    optimizer_.push_back(
        add_block(fmt::format("optimizer_stage{}", s), {workload::optimizer_step(stage_shard_params_.back(), e_.training.precision)}));
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
  const bool replay_stages = o_.fidelity == Fidelity::full && o_.replay_stage_ranks;
  stage_recordings_.assign(static_cast<std::size_t>(p_.pp), StageRecording{});
  for (std::size_t i = 0; i < sim.size(); ++i) {
    const auto stage = static_cast<std::size_t>(mesh_->coords(sim[i]).pp);
    // Full fidelity: a stage's later ranks replay its first rank's requests (see StageRecording).
    if (replay_stages && stage_recordings_[stage].usable && replay(sim[i], stage_recordings_[stage])) continue;
    const bool record = replay_stages && !stage_recordings_[stage].recorded;
    if (record) {
      stage_recordings_[stage].recorded = true;
      recording_ = &stage_recordings_[stage];
      recording_rank_ = sim[i];
      recorded_groups_.clear();
      recorded_colls_.clear();
      recorded_fused_.clear();
    }
    emit_rank(sim[i]);
    recording_ = nullptr;
    // Full fidelity: a rank whose ops copy an earlier rank's (on its own groups) is stored as a
    // replica of it, so the graph holds each class of ranks once (ExecutionGraph::end_rank).
    if (o_.fidelity == Fidelity::full) {
      g_.end_rank(sim[i]);
      if (record) finish_recording(stage_recordings_[stage]);
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

  CompiledPlan out;
  out.dp = dp_;
  out.micro_batches = mbs_;
  out.tokens_per_step = static_cast<double>(e_.training.global_batch * e_.training.seq_len);
  out.model_flops_per_step = workload::model_flops_per_token(m_, e_.training.seq_len) * out.tokens_per_step;
  std::string sharding = p_.fsdp ? (p_.reshard_after_forward ? "fsdp" : "fsdp(no-reshard)") : fmt::format("zero{}", p_.zero);
  if (replicas_ > 1) sharding += fmt::format(" hybrid{}x{}", dp_group_size_, replicas_);
  if (p_.ep > 1) sharding = fmt::format("ep{} ", p_.ep) + sharding;
  out.summary = fmt::format("tp{} pp{} dp{} cp{}{} {} {} recompute={} mb{} m={}", p_.tp, p_.pp, dp_, p_.cp,
                            p_.sequence_parallel ? (p_.tp_comm_overlap ? " sp tp-overlap" : " sp") : "", sharding,
                            schedule_label(p_.schedule, p_.virtual_stages),
                            workload::recompute_name(p_.recompute),
                            e_.training.micro_batch, mbs_);
  if (!p_.layers_per_stage.empty()) {
    std::vector<std::string> counts;
    for (int n : p_.layers_per_stage) counts.push_back(std::to_string(n));
    out.summary += " layers=";
    out.summary += core::join(counts, "/");
  }
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
  Compiler c(e, options);
  return c.run();
}

}  // namespace inflect::plan
