#pragma once
// Collectives while they run.
//
// The k-th call of each member on a group forms one instance (as NCCL matches calls on a
// communicator). It starts when every simulated member has arrived, then runs its lowered phases in
// order (CollectiveLowering): each waits its latency, then moves as one transfer in the flow
// network; the last phase's end completes every member's op. Instances exist only while open,
// found by (group, ordinal) through a list per group (a group rarely has more than one or two open
// at a time), and are recycled.
#include <algorithm>
#include <span>
#include <vector>

#include "inflect/core/event_queue.hpp"
#include "inflect/net/flow_network.hpp"
#include "inflect/workload/exec_graph.hpp"
#include "sim/ids.hpp"
#include "sim/lowering.hpp"
#include "sim/rank_templates.hpp"

namespace inflect::sim {

class Collectives {
 public:
  Collectives(const workload::ExecutionGraph& g, const RankTemplates& t, CollectiveLowering& lowering, net::FlowNetwork& net,
              core::EventQueue& q);

  /// Rank `slot` posted collective `top`, the head op of its stream `key`. Returns the instance
  /// when this was the last member to arrive (it is then ready to start), else none. Always
  /// inlined into the engine's start_head, as it was before the engine was split into files: left
  /// to itself GCC calls it, which costs ~1% of a full-fidelity run's instructions.
  [[gnu::always_inline]] InstanceId arrive(StreamKey key, Slot slot, TemplateOp top);
  /// Starts a ready instance: its first phase, or its completion now if it has none. Returns its
  /// members, in rank order (the order they will finish in, whatever order they arrived in).
  std::span<const StreamKey> start(InstanceId inst, core::Time now);
  /// An active phase's latency has elapsed: its transfer starts.
  void latency_done(ActivePhaseId a, core::Time now) { start_transfer(a, now); }
  /// A transfer's completion event: the instance it completes, or none (a stale prediction, or a
  /// phase with more after it, which starts now).
  InstanceId transfer_done(net::FlowNetwork::TransferId t, std::uint32_t stamp, core::Time now);

  struct Closed {
    core::Time start;                     // when its data began to move
    LoweringId lowered;                   // its lowering (algorithm, protocol)
    std::span<const StreamKey> members;  // valid until the next close()
  };
  /// Closes a completed instance (its entry may be reused at once).
  Closed close(InstanceId inst);

  // For the deadlock report.
  InstanceId find(workload::GroupId group, std::uint32_t ordinal) const;
  std::size_t arrived(InstanceId inst) const { return instances_[inst].members.size(); }
  std::uint32_t needed(workload::GroupId group) const { return needed_[group]; }

  std::uint64_t transfers() const { return transfers_; }
  const CollectiveLowering& lowering() const { return lowering_; }

 private:
  // One cache line each: find() walks them, and indexing one is a shift.
  struct alignas(64) Instance {
    TemplateOp top;  // the first arrival's template op (kind, bytes, dim)
    workload::GroupId group = 0;
    std::uint32_t ordinal = 0;
    std::uint32_t needed = 0;
    LoweringId lowered;
    InstanceId next_open;  // the group's next live instance
    core::Time start = core::Time::max();  // when its data began to move
    std::vector<StreamKey> members;  // the streams that arrived
  };
  struct ActivePhase {
    InstanceId instance;
    std::uint32_t phase = 0;
  };
  void start_phase(ActivePhaseId a, core::Time now);
  void start_transfer(ActivePhaseId a, core::Time now);
  /// Throws: the members made different calls. Only on bad input, so out of line and cold, out of
  /// the hot function it would otherwise be inlined into.
  [[gnu::noinline, gnu::cold]] void mismatched_call(Slot slot, TemplateOp top, InstanceId inst) const;

