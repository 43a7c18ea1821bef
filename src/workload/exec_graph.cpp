#include "inflect/workload/exec_graph.hpp"

#include <fmt/format.h>

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

OpId ExecutionGraph::add_op(RankId rank, std::uint8_t stream, OpType type, std::uint32_t payload,
                            Phase phase, std::int16_t layer, std::uint16_t micro_batch,
                            std::span<const OpId> deps) {
  Op op;
  op.rank = rank;
  op.payload = payload;
  op.dep_begin = static_cast<std::uint32_t>(deps_.size());
  op.layer = layer;
  op.micro_batch = micro_batch;
  op.stream = stream;
  op.type = type;
  op.phase = phase;
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  ops_.push_back(op);
  return static_cast<OpId>(ops_.size() - 1);
}

std::span<const OpId> ExecutionGraph::deps(OpId id) const {
  std::uint32_t b = ops_[id].dep_begin;
  std::uint32_t e = id + 1 < ops_.size() ? ops_[id + 1].dep_begin : static_cast<std::uint32_t>(deps_.size());
  return {deps_.data() + b, e - b};
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
