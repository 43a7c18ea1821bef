#pragma once
// When rank b runs the same ops as rank a up to their process groups — the one definition of "b is
// a copy of a" — and the classes of such ranks.
//
// Most ranks of a training step are copies of a few: the data-parallel replicas and
// tensor-parallel peers of a pipeline stage issue the same ops, each on its own process groups. b
// copies a when, op by op in issue order, they have the same stream, kind, kernel, phase, layer,
// micro-batch and dependencies (at the same positions), and their collectives correspond one-to-one
// (a's i-th distinct collective in first-use order is b's i-th), each pair making the same call
// (workload::same_call: kind, size, dimension, name and what follows it) on groups that correspond
// one-to-one too. One-to-one because the k-th call on a group matches the k-th of every other
// member: two of a's groups standing for one of b's would merge their call sequences.
//
// A class's "roles" are its first rank's groups in first-use order; each rank of the class binds
// every role to the group that stands for it on that rank.
//
// Labels (phase, layer, micro-batch, names) are part of the rule although the engine's timing reads
// none of them: a copy is stored as its kept rank's ops (ExecutionGraph::end_rank), which serve the
// kept rank's labels, and one rule for storing and for running keeps a graph's classes the same
// whether its copies are stored or written out.
//
// Who uses it: ExecutionGraph::end_rank and add_replica (the copies a frontend builds are stored
// once), the engine (one template per class, src/sim/rank_templates), and trace importers (ranks
// read from a trace group the same way).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "inflect/workload/ids.hpp"

namespace inflect::workload {

class ExecutionGraph;

/// One rank's ops in issue order: op j is `first + j`, or `ids[j]` when the rank's ops interleave
/// with other ranks' (a hand-written or imported graph), `positions` then mapping an op id back to j.
struct RankOpSpan {
  OpId first = 0;
  std::uint32_t count = 0;
  const OpId* ids = nullptr;
  const std::uint32_t* positions = nullptr;  // indexed by op id, with `ids`
  OpId id(std::uint32_t j) const { return ids ? ids[j] : first + j; }
  std::uint32_t position(OpId op) const { return positions ? positions[op] : op - first; }
};

/// Each simulated rank's ops in issue order, by the rank's index in simulated_ranks(). On a graph
/// whose ranks' ops are contiguous (what the compiler emits) op j of rank i is first(i) + j and no
/// per-op table is built. A replica's ops (ExecutionGraph::end_rank) are the ids after ops().
class RankOps {
 public:
  /// The graph must be valid (ExecutionGraph::validate): every op on a simulated rank.
  explicit RankOps(const ExecutionGraph& g);

  std::uint32_t ranks() const { return static_cast<std::uint32_t>(first_.size()); }
  /// The index of rank `r` in simulated_ranks(), or -1.
  std::int32_t index_of(RankId r) const {
    return r >= 0 && static_cast<std::size_t>(r) < index_of_.size() ? index_of_[static_cast<std::size_t>(r)] : -1;
  }
  bool is_replica(std::uint32_t i) const { return replica_[i] != 0; }
  std::uint32_t count(std::uint32_t i) const { return count_[i]; }
  /// Op j of rank i.
  OpId id(std::uint32_t i, std::uint32_t j) const {
    return ids_.empty() || replica_[i] ? first_[i] + j : ids_[first_[i] + j];
  }
  /// The position of op `op` of rank i (not a replica) in its rank's issue order.
  std::uint32_t position(std::uint32_t i, OpId op) const { return ids_.empty() ? op - first_[i] : positions_[op]; }
  /// Rank i's ops for RankComparer (not a replica: its ops are not in ops()).
  RankOpSpan span(std::uint32_t i) const {
    if (ids_.empty()) return RankOpSpan{first_[i], count_[i]};
    return RankOpSpan{0, count_[i], ids_.data() + first_[i], positions_.data()};
  }

 private:
  std::vector<std::int32_t> index_of_;
  std::vector<std::uint32_t> first_, count_;
  std::vector<char> replica_;
  std::vector<OpId> ids_;                // interleaved graphs: the ranks' ops, rank after rank
  std::vector<std::uint32_t> positions_;  // ... and each op's position in its rank
};

/// Compares ranks by the rule above. It keeps scratch indexed by collective and group id from one
/// comparison to the next (end_rank compares each new rank with every kept rank of its length).
class RankComparer {
 public:
  /// Whether `b`'s ops copy `a`'s. On success counterparts() holds b's counterpart of each of a's
  /// distinct collectives, in a's first-use order.
  bool copies(const ExecutionGraph& g, const RankOpSpan& a, const RankOpSpan& b);
  const std::vector<std::uint32_t>& counterparts() const { return seconds_; }

  /// The collective half of the rule, for a frontend that knows which collectives are a copy's
  /// (ExecutionGraph::add_replica): why `colls` are not counterparts of `kept` (a rank's distinct
  /// collectives in first-use order), or "" when they are; with `member`, also each of colls'
  /// groups containing that rank.
  std::string collectives_mismatch(const ExecutionGraph& g, std::span<const std::uint32_t> kept,
                                   std::span<const std::uint32_t> colls, const RankId* member = nullptr);

  /// A rank's distinct collectives in first-use order.
  void first_use(const ExecutionGraph& g, const RankOpSpan& rank, std::vector<std::uint32_t>& out);

 private:
  enum class Mismatch : std::uint8_t { none, count, unknown_collective, unknown_group, other_call, groups_not_one_to_one, not_member };
  struct Check {
    Mismatch what = Mismatch::none;
    std::size_t at = 0;  // the pair that fails
  };
  Check check_pairs(const ExecutionGraph& g, std::span<const std::uint32_t> kept, std::span<const std::uint32_t> colls,
                    const RankId* member);
  /// Starts a comparison: scratch sized to the graph's tables, marks of earlier ones void.
  void begin(const ExecutionGraph& g);
  // Marks, valid while equal to stamp_: a collective's counterpart and whether one is taken; a
  // group's counterpart either way.
  std::vector<std::uint32_t> partner_, partner_stamp_, taken_stamp_;
  std::vector<GroupId> group_to_, group_from_;
  std::vector<std::uint32_t> group_to_stamp_, group_from_stamp_;
  std::uint32_t stamp_ = 0;
  std::vector<std::uint32_t> firsts_, seconds_;
};

/// The simulated ranks sorted into classes of copies (by RankOps index). A replica is in its kept
/// rank's class; the others are compared with each class's first rank.
struct RankClasses {
  std::vector<std::uint32_t> class_of;        // per rank
  std::vector<std::uint32_t> representative;  // per class: its first rank, whose ops define it
  std::vector<std::uint32_t> role_count;      // per class
  std::vector<std::uint32_t> binding_begin;   // per rank
  std::vector<GroupId> bindings;              // rank i's group for role k: bindings[binding_begin[i] + k]

  std::uint32_t classes() const { return static_cast<std::uint32_t>(representative.size()); }
  /// Rank i's group for each role of its class.
  std::span<const GroupId> binding(std::uint32_t i) const {
    return {bindings.data() + binding_begin[i], role_count[class_of[i]]};
  }
  /// A class's roles: its first rank's groups in first-use order (that rank's binding).
  std::span<const GroupId> roles(std::uint32_t cls) const { return binding(representative[cls]); }
};

RankClasses rank_classes(const ExecutionGraph& g, const RankOps& ops);

}  // namespace inflect::workload
