#pragma once
// What every trace importer does once it has read a rank's nodes: deduplicate kernels,
// collectives and process groups over the whole job (so that ranks running the same work compare
// equal and are stored once, ExecutionGraph::end_rank), order each rank's ops so that every op
// follows its dependencies, and build the ExecutionGraph.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "inflect/workload/exec_graph.hpp"

namespace inflect::workload {

/// One op of a rank as an importer read it: deps are positions in the rank's ops, in any order
/// (a trace's node ids need not be topological; Chakra's often are not).
struct TraceOp {
  OpType type = OpType::compute;
  std::uint32_t payload = 0;  // a TraceGraphBuilder kernel or collective index
  std::uint8_t stream = 0;    // a TraceGraphBuilder stream
  Phase phase = Phase::forward;
  std::int16_t layer = -1;
  std::uint16_t micro_batch = 0;
};

/// A rank's ops before ordering, with a label per op for errors ("node 17 'aten::mm'").
class RankTrace {
 public:
  void add(const TraceOp& op, std::span<const std::uint32_t> deps, std::string label);
  /// Without a label of its own: the labeler names it if an error needs to (millions of ops
  /// need no string each).
  void add(const TraceOp& op, std::span<const std::uint32_t> deps);
  void set_labeler(std::function<std::string(std::size_t)> f) { labeler_ = std::move(f); }
  std::size_t size() const { return ops_.size(); }
  const TraceOp& op(std::size_t i) const { return ops_[i]; }
  std::span<const std::uint32_t> deps(std::size_t i) const;
  std::string label(std::size_t i) const {
    return i < labels_.size() && !labels_[i].empty() ? labels_[i] : labeler_ ? labeler_(i) : "op " + std::to_string(i);
  }
  void reserve(std::size_t n) {
    ops_.reserve(n);
    dep_begin_.reserve(n + 1);
    labels_.reserve(n);
  }

 private:
  std::vector<TraceOp> ops_;
  std::vector<std::uint32_t> dep_begin_{0};
  std::vector<std::uint32_t> deps_;
  std::vector<std::string> labels_;
  std::function<std::string(std::size_t)> labeler_;
};

class TraceGraphBuilder {
 public:
  /// A kernel's index, the same for the same kernel (name, cost, parts, recorded duration).
  std::uint32_t kernel(const Kernel& k);
  /// A collective's index, the same for the same call on the same group.
  std::uint32_t collective(const Collective& c);
  /// A process group's index, the same for the same members (and mirrors) in the same order.
  GroupId group(const std::vector<RankId>& members, const std::vector<std::vector<RankId>>& mirrors = {});
  /// A new process group, not merged with an equal one: for a format that numbers its groups
  /// itself (inflect's own export), so that group indices survive a round trip.
  GroupId new_group(const std::vector<RankId>& members, const std::vector<std::vector<RankId>>& mirrors = {}) {
    return g_.add_group(Group{members, mirrors});
  }
  /// A stream's index, the same for the same name. An op holds its stream in a byte, so the graph
  /// holds at most 255 over all ranks: one more is an input error naming `where` (the file, or the
  /// file and node, that brings it).
  std::uint8_t stream(const std::string& name, const std::string& where);
  const ExecutionGraph& graph() const { return g_; }

  /// Adds rank `r`'s ops (ranks in increasing order), each after its dependencies: Kahn's
  /// algorithm taking the lowest position among the ready ops, so that ops already in order keep
  /// it (and stream order, which is issue order, is the trace's). A dependency cycle is an input
  /// error naming `file` and the ops on it. Returns whether `r` copies an earlier rank
  /// (ExecutionGraph::end_rank).
  bool add_rank(RankId r, const RankTrace& t, const std::string& file);

  /// Adds rank `r` as a copy of the already added rank `of`, running the same ops on the very same
  /// groups (a rank file byte-identical to `of`'s, with nothing in it that depends on the rank):
  /// stored as a replica at once, without ordering or comparing its ops, so that a thousand
  /// identical files cost little more than one. False, adding nothing, when `r` is not a member
  /// of every group `of` calls (then add it with add_rank).
  bool add_copy(RankId r, RankId of);

  /// The graph of ranks [0, total_ranks), all simulated; validated.
  ExecutionGraph finish(int total_ranks, std::string name);
  /// The graph of `simulated` ranks standing for `represents` each (symmetric fidelity); validated.
  ExecutionGraph finish(int total_ranks, std::vector<RankId> simulated, std::vector<std::uint32_t> represents,
                        std::string name);
  /// The graph's facts for the report (tokens, model FLOPs, memory peak), where the trace has them.
  GraphFacts& facts() { return g_.facts(); }

 private:
  ExecutionGraph g_;
  std::unordered_map<std::string, std::uint32_t> kernel_index_;
  std::unordered_map<std::string, std::uint32_t> collective_index_;
  std::unordered_map<std::string, GroupId> group_index_;
  std::vector<std::uint32_t> order_, indegree_, position_;  // add_rank's scratch
  bool is_member(std::uint32_t collective, RankId r) const;
};

}  // namespace inflect::workload
