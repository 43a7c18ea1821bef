// The event loop: streams start their head ops when their dependencies are done, and every event
// at one instant is processed before the network is re-solved once.
//
// The engine's other parts, a file each: the templates it runs ranks from (rank_templates), their
// state while running (rank_state), kernels under interference and power (compute), collectives
// matched, lowered and moved through the flow network (collectives, lowering), the step-time
// breakdown (breakdown); ids.hpp names their indices. This file ties them together: what happens
// when an op reaches its stream's head and when it finishes.
#include "inflect/sim/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "inflect/core/error.hpp"
#include "inflect/core/event_queue.hpp"
#include "inflect/net/flow_network.hpp"
#include "sim/breakdown.hpp"
#include "sim/collectives.hpp"
#include "sim/compute.hpp"
#include "sim/ids.hpp"
#include "sim/lowering.hpp"
#include "sim/rank_state.hpp"
#include "sim/rank_templates.hpp"

namespace inflect::sim {
namespace {

using core::Time;
using workload::ExecutionGraph;
using workload::OpId;

/// Per group: whether its members are in more than one site (empty on a cluster of one site).
std::vector<char> groups_across_sites(const ExecutionGraph& g, const net::Topology& topo) {
  if (topo.sites() == 1) return {};
  std::vector<char> out(g.groups().size(), 0);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = topo.spans_sites(g.groups()[i].members);
  return out;
}

class Engine {
 public:
  Engine(const ExecutionGraph& g, const net::Topology& topo, const hw::ComputeModel& model, const EngineOptions& opt)
      : g_(g),
        opt_(opt),
        t_(g, opt.compute_stream),
        keys_(t_.keys()),
        state_(t_, g.simulated_ranks()),
        net_(topo.links()),
        lowering_(g, topo, opt.tuning),
        collectives_(g, t_, lowering_, net_, q_),
        compute_(g, model, opt, t_, state_, q_),
        breakdown_(t_, state_, groups_across_sites(g, topo)) {
    q_.reserve(t_.slots() * 4 + 64);
  }

  EngineResult run();

 private:
  bool deps_done(Slot slot, TemplateOp top) const {
    for (TemplateOp dep : t_.deps(top))
      if (state_.streams[keys_.key(slot, t_.op(dep).stream)].head <= dep) return false;
    return true;
  }
  /// Starts the stream's head op if it can start: the stream is idle and the op's deps are done.
  /// `binding` is the op whose end let it start (for the breakdown).
  void try_start(StreamKey key, TemplateOp binding) {
    const StreamState& st = state_.streams[key];
    if (st.busy || st.head >= st.end) return;
    if (!deps_done(keys_.slot(key), st.head)) return;
    start_head(key, binding);
  }
  void start_head(StreamKey key, TemplateOp binding);
  /// The stream's head op finished now; a collective's data began to move at `moved`.
  void finish_op(StreamKey key, Time moved = Time::zero(), LoweringId lowered = LoweringId::none());
  void start_collective(InstanceId inst);
  void complete_collective(InstanceId inst);
  [[noreturn, gnu::cold]] void report_deadlock() const;

