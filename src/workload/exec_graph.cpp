#include "inflect/workload/exec_graph.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "inflect/core/error.hpp"

namespace inflect::workload {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::forward: return "fwd";
    case Phase::backward: return "bwd";
    case Phase::recompute: return "recompute";
    case Phase::optimizer: return "optimizer";
  }
  return "?";
}

const char* to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::send_recv: return "send_recv";
    case CollectiveKind::broadcast: return "broadcast";
    case CollectiveKind::reduce: return "reduce";
  }
  return "?";
}

const char* to_string(ParallelDim d) {
  switch (d) {
    case ParallelDim::dp: return "dp";
    case ParallelDim::tp: return "tp";
    case ParallelDim::pp: return "pp";
    case ParallelDim::cp: return "cp";
    case ParallelDim::ep: return "ep";
  }
  return "?";
}

void ExecutionGraph::set_ranks(int total, std::vector<RankId> simulated,
                               std::vector<std::uint32_t> represents) {
  total_ranks_ = total;
  simulated_ = std::move(simulated);
  represents_ = std::move(represents);
}

std::uint8_t ExecutionGraph::stream(const std::string& stream_name) {
  for (std::size_t i = 0; i < streams_.size(); ++i)
    if (streams_[i] == stream_name) return static_cast<std::uint8_t>(i);
  core::check_invariant(streams_.size() < 255, "at most 255 streams per rank");
  streams_.push_back(stream_name);
  return static_cast<std::uint8_t>(streams_.size() - 1);
}

std::uint32_t ExecutionGraph::add_kernel(Kernel k) {
  kernels_.push_back(std::move(k));
  return static_cast<std::uint32_t>(kernels_.size() - 1);
}

std::uint32_t ExecutionGraph::add_collective(Collective c) {
  collectives_.push_back(std::move(c));
  return static_cast<std::uint32_t>(collectives_.size() - 1);
}

GroupId ExecutionGraph::add_group(Group g) {
  groups_.push_back(std::move(g));
  return static_cast<GroupId>(groups_.size() - 1);
}


std::span<const OpId> ExecutionGraph::deps(OpId id) const {
  std::uint32_t b = ops_[id].dep_begin;
  std::uint32_t e = id + 1 < ops_.size() ? ops_[id + 1].dep_begin : static_cast<std::uint32_t>(deps_.size());
  return {deps_.data() + b, e - b};
}


namespace {
template <class Replicas>
std::size_t replica_at(const Replicas& reps, std::size_t offset) {
  auto it = std::upper_bound(reps.begin(), reps.end(), offset, [](std::size_t o, const auto& rep) { return o < rep.offset; });
  return static_cast<std::size_t>(it - reps.begin()) - 1;
}
}  // namespace

bool ExecutionGraph::end_rank(RankId r) {
  const std::size_t b = rank_mark_, e = ops_.size();
  const auto count = static_cast<std::uint32_t>(e - b);
  for (std::size_t i = b; i < e; ++i)
    if (ops_[i].rank != r)
      throw core::Error(core::ErrorKind::input, fmt::format("end_rank({}): op {} belongs to rank {}", r, i, ops_[i].rank));
  const RankOpSpan mine{static_cast<OpId>(b), count};
  if (auto it = kept_by_count_.find(count); it != kept_by_count_.end()) {
    for (std::uint32_t ki : it->second) {
      if (!comparer_.copies(*this, RankOpSpan{kept_[ki].first, count}, mine)) continue;
      if (b < e) deps_.resize(ops_[b].dep_begin);
      ops_.resize(b);
      push_replica(r, ki, comparer_.counterparts());
      return true;
    }
  }
  std::vector<std::uint32_t> colls;
  comparer_.first_use(*this, mine, colls);
  const auto ki = static_cast<std::uint32_t>(kept_.size());
  kept_.push_back(KeptRank{r, static_cast<OpId>(b), count, std::move(colls), static_cast<OpId>(expanded_total_before(b))});
  kept_by_count_[count].push_back(ki);
  rank_mark_ = e;
  return false;
}