  const workload::ExecutionGraph& g_;
  const RankTemplates& t_;
  CollectiveLowering& lowering_;
  net::FlowNetwork& net_;
  core::EventQueue& q_;
  std::vector<std::uint32_t> needed_;  // per group: its simulated members
  Recycled<InstanceId, Instance> instances_;
  std::vector<InstanceId> open_head_;  // per group: a live instance, or none
  Recycled<ActivePhaseId, ActivePhase> active_;
  std::vector<ActivePhaseId> transfer_owner_;  // by the flow network's transfer id
  std::vector<StreamKey> closing_;             // close()'s members
  std::uint64_t transfers_ = 0;
};

// The per-call path, inline: the event loop (engine.cpp) runs it for every collective.

inline InstanceId Collectives::find(workload::GroupId group, std::uint32_t ordinal) const {
  for (InstanceId i = open_head_[group]; !i.is_none(); i = instances_[i].next_open)
    if (instances_[i].ordinal == ordinal) return i;
  return InstanceId::none();
}

inline InstanceId Collectives::arrive(StreamKey key, Slot slot, TemplateOp top) {
  const OpTemplate& t = t_.op(top);
  const workload::GroupId group = t_.group(slot, t.role);
  InstanceId id = find(group, t.ordinal);
  const auto& mine = g_.collectives()[t.payload];
  if (id.is_none()) {
    id = instances_.take();
    Instance& in = instances_[id];
    in.top = top;
    in.group = group;
    in.ordinal = t.ordinal;
    in.needed = needed_[group];
    in.lowered = lowering_.lowered_for(group, mine);
    in.start = core::Time::max();
    in.members.clear();
    in.next_open = open_head_[group];
    open_head_[group] = id;
  }
  Instance& in = instances_[id];
  const auto& first = g_.collectives()[t_.op(in.top).payload];
  if (in.top != top && !workload::same_traffic(first, mine)) mismatched_call(slot, top, id);
  in.members.push_back(key);
  return in.members.size() == in.needed ? id : InstanceId::none();
}

inline std::span<const StreamKey> Collectives::start(InstanceId inst, core::Time now) {
  Instance& in = instances_[inst];
  in.start = now;
  // Members finish in rank order whatever order they arrived in.
  std::sort(in.members.begin(), in.members.end());
  if (lowering_.phases(in.lowered).empty()) {
    push_event(q_, now, EventKind::collective_done, inst.value());
  } else {
    const ActivePhaseId a = active_.take();
    active_[a] = ActivePhase{inst, 0};
    start_phase(a, now);
  }
  return instances_[inst].members;
}

inline void Collectives::start_phase(ActivePhaseId a, core::Time now) {
  const auto& ph = lowering_.phases(instances_[active_[a].instance].lowered)[active_[a].phase];
  if (ph.latency > core::Time::zero()) push_event(q_, now + ph.latency, EventKind::phase_latency_done, a.value());
  else start_transfer(a, now);
}

inline void Collectives::start_transfer(ActivePhaseId a, core::Time now) {
  const auto& ph = lowering_.phases(instances_[active_[a].instance].lowered)[active_[a].phase];
  const auto t = net_.start(now, ph.weights, ph.bytes, ph.bound);
  if (transfer_owner_.size() <= t) transfer_owner_.resize(t + 1, ActivePhaseId::none());
  transfer_owner_[t] = a;
  ++transfers_;
}

inline InstanceId Collectives::transfer_done(net::FlowNetwork::TransferId t, std::uint32_t stamp, core::Time now) {
  if (stamp != net_.stamp(t) || transfer_owner_[t].is_none()) return InstanceId::none();  // stale
  const ActivePhaseId a = transfer_owner_[t];
  transfer_owner_[t] = ActivePhaseId::none();
  net_.finish(t);
  ActivePhase& act = active_[a];
  if (++act.phase < lowering_.phases(instances_[act.instance].lowered).size()) {
    start_phase(a, now);
    return InstanceId::none();
  }
  const InstanceId inst = act.instance;
  active_.give_back(a);
  return inst;
}

inline Collectives::Closed Collectives::close(InstanceId inst) {
  Instance& in = instances_[inst];
  closing_.assign(in.members.begin(), in.members.end());
  InstanceId* link = &open_head_[in.group];
  while (*link != inst) link = &instances_[*link].next_open;
  *link = in.next_open;
  const core::Time start = in.start;
  const LoweringId lowered = in.lowered;
  instances_.give_back(inst);  // what the caller does next may reuse it: nothing reads it after this
  return Closed{start, lowered, closing_};
}

}  // namespace inflect::sim