  const ExecutionGraph& g_;
  const EngineOptions& opt_;
  const RankTemplates t_;
  const StreamKeys keys_;  // a copy of t_'s: the hot path's shift and mask one load away
  RankState state_;
  core::EventQueue q_;
  net::FlowNetwork net_;
  CollectiveLowering lowering_;
  Collectives collectives_;
  Compute compute_;
  Breakdown breakdown_;
  Time now_;
  std::vector<std::pair<net::FlowNetwork::TransferId, Time>> resched_;
  std::uint64_t done_ops_ = 0;
};

void Engine::start_head(StreamKey key, TemplateOp binding) {
  StreamState& st = state_.streams[key];
  const TemplateOp top = st.head;
  const OpTemplate& t = t_.op(top);
  st.busy = 1;
  const Slot slot = keys_.slot(key);
  if (!t.compute) {
    // Only collectives keep records: the breakdown's walk stops at a compute op without reading
    // its record, and a running kernel's start is kept per stream (StreamState::started).
    Record& rec = breakdown_.put(key, top);
    rec.top = top;
    rec.binding = binding;
    rec.posted = now_;
    rec.start = now_;
    rec.end = Time::max();
    if (const InstanceId ready = collectives_.arrive(key, slot, top); !ready.is_none()) start_collective(ready);
    return;
  }
  st.started = now_;
  if (t.on_compute_stream) breakdown_.attribute_gap(slot, state_.slots[slot].idle_since, now_, binding);
  compute_.start_kernel(key, slot, t, now_);
}

void Engine::start_collective(InstanceId inst) {
  for (const StreamKey key : collectives_.start(inst, now_)) compute_.comm_started(keys_.slot(key));
}

void Engine::complete_collective(InstanceId inst) {
  const Collectives::Closed closed = collectives_.close(inst);
  for (const StreamKey key : closed.members) compute_.comm_ended(keys_.slot(key));
  // finish_op never completes a collective synchronously, so closed.members is not reused meanwhile.
  for (const StreamKey key : closed.members) finish_op(key, closed.start, closed.lowered);
}

void Engine::finish_op(StreamKey key, Time moved, LoweringId lowered) {
  const Slot slot = keys_.slot(key);
  StreamState& st = state_.streams[key];
  SlotState& sl = state_.slots[slot];
  const TemplateOp top = st.head;
  const OpTemplate& t = t_.op(top);
  ++done_ops_;
  if (t.compute) {
    if (opt_.observer) opt_.observer->on_op(g_, OpSpan{t_.original(slot, top), st.started, st.started, now_});
  } else {
    Record& rec = breakdown_.at(slot, top);
    rec.start = moved;
    rec.end = now_;
    if (opt_.observer) {
      const CollectiveLowering& lw = collectives_.lowering();
      opt_.observer->on_op(g_, OpSpan{t_.original(slot, top), rec.posted, rec.start, now_,
                                      lowered.is_none() ? nullptr : lw.algorithm(lowered),
                                      lowered.is_none() ? nullptr : lw.protocol(lowered)});
    }
  }
  if (t.on_compute_stream && t.compute) {
    sl.idle_since = now_;
    compute_.kernel_ended(slot, now_);
  }
  if (now_ >= sl.last_end) {
    sl.last_end = now_;
    sl.last_top = top;
  }
  st.busy = 0;
  st.head = top.next();
  for (const TemplateOp nx : t_.successors(top)) {
    const StreamKey nkey = keys_.key(slot, t_.op(nx).stream);
    const StreamState& next = state_.streams[nkey];
    if (next.head == nx && !next.busy && deps_done(slot, nx)) start_head(nkey, top);
  }
  // If its deps were already done, the stream's order is what held the next op: this op released
  // it (e.g. a gradient bucket queued behind the previous bucket on the dp stream).
  try_start(key, top);
}

EngineResult Engine::run() {
  if (opt_.observer) opt_.observer->on_begin(g_);
  now_ = Time::zero();
  compute_.sample_all(now_);  // the idle state at zero
  // Every stream's first op may start at time zero.
  const std::uint32_t nkeys = keys_.count(t_.slots());
  for (StreamKey k(0); k.value() < nkeys; k = StreamKey(k.value() + 1)) try_start(k, TemplateOp::none());
  std::uint64_t events = 0;
  while (true) {
    net_.resolve(now_, resched_);
    for (const auto& [t, when] : resched_)
      if (when != Time::max()) push_event(q_, when, EventKind::transfer_done, t, net_.stamp(t));
    resched_.clear();
    if (q_.empty()) break;
    now_ = q_.top().time;
    // Process every event at this instant, then re-solve the network once.
    while (!q_.empty() && q_.top().time == now_) {
      const core::Event e = q_.pop();
      ++events;
      switch (static_cast<EventKind>(e.kind())) {
        case EventKind::compute_done:
          if (compute_.kernel_done(StreamKey(e.id), now_)) finish_op(StreamKey(e.id));
          break;
        case EventKind::phase_latency_done: collectives_.latency_done(ActivePhaseId(e.id), now_); break;
        case EventKind::transfer_done:
          if (const InstanceId done = collectives_.transfer_done(e.id, e.stamp, now_); !done.is_none())
            complete_collective(done);
          break;
        case EventKind::collective_done: complete_collective(InstanceId(e.id)); break;
        default: core::check_invariant(false, "unknown event kind");
      }
    }
    compute_.apply_pending(now_);
  }
  if (done_ops_ != g_.op_count()) report_deadlock();
  EngineResult res;
  for (Slot s(0); s.value() < t_.slots(); s = Slot(s.value() + 1)) {
    SlotState& sl = state_.slots[s];
    RankTimes& r = sl.times;
    r.finish = sl.last_end;
    // The tail after the last compute op: attribute it to what finished last on the rank.
    if (r.finish > sl.idle_since) breakdown_.attribute_gap(s, sl.idle_since, r.finish, sl.last_top);
    res.makespan = std::max(res.makespan, r.finish);
  }
  res.power = compute_.finish_power(res.makespan);
  res.ranks.reserve(t_.slots());
  for (const SlotState& sl : state_.slots) res.ranks.push_back(sl.times);
  res.events = events;
  res.transfers = collectives_.transfers();
  res.classes = t_.classes();
  if (opt_.observer) opt_.observer->on_end(g_, res.makespan);
  return res;
}

// Names a stuck op: the first stream (in key order) whose head never ran.
void Engine::report_deadlock() const {
  std::string detail;
  const std::uint32_t nkeys = keys_.count(t_.slots());
  for (StreamKey k(0); k.value() < nkeys && detail.empty(); k = StreamKey(k.value() + 1)) {
    const StreamState& st = state_.streams[k];
    if (st.head >= st.end) continue;
    const Slot slot = keys_.slot(k);
    const TemplateOp top = st.head;
    const OpId id = t_.original(slot, top);
    const workload::Op op = g_.op(id);
    if (op.type == workload::OpType::collective) {
      const workload::GroupId group = t_.group(slot, t_.op(top).role);
      const InstanceId inst = collectives_.find(group, t_.op(top).ordinal);
      const std::size_t arrived = inst.is_none() ? 0 : collectives_.arrived(inst);
      detail = fmt::format("op {} on rank {} waits in collective '{}' ({} of {} members arrived)", id, op.rank,
                           g_.collectives()[op.payload].name, arrived, collectives_.needed(group));
    } else {
      std::size_t waiting = 0;
      for (const TemplateOp dep : t_.deps(top)) waiting += state_.streams[keys_.key(slot, t_.op(dep).stream)].head <= dep;
      detail = fmt::format("op {} on rank {} waits for {} dependencies", id, op.rank, waiting);
    }
  }
  throw core::Error(core::ErrorKind::input,
                    fmt::format("deadlock: {} of {} ops never ran; {}", g_.op_count() - done_ops_, g_.op_count(), detail));
}

}  // namespace

EngineResult run_engine(const workload::ExecutionGraph& graph, const net::Topology& topo,
                        const hw::ComputeModel& compute, const EngineOptions& options) {
  Engine e(graph, topo, compute, options);
  return e.run();
}

}  // namespace inflect::sim