void ExecutionGraph::push_replica(RankId r, std::uint32_t kept, std::vector<std::uint32_t> colls) {
  Replica rep;
  rep.rank = r;
  rep.kept = kept;
  rep.offset = static_cast<std::uint32_t>(replica_ops_);
  rep.colls = std::move(colls);
  rep.expanded_first = static_cast<OpId>(expanded_total_before(ops_.size()));
  replica_ops_ += kept_[kept].count;
  replicas_.push_back(std::move(rep));
}

void ExecutionGraph::add_replica(RankId r, std::uint32_t kept, std::vector<std::uint32_t> colls) {
  auto fail = [&](const std::string& what) {
    throw core::Error(core::ErrorKind::input, fmt::format("add_replica({}): {}", r, what));
  };
  if (rank_mark_ != ops_.size()) fail(fmt::format("{} ops were added since the last end_rank", ops_.size() - rank_mark_));
  if (kept >= kept_.size()) fail(fmt::format("kept rank {} of {}", kept, kept_.size()));
  if (std::string why = comparer_.collectives_mismatch(*this, kept_[kept].colls, colls, &r); !why.empty()) fail(why);
  push_replica(r, kept, std::move(colls));
}

OpId ExecutionGraph::expanded_id(OpId id) const {
  if (id >= ops_.size()) {
    const Replica& rep = replicas_[replica_at(replicas_, id - ops_.size())];
    return rep.expanded_first + (id - static_cast<OpId>(ops_.size()) - rep.offset);
  }
  if (id >= rank_mark_) return static_cast<OpId>(expanded_total_before(rank_mark_) + (id - rank_mark_));
  // The kept rank holding it: kept ranks are in ops() in order.
  auto it = std::upper_bound(kept_.begin(), kept_.end(), id, [](OpId x, const KeptRank& k) { return x < k.first; });
  const auto ki = static_cast<std::size_t>(it - kept_.begin()) - 1;
  return kept_[ki].expanded_first + (id - kept_[ki].first);
}

std::uint32_t ExecutionGraph::replica_slot_of(const Replica& rep, std::uint32_t kept_payload) const {
  const auto& k = kept_[rep.kept].colls;
  const auto it = std::find(k.begin(), k.end(), kept_payload);
  core::check_invariant(it != k.end(), "a replica's kept rank calls a collective not in its list");
  return rep.colls[static_cast<std::size_t>(it - k.begin())];
}

Op ExecutionGraph::op(OpId id) const {
  if (id < ops_.size()) return ops_[id];
  core::check_invariant(id < op_count(), "op id out of range");
  const Replica& rep = replicas_[replica_at(replicas_, id - ops_.size())];
  Op o = ops_[kept_[rep.kept].first + (id - ops_.size() - rep.offset)];
  o.rank = rep.rank;
  if (o.type == OpType::collective) o.payload = replica_slot_of(rep, o.payload);
  return o;
}

std::vector<OpId> ExecutionGraph::op_deps(OpId id) const {
  if (id < ops_.size()) {
    const auto d = deps(id);
    return {d.begin(), d.end()};
  }
  core::check_invariant(id < op_count(), "op id out of range");
  const Replica& rep = replicas_[replica_at(replicas_, id - ops_.size())];
  const KeptRank& k = kept_[rep.kept];
  const auto first = static_cast<OpId>(ops_.size() + rep.offset);
  std::vector<OpId> out;
  for (OpId d : deps(k.first + (id - first))) out.push_back(first + (d - k.first));
  return out;
}

