#include "inflect/workload/rank_classes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "inflect/core/error.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::workload {

RankOps::RankOps(const ExecutionGraph& g) {
  const auto& ops = g.ops();
  const std::size_t n = ops.size();
  const auto& sim = g.simulated_ranks();
  const std::size_t nranks = sim.size();
  index_of_.assign(static_cast<std::size_t>(std::max(0, g.total_ranks())), -1);
  for (std::size_t i = 0; i < nranks; ++i) index_of_[static_cast<std::size_t>(sim[i])] = static_cast<std::int32_t>(i);
  first_.assign(nranks, 0);
  count_.assign(nranks, 0);
  bool contiguous = true;
  {
    std::vector<char> seen(nranks, 0);
    std::int64_t prev = -1;
    for (std::size_t k = 0; k < n; ++k) {
      const auto i = static_cast<std::size_t>(index_of_[static_cast<std::size_t>(ops[k].rank)]);
      if (static_cast<std::int64_t>(i) != prev) {
        if (seen[i]) contiguous = false;
        seen[i] = 1;
        prev = static_cast<std::int64_t>(i);
        if (count_[i] == 0) first_[i] = static_cast<std::uint32_t>(k);
      }
      ++count_[i];
    }
  }
  replica_.assign(nranks, 0);
  for (const auto& rep : g.replicas()) {
    const auto i = static_cast<std::size_t>(index_of_[static_cast<std::size_t>(rep.rank)]);
    replica_[i] = 1;
    first_[i] = static_cast<std::uint32_t>(n + rep.offset);
    count_[i] = g.kept_ranks()[rep.kept].count;
  }
  if (contiguous) return;
  // The ranks' ops interleave: list them rank after rank.
  std::uint32_t acc = 0;
  for (std::size_t i = 0; i < nranks; ++i) {
    if (replica_[i]) continue;
    first_[i] = acc;
    acc += count_[i];
  }
  ids_.resize(n);
  positions_.resize(n);
  std::vector<std::uint32_t> fill(first_);
  for (std::size_t k = 0; k < n; ++k) {
    const auto i = static_cast<std::size_t>(index_of_[static_cast<std::size_t>(ops[k].rank)]);
    positions_[k] = fill[i] - first_[i];
    ids_[fill[i]++] = static_cast<OpId>(k);
  }
}

void RankComparer::begin(const ExecutionGraph& g) {
  const std::size_t nc = g.collectives().size(), ng = g.groups().size();
  if (partner_.size() < nc) {
    partner_.resize(nc, 0);
    partner_stamp_.resize(nc, 0);
    taken_stamp_.resize(nc, 0);
  }
  if (group_to_.size() < ng) {
    group_to_.resize(ng, 0);
    group_from_.resize(ng, 0);
    group_to_stamp_.resize(ng, 0);
    group_from_stamp_.resize(ng, 0);
  }
  if (++stamp_ == 0) {  // wrapped: clear the marks once rather than mistake old ones for new
    std::fill(partner_stamp_.begin(), partner_stamp_.end(), 0);
    std::fill(taken_stamp_.begin(), taken_stamp_.end(), 0);
    std::fill(group_to_stamp_.begin(), group_to_stamp_.end(), 0);
    std::fill(group_from_stamp_.begin(), group_from_stamp_.end(), 0);
    stamp_ = 1;
  }
}

bool RankComparer::copies(const ExecutionGraph& g, const RankOpSpan& a, const RankOpSpan& b) {
  if (a.count != b.count) return false;
  begin(g);
  firsts_.clear();
  seconds_.clear();
  const auto& ops = g.ops();
  for (std::uint32_t j = 0; j < a.count; ++j) {
    const OpId ia = a.id(j), ib = b.id(j);
    const Op& x = ops[ia];
    const Op& y = ops[ib];
    if (x.stream != y.stream || x.type != y.type || x.phase != y.phase || x.layer != y.layer || x.micro_batch != y.micro_batch)
      return false;
    if (x.type == OpType::compute) {
      if (x.payload != y.payload) return false;
    } else if (partner_stamp_[x.payload] == stamp_) {
      if (partner_[x.payload] != y.payload) return false;
    } else {
      // a's collective seen for the first time: b's must be new too (one-to-one).
      if (taken_stamp_[y.payload] == stamp_) return false;
      partner_stamp_[x.payload] = stamp_;
      partner_[x.payload] = y.payload;
      taken_stamp_[y.payload] = stamp_;
      firsts_.push_back(x.payload);
      seconds_.push_back(y.payload);
    }
    const auto da = g.deps(ia), db = g.deps(ib);
    if (da.size() != db.size()) return false;
    for (std::size_t k = 0; k < da.size(); ++k)
      if (a.position(da[k]) != b.position(db[k])) return false;
  }
  return check_pairs(g, firsts_, seconds_, nullptr).what == Mismatch::none;
}

