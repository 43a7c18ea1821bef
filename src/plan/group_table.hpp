#pragma once
// Process groups by kind and the collectives on them, each added to the graph once: the group a
// rank asks for (with its symmetric mirrors), the deduplicated collective entries, and two
// collectives fused into one. Separate because every part that places communication asks here,
// and because stage replay must see every request in order: it does so as the table's observer
// (GroupObserver) rather than through a flag threaded through every call.
#include <array>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "inflect/workload/exec_graph.hpp"
#include "plan/plan_context.hpp"

namespace inflect::plan::compiler {

constexpr std::uint32_t kNoColl = 0xffffffffu;  // "not found" for a collective id

/// Kinds of process group, for the group cache key. PP groups are one per chunk boundary and
/// direction of data (a pair: sender, receiver), so that each pairs its calls in micro-batch order.
/// kOuter: DiLoCo's outer all-reduce, the ranks holding the same part of the parameters, one in
/// each worker (plan/diloco.hpp).
enum GroupType : std::uint64_t { kTp = 1, kCp, kDp, kPpAct, kPpGrad, kEp, kEdp, kRep, kCpRing, kTpRing, kMirror, kOuter };
/// Pairs named by their sender (a PP boundary, a TP/CP ring hop) rather than by their first member.
constexpr bool named_by_sender(GroupType t) { return t == kPpAct || t == kPpGrad || t == kCpRing || t == kTpRing; }
/// One key per (type, chunk, rank): a request's (GroupTable's per-rank memo), or with the rank a
/// group is filed under, the group's (GroupTable::group_key).
constexpr std::uint64_t group_request_key(GroupType type, workload::RankId r, int chunk) {
  return (static_cast<std::uint64_t>(type) << 48) | (static_cast<std::uint64_t>(chunk) << 32) | static_cast<std::uint64_t>(r);
}

/// What identifies a collective entry: two requests with equal keys get the same id.
struct CollKey {
  const char* name;
  workload::GroupId group;
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

/// Told of every request the table answers, in order (stage replay records a stage's first rank
/// this way). Requests repeat: an observer keeps what it needs.
class GroupObserver {
 public:
  virtual ~GroupObserver() = default;
  /// group(type, rank, chunk) answered `got`.
  virtual void group_asked(GroupType type, workload::RankId rank, int chunk, workload::GroupId got) = 0;
  /// collective(...) with this key answered `got`.
  virtual void collective_asked(const CollKey& key, std::uint32_t got) = 0;
  /// fused(first, next) answered `got`.
  virtual void fused_asked(std::uint32_t first, std::uint32_t next, std::uint32_t got) = 0;
};

class GroupTable {
 public:
  GroupTable(const PlanContext& ctx, workload::ExecutionGraph& g) : ctx_(ctx), g_(g) {}

  /// The group of `type` containing rank r (for PP: the pair r sends on across the boundary after
  /// `chunk`). In symmetric fidelity a group also lists its mirrors: the same group of every rank
  /// the simulated rank stands for.
  workload::GroupId group(GroupType type, workload::RankId r, int chunk = 0);
  /// The collective entry of this kind, dimension, group, size and name (a string literal: its
  /// address identifies it).
  std::uint32_t collective(workload::CollectiveKind k, workload::ParallelDim d, workload::GroupId grp, double bytes, const char* name);
  /// The collective that runs `first`, then `next` (Collective::then), added once.
  std::uint32_t fused(std::uint32_t first, std::uint32_t next);
  /// The key group_uncached files a group under: groups with the same key are the same group.
  std::uint64_t group_key(GroupType type, workload::RankId r, int chunk) const;
  /// Null, or the observer told of every request from now on.
  void set_observer(GroupObserver* observer) { observer_ = observer; }

 private:
  std::vector<workload::RankId> members(GroupType type, workload::RankId r, int chunk) const;
  /// r's data-parallel (x cp) ranks, dp fastest: all of them, or with DiLoCo those of r's worker.
  std::vector<workload::RankId> worker_ranks(workload::RankId r) const;
  workload::GroupId group_uncached(GroupType type, workload::RankId r, int chunk);

  const PlanContext& ctx_;
  workload::ExecutionGraph& g_;
  GroupObserver* observer_ = nullptr;
  std::unordered_map<std::uint64_t, workload::GroupId> groups_;
  std::unordered_map<std::uint64_t, workload::GroupId> by_rank_;
  // Collective entries, deduplicated. Names are string literals, so their addresses identify them
  // (no string hashing on a path taken once per collective op).
  std::unordered_map<CollKey, std::uint32_t, CollKeyHash> colls_;
  std::array<std::pair<CollKey, std::uint32_t>, 8> recent_colls_{};  // see collective()
  std::size_t next_recent_coll_ = 0;
  // Fused collectives by (first, next) (OpIssuer::fuse_collectives).
  std::unordered_map<std::uint64_t, std::uint32_t> fused_;
};

}  // namespace inflect::plan::compiler