ExecutionGraph ExecutionGraph::expanded() const {
  ExecutionGraph g;
  g.name = name;
  g.set_ranks(total_ranks_, simulated_, represents_);
  g.streams_ = streams_;
  g.kernels_ = kernels_;
  g.collectives_ = collectives_;
  g.groups_ = groups_;
  g.facts_ = facts_;
  // Place every op at its expanded_id (op() and op_deps() already write replicas out), then add
  // them in that order.
  const std::size_t n = op_count();
  std::vector<OpId> at(n);  // expanded id -> id here
  for (OpId id = 0; id < n; ++id) at[expanded_id(id)] = id;
  g.reserve(n, deps_.size());
  std::vector<OpId> deps;
  for (const OpId id : at) {
    const Op o = op(id);
    deps.clear();
    for (OpId d : op_deps(id)) deps.push_back(expanded_id(d));
    g.add_op(o.rank, o.stream, o.type, o.payload, o.phase, o.layer, o.micro_batch, deps);
  }
  return g;
}

void ExecutionGraph::validate() const {
  using core::Error;
  using core::ErrorKind;
  if (total_ranks_ <= 0) throw Error(ErrorKind::input, "execution graph has no ranks");
  if (simulated_.size() != represents_.size())
    throw Error(ErrorKind::input, "simulated_ranks and represents differ in length");
  std::vector<char> simulated(static_cast<std::size_t>(total_ranks_), 0);
  for (RankId r : simulated_) {
    if (r < 0 || r >= total_ranks_) throw Error(ErrorKind::input, fmt::format("simulated rank {} out of range", r));
    simulated[static_cast<std::size_t>(r)] = 1;
  }
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    const auto& g = groups_[gi];
    if (g.members.empty()) throw Error(ErrorKind::input, fmt::format("group {} has no members", gi));
    for (RankId r : g.members)
      if (r < 0 || r >= total_ranks_) throw Error(ErrorKind::input, fmt::format("group {} member {} out of range", gi, r));
  }
  for (std::size_t ci = 0; ci < collectives_.size(); ++ci) {
    const auto& c = collectives_[ci];
    if (c.group >= groups_.size()) throw Error(ErrorKind::input, fmt::format("collective {} names group {} which does not exist", ci, c.group));
    if (c.kind == CollectiveKind::send_recv && groups_[c.group].members.size() != 2)
      throw Error(ErrorKind::input, fmt::format("send_recv collective {} needs a group of 2", ci));
    if (!(c.bytes.value() >= 0)) throw Error(ErrorKind::input, fmt::format("collective {} has negative bytes", ci));
  }
  for (const Replica& rep : replicas_)
    if (rep.rank < 0 || rep.rank >= total_ranks_ || !simulated[static_cast<std::size_t>(rep.rank)])
      throw Error(ErrorKind::input, fmt::format("replica rank {} is not simulated", rep.rank));
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    if (op.rank < 0 || op.rank >= total_ranks_ || !simulated[static_cast<std::size_t>(op.rank)])
      throw Error(ErrorKind::input, fmt::format("op {} is on rank {}, which is not simulated", i, op.rank));
    if (op.stream >= streams_.size()) throw Error(ErrorKind::input, fmt::format("op {} names stream {} which does not exist", i, op.stream));
    if (op.type == OpType::compute && op.payload >= kernels_.size())
      throw Error(ErrorKind::input, fmt::format("op {} names kernel {} which does not exist", i, op.payload));
    if (op.type == OpType::collective) {
      if (op.payload >= collectives_.size())
        throw Error(ErrorKind::input, fmt::format("op {} names collective {} which does not exist", i, op.payload));
      const auto& members = groups_[collectives_[op.payload].group].members;
      bool in = false;
      for (RankId r : members) in = in || r == op.rank;
      if (!in) throw Error(ErrorKind::input, fmt::format("op {} on rank {} uses a group it is not a member of", i, op.rank));
    }
    for (OpId d : deps(static_cast<OpId>(i))) {
      if (d >= i) throw Error(ErrorKind::input, fmt::format("op {} depends on op {}, which is not earlier", i, d));
      if (ops_[d].rank != op.rank)
        throw Error(ErrorKind::input, fmt::format("op {} (rank {}) depends on op {} of rank {}: cross-rank order goes through collectives", i, op.rank, d, ops_[d].rank));
    }
  }
}

}  // namespace inflect::workload