// The i-th of each list the same call, on groups that correspond one-to-one.
RankComparer::Check RankComparer::check_pairs(const ExecutionGraph& g, std::span<const std::uint32_t> kept,
                                              std::span<const std::uint32_t> colls, const RankId* member) {
  if (colls.size() != kept.size()) return {Mismatch::count, 0};
  begin(g);
  const auto& table = g.collectives();
  for (std::size_t i = 0; i < colls.size(); ++i) {
    if (colls[i] >= table.size() || kept[i] >= table.size()) return {Mismatch::unknown_collective, i};
    const Collective& x = table[kept[i]];
    const Collective& y = table[colls[i]];
    if (x.group >= g.groups().size() || y.group >= g.groups().size()) return {Mismatch::unknown_group, i};
    if (!same_call(x, y)) return {Mismatch::other_call, i};
    const bool to_known = group_to_stamp_[x.group] == stamp_, from_known = group_from_stamp_[y.group] == stamp_;
    if ((to_known && group_to_[x.group] != y.group) || (from_known && group_from_[y.group] != x.group))
      return {Mismatch::groups_not_one_to_one, i};
    if (to_known) continue;
    group_to_stamp_[x.group] = group_from_stamp_[y.group] = stamp_;
    group_to_[x.group] = y.group;
    group_from_[y.group] = x.group;
    if (member) {
      const auto& members = g.groups()[y.group].members;
      if (std::find(members.begin(), members.end(), *member) == members.end()) return {Mismatch::not_member, i};
    }
  }
  return {};
}

std::string RankComparer::collectives_mismatch(const ExecutionGraph& g, std::span<const std::uint32_t> kept,
                                               std::span<const std::uint32_t> colls, const RankId* member) {
  const Check c = check_pairs(g, kept, colls, member);
  const auto& table = g.collectives();
  switch (c.what) {
    case Mismatch::none: return {};
    case Mismatch::count: return fmt::format("{} collectives for a kept rank with {}", colls.size(), kept.size());
    case Mismatch::unknown_collective:
      return fmt::format("collective {} of {}", std::max(colls[c.at], kept[c.at]), table.size());
    case Mismatch::unknown_group:
      return fmt::format("collectives {} and {} name groups {} and {} of {}", kept[c.at], colls[c.at], table[kept[c.at]].group,
                         table[colls[c.at]].group, g.groups().size());
    case Mismatch::other_call:
      return fmt::format("collective {} ('{}') does not copy the kept rank's {} ('{}')", colls[c.at], table[colls[c.at]].name,
                         kept[c.at], table[kept[c.at]].name);
    case Mismatch::groups_not_one_to_one:
      return fmt::format("collective '{}': groups {} and {} do not correspond one-to-one", table[colls[c.at]].name,
                         table[kept[c.at]].group, table[colls[c.at]].group);
    case Mismatch::not_member:
      return fmt::format("collective '{}': rank {} is not a member of group {}", table[colls[c.at]].name, *member,
                         table[colls[c.at]].group);
  }
  return "?";
}

void RankComparer::first_use(const ExecutionGraph& g, const RankOpSpan& rank, std::vector<std::uint32_t>& out) {
  begin(g);
  out.clear();
  const auto& ops = g.ops();
  for (std::uint32_t j = 0; j < rank.count; ++j) {
    const Op& op = ops[rank.id(j)];
    if (op.type != OpType::collective || partner_stamp_[op.payload] == stamp_) continue;
    partner_stamp_[op.payload] = stamp_;
    out.push_back(op.payload);
  }
}

