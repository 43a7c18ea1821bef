#pragma once
// How the engine holds a graph of millions of ops without a record per op.
//
// Ranks whose op sequences are the same up to the process groups they call (the data-parallel
// replicas of a pipeline stage, the members of a tensor-parallel group; workload::rank_classes has
// the rule) form a class. The engine keeps one template per class — its ops in stream-major order,
// their dependencies and successors — and per rank only the class, the group each of the class's
// "roles" stands for on this rank (here), and where each of its streams has got to (RankState). An
// op is done when its stream's head has passed it (a stream runs its ops in order), so no per-op
// counter is needed either. A 1,024-rank GPT-3 step (21M ops) thus runs on a few megabytes of state
// instead of gigabytes, and the memory it touches per event stays in cache.
#include <span>
#include <string>

#include "inflect/core/huge_pages.hpp"
#include "inflect/workload/exec_graph.hpp"
#include "inflect/workload/rank_classes.hpp"
#include "sim/ids.hpp"

namespace inflect::sim {

/// One op of a class template.
struct OpTemplate {
  std::uint32_t payload = 0;     // kernel id, or the class's first rank's collective id
  std::uint32_t succ_begin = 0;  // successors are [succ_begin, the next op's succ_begin)
  std::uint32_t dep_begin = 0;   // dependencies are [dep_begin, the next op's dep_begin)
  std::uint32_t ordinal = 0;     // collective: this is the rank's ordinal-th call on its group
  std::uint16_t role = 0;        // collective: which of the rank's groups it calls
  std::uint8_t stream = 0;
  std::uint8_t compute = 0;            // a compute op
  std::uint8_t on_compute_stream = 0;  // ... on the stream whose idle time is attributed
  workload::ParallelDim dim = workload::ParallelDim::dp;  // collective: its dimension (for the breakdown)
};

class RankTemplates {
 public:
  /// `compute_stream`: the name of the stream whose idle time the breakdown attributes.
  RankTemplates(const workload::ExecutionGraph& g, const std::string& compute_stream);

  const StreamKeys& keys() const { return keys_; }
  /// The compute stream's id, or -1 when the graph has no stream of that name.
  int compute_stream() const { return compute_stream_; }
  std::uint32_t slots() const { return rank_ops_.ranks(); }
  std::uint32_t classes() const { return classes_; }
  const workload::RankOps& rank_ops() const { return rank_ops_; }

  const OpTemplate& op(TemplateOp t) const { return ops_[t]; }
  std::span<const TemplateOp> deps(TemplateOp t) const {
    return {deps_.data() + ops_[t].dep_begin, deps_.data() + ops_[t.next()].dep_begin};
  }
  std::span<const TemplateOp> successors(TemplateOp t) const {
    return {succ_.data() + ops_[t].succ_begin, succ_.data() + ops_[t.next()].succ_begin};
  }
  /// Rank `s`'s stream `stream`: its first template op (`stream` = streams() gives one past the
  /// last stream's last op).
  TemplateOp stream_begin(Slot s, std::uint32_t stream) const {
    return stream_begin_[cls_[s] * (keys_.streams() + 1) + stream];
  }
  /// The group that role `role` of its class stands for on rank `s`.
  workload::GroupId group(Slot s, std::uint32_t role) const { return bind_[bind_begin_[s] + role]; }
  /// The graph's id of rank `s`'s op `t` (OpSpan and errors name ops by it).
  workload::OpId original(Slot s, TemplateOp t) const { return rank_ops_.id(s.value(), local_[t]); }
  /// Op `t`'s position in its rank's issue order: the same on every rank of its class (the key of
  /// its per-kernel jitter draw, sim/speeds).
  std::uint32_t position(TemplateOp t) const { return local_[t]; }

 private:
  /// The template of the class whose first rank is `rep`, whose groups are `roles`.
  void build(Slot rep, std::span<const workload::GroupId> roles);

  const workload::ExecutionGraph& g_;
  workload::RankOps rank_ops_;  // each rank's ops in issue order
  StreamKeys keys_;
  int compute_stream_ = -1;
  std::uint32_t classes_ = 0;
  // On a symmetric graph every rank is its own class, so these hold every op: huge pages.
  template <class T>
  using BigVector = std::vector<T, core::HugePageAllocator<T>>;
  IdVector<TemplateOp, OpTemplate, core::HugePageAllocator<OpTemplate>> ops_;  // one sentinel at the end
  IdVector<TemplateOp, std::uint32_t, core::HugePageAllocator<std::uint32_t>> local_;  // position in the rank's issue order
  BigVector<TemplateOp> deps_, succ_;
  // Per class: its streams' first template ops and one past the last, streams() + 1 entries.
  std::vector<TemplateOp> stream_begin_;
  IdVector<Slot, std::uint32_t> cls_, bind_begin_;
  std::vector<workload::GroupId> bind_;  // by rank and role (workload::RankClasses::bindings)
  std::vector<std::uint32_t> nsucc_, top_of_local_;  // build's scratch
};

}  // namespace inflect::sim
