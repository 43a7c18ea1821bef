#include "plan/group_table.hpp"

#include <algorithm>

#include "inflect/core/error.hpp"

namespace inflect::plan::compiler {

using workload::CollectiveKind;
using workload::GroupId;
using workload::ParallelDim;
using workload::RankId;

// For PP groups r is the sender: the rank holding `chunk` (activations) or the chunk after it
// (gradients); the receiver holds the other side of the boundary.
std::vector<RankId> GroupTable::members(GroupType type, RankId r, int chunk) const {
  switch (type) {
    case kTp: return ctx_.mesh.group(r, Dim::tp);
    case kCp: return ctx_.mesh.group(r, Dim::cp);
    case kCpRing: {  // r and the next rank of its context-parallel ring
      Coords c = ctx_.mesh.coords(r);
      c.cp = (c.cp + 1) % ctx_.plan.cp;
      return {r, ctx_.mesh.rank(c)};
    }
    case kTpRing: {  // r and the next rank of its tensor-parallel ring
      Coords c = ctx_.mesh.coords(r);
      c.tp = (c.tp + 1) % ctx_.plan.tp;
      return {r, ctx_.mesh.rank(c)};
    }
    case kMirror: {  // DualPipe: r and the pipeline rank that holds the same two stages, lower rank first
      Coords c = ctx_.mesh.coords(r);
      c.pp = ctx_.plan.pp - 1 - c.pp;
      const RankId m = ctx_.mesh.rank(c);
      return {std::min(r, m), std::max(r, m)};
    }
    case kDp: {  // the data-parallel (x cp) group, or with hybrid sharding r's shard group
      std::vector<RankId> all = worker_ranks(r);
      if (ctx_.replicas == 1) return all;
      const auto at = static_cast<std::size_t>(std::find(all.begin(), all.end(), r) - all.begin());
      const std::size_t size = all.size() / static_cast<std::size_t>(ctx_.replicas), first = at / size * size;
      return {all.begin() + static_cast<std::ptrdiff_t>(first), all.begin() + static_cast<std::ptrdiff_t>(first + size)};
    }
    case kRep: {  // hybrid sharding: the ranks holding the same shard, one per replica
      std::vector<RankId> all = worker_ranks(r);
      const auto at = static_cast<std::size_t>(std::find(all.begin(), all.end(), r) - all.begin());
      const std::size_t size = all.size() / static_cast<std::size_t>(ctx_.replicas);
      std::vector<RankId> out;
      for (std::size_t i = at % size; i < all.size(); i += size) out.push_back(all[i]);
      return out;
    }
    case kPpAct: return {r, ctx_.at_stage(r, ctx_.layout.owner[static_cast<std::size_t>(ctx_.layout.next(chunk))])};
    case kPpGrad: return {r, ctx_.at_stage(r, ctx_.layout.owner[static_cast<std::size_t>(chunk)])};
    case kEp: {  // ep consecutive data-parallel ranks
      Coords c = ctx_.mesh.coords(r);
      const int first = c.dp / ctx_.plan.ep * ctx_.plan.ep;
      std::vector<RankId> out;
      for (int d = first; d < first + ctx_.plan.ep; ++d) {
        c.dp = d;
        out.push_back(ctx_.mesh.rank(c));
      }
      return out;
    }
    case kEdp: {  // the ranks holding the same experts: same place in their EP group, every cp (of r's worker)
      Coords c = ctx_.mesh.coords(r);
      const int j = c.dp % ctx_.plan.ep;
      const int first = c.dp / ctx_.worker_dp * ctx_.worker_dp;
      std::vector<RankId> out;
      for (int d = first + j; d < first + ctx_.worker_dp; d += ctx_.plan.ep)
        for (int cp = 0; cp < ctx_.plan.cp; ++cp) {
          c.dp = d;
          c.cp = cp;
          out.push_back(ctx_.mesh.rank(c));
        }
      return out;
    }
    case kOuter: {  // DiLoCo: r's counterpart in each worker, at the same place in it
      Coords c = ctx_.mesh.coords(r);
      const int at = c.dp % ctx_.worker_dp;
      std::vector<RankId> out;
      for (int w = 0; w < ctx_.workers; ++w) {
        c.dp = w * ctx_.worker_dp + at;
        out.push_back(ctx_.mesh.rank(c));
      }
      return out;
    }
  }
  return {r};
}

std::vector<RankId> GroupTable::worker_ranks(RankId r) const {
  std::vector<RankId> all = ctx_.mesh.group2(r, Dim::dp, Dim::cp);
  if (ctx_.workers == 1) return all;
  // The worker: dp coordinates [w * dp/K, (w + 1) * dp/K) with every cp, in the same order.
  const int w = ctx_.mesh.coords(r).dp / ctx_.worker_dp;
  std::erase_if(all, [&](RankId x) { return ctx_.mesh.coords(x).dp / ctx_.worker_dp != w; });
  return all;
}

GroupId GroupTable::group(GroupType type, RankId r, int chunk) {
  // Per-(type, chunk, rank) memo first: finding the group's base rank allocates, and the compiler
  // asks for a rank's groups once per collective op (millions of times in full fidelity).
  const std::uint64_t rank_key = group_request_key(type, r, chunk);
  GroupId id;
  if (auto m = by_rank_.find(rank_key); m != by_rank_.end()) {
    id = m->second;
  } else {
    id = group_uncached(type, r, chunk);
    by_rank_[rank_key] = id;
  }
  if (observer_) observer_->group_asked(type, r, chunk, id);
  return id;
}

std::uint64_t GroupTable::group_key(GroupType type, RankId r, int chunk) const {
  const RankId b = named_by_sender(type) ? r : members(type, r, chunk).front();
  return group_request_key(type, b, chunk);
}

GroupId GroupTable::group_uncached(GroupType type, RankId r, int chunk) {
  const bool pp = named_by_sender(type);
  const std::uint64_t key = group_key(type, r, chunk);
  const RankId b = static_cast<RankId>(key & 0xffffffffu);
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second;
  workload::Group grp;
  grp.members = members(type, r, chunk);
  if (ctx_.options.fidelity == Fidelity::symmetric) {
    // Class of r: every rank of the same stage. Enumerate the distinct groups of that class, in
    // the order of their first ranks along (tp, cp, dp). A group other than a PP pair or a DualPipe
    // mirror pair (one member in each of two stages) lies inside the stage, so once one of its
    // members has been seen the others need not be asked for it:
    // each rank is visited once, not once per member of its group (16k ranks x 128-rank groups).
    const Coords c = ctx_.mesh.coords(r);
    std::vector<std::int32_t> order(static_cast<std::size_t>(ctx_.mesh.ranks()), -1);  // rank -> visit index
    std::vector<char> seen(static_cast<std::size_t>(ctx_.mesh.ranks()), 0);
    std::vector<std::pair<std::int32_t, std::vector<RankId>>> found;  // (first member's index, members)
    std::int32_t next = 0;
    for (int tp = 0; tp < ctx_.plan.tp; ++tp)
      for (int cp = 0; cp < ctx_.plan.cp; ++cp)
        for (int dp = 0; dp < ctx_.dp; ++dp) order[static_cast<std::size_t>(ctx_.mesh.rank(Coords{tp, cp, c.pp, dp}))] = next++;
    for (int tp = 0; tp < ctx_.plan.tp; ++tp)
      for (int cp = 0; cp < ctx_.plan.cp; ++cp)
        for (int dp = 0; dp < ctx_.dp; ++dp) {
          const RankId xr = ctx_.mesh.rank(Coords{tp, cp, c.pp, dp});
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

std::uint32_t GroupTable::collective(CollectiveKind k, ParallelDim d, GroupId grp, double bytes, const char* name) {
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
  if (observer_) observer_->collective_asked(key, id);
  return id;
}

std::uint32_t GroupTable::fused(std::uint32_t first, std::uint32_t next) {
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
  if (observer_) observer_->fused_asked(first, next, id);
  return id;
}

}  // namespace inflect::plan::compiler