RankClasses rank_classes(const ExecutionGraph& g, const RankOps& ops) {
  const auto& colls = g.collectives();
  const std::uint32_t n = ops.ranks();
  RankClasses rc;
  constexpr std::uint32_t kNone = UINT32_MAX;
  rc.class_of.assign(n, kNone);
  rc.binding_begin.assign(n, 0);
  RankComparer cmp;
  // Per class: the role of each of its first rank's distinct collectives (in first-use order).
  std::vector<std::vector<std::uint32_t>> class_role_of;
  std::map<std::uint32_t, std::vector<std::uint32_t>> classes_by_count;
  std::vector<std::uint32_t> list;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (ops.is_replica(i)) continue;
    const RankOpSpan mine = ops.span(i);
    auto& candidates = classes_by_count[mine.count];
    for (std::uint32_t c : candidates) {
      if (!cmp.copies(g, ops.span(rc.representative[c]), mine)) continue;
      rc.class_of[i] = c;
      rc.binding_begin[i] = static_cast<std::uint32_t>(rc.bindings.size());
      rc.bindings.resize(rc.bindings.size() + rc.role_count[c]);
      const auto& counterparts = cmp.counterparts();
      for (std::size_t k = 0; k < counterparts.size(); ++k)
        rc.bindings[rc.binding_begin[i] + class_role_of[c][k]] = colls[counterparts[k]].group;
      break;
    }
    if (rc.class_of[i] != kNone) continue;
    // A new class: its roles are this rank's groups in first-use order.
    const auto c = static_cast<std::uint32_t>(rc.representative.size());
    candidates.push_back(c);
    rc.class_of[i] = c;
    rc.representative.push_back(i);
    rc.binding_begin[i] = static_cast<std::uint32_t>(rc.bindings.size());
    cmp.first_use(g, mine, list);
    std::vector<std::uint32_t> role_of(list.size());
    for (std::size_t k = 0; k < list.size(); ++k) {
      const GroupId grp = colls[list[k]].group;
      std::uint32_t role = 0;
      const auto roles = rc.bindings.size() - rc.binding_begin[i];
      while (role < roles && rc.bindings[rc.binding_begin[i] + role] != grp) ++role;
      if (role == roles) rc.bindings.push_back(grp);
      role_of[k] = role;
    }
    rc.role_count.push_back(static_cast<std::uint32_t>(rc.bindings.size() - rc.binding_begin[i]));
    class_role_of.push_back(std::move(role_of));
  }
  // A replica is in its kept rank's class, on its own groups: each of the kept rank's groups maps
  // to the replica's through their collectives (end_rank and add_replica checked the map is
  // one-to-one).
  std::vector<std::uint32_t> role_of_group(g.groups().size(), kNone);
  for (const auto& rep : g.replicas()) {
    const auto i = static_cast<std::uint32_t>(ops.index_of(rep.rank));
    const auto& kept = g.kept_ranks()[rep.kept];
    const auto like = static_cast<std::uint32_t>(ops.index_of(kept.rank));
    const std::uint32_t c = rc.class_of[like];
    rc.class_of[i] = c;
    rc.binding_begin[i] = static_cast<std::uint32_t>(rc.bindings.size());
    rc.bindings.resize(rc.bindings.size() + rc.role_count[c], kNone);
    const auto theirs = rc.binding(like);
    for (std::uint32_t role = 0; role < theirs.size(); ++role) role_of_group[theirs[role]] = role;
    for (std::size_t k = 0; k < kept.colls.size(); ++k) {
      const std::uint32_t role = role_of_group[colls[kept.colls[k]].group];
      core::check_invariant(role != kNone, "a kept rank calls a group its class has no role for");
      rc.bindings[rc.binding_begin[i] + role] = colls[rep.colls[k]].group;
    }
    for (GroupId grp : theirs) role_of_group[grp] = kNone;
    for (std::uint32_t role = 0; role < theirs.size(); ++role)
      core::check_invariant(rc.bindings[rc.binding_begin[i] + role] != kNone,
                            "a replica's kept rank calls a group it has no collective on");
  }
  return rc;
}

}  // namespace inflect::workload
