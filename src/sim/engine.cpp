#include "inflect/sim/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "inflect/core/error.hpp"
#include "inflect/core/event_queue.hpp"
#include "inflect/core/huge_pages.hpp"
#include "inflect/net/flow_network.hpp"

namespace inflect::sim {
namespace {

using core::Time;
using workload::ExecutionGraph;
using workload::Op;
using workload::OpId;
using workload::OpType;

/// Per-op tables: tens of millions of entries on large graphs (see core/huge_pages.hpp).
template <class T>
using BigVector = std::vector<T, core::HugePageAllocator<T>>;

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

enum EventKind : std::uint32_t { kComputeDone = 0, kPhaseLatencyDone = 1, kTransferDone = 2, kCollectiveDone = 3 };

net::CollectiveOp to_net(workload::CollectiveKind k) {
  switch (k) {
    case workload::CollectiveKind::all_reduce: return net::CollectiveOp::all_reduce;
    case workload::CollectiveKind::reduce_scatter: return net::CollectiveOp::reduce_scatter;
    case workload::CollectiveKind::all_gather: return net::CollectiveOp::all_gather;
    case workload::CollectiveKind::all_to_all: return net::CollectiveOp::all_to_all;
    case workload::CollectiveKind::send_recv: return net::CollectiveOp::send_recv;
  }
  return net::CollectiveOp::all_reduce;
}

/// A collective phase ready for the flow model: weights relative to the reference size.
struct ReadyPhase {
  std::vector<std::pair<net::LinkId, double>> weights;
  double bytes = 0;
  Time latency;
};

class Engine {
 public:
  Engine(const ExecutionGraph& g, const net::Topology& topo, const hw::ComputeModel& compute, const EngineOptions& opt)
      : g_(g), topo_(topo), opt_(opt), net_(topo.links()) {
    setup(compute);
  }

  EngineResult run();

 private:
  struct Instance {
    std::uint32_t payload = 0;
    std::uint32_t needed = 0;
    std::uint32_t arrived = 0;
    std::uint32_t member_begin = 0;  // into inst_members_
    Time start = Time::max();
    Time end;
  };
  struct Active {
    std::uint32_t instance = 0;
    std::uint32_t phase = 0;
  };

  void setup(const hw::ComputeModel& compute);
  const std::vector<ReadyPhase>& phases_for(std::uint32_t payload);
  void try_start(std::uint32_t op);  // internal index
  void finish_op(std::uint32_t op);  // internal index
  void start_collective(std::uint32_t inst);
  void start_phase(std::uint32_t active);
  void start_transfer(std::uint32_t active);
  void complete_collective(std::uint32_t inst);
  void attribute_gap(std::uint32_t slot, Time from, Time to, std::uint32_t binding);
  std::uint32_t stream_key(const Op& op) const { return static_cast<std::uint32_t>(slot_of_[static_cast<std::size_t>(op.rank)]) * nstreams_ + op.stream; }

  const ExecutionGraph& g_;
  const net::Topology& topo_;
  const EngineOptions& opt_;
  net::FlowNetwork net_;
  core::EventQueue q_;
  Time now_;

  std::vector<std::int32_t> slot_of_;
  std::uint32_t nstreams_ = 0;
  int compute_stream_ = -1;
  // The engine numbers ops internally in stream-major order: the ops of (slot 0, stream 0) in
  // issue order, then (slot 0, stream 1), ... So a stream's ops are one contiguous range, its head
  // is an index into it, and the state of the op that runs next sits beside the one that just
  // finished — on 20M-op graphs this locality, not arithmetic, is what sets the speed. Every
  // per-op array below (st_, succ_, inst_members_, events) uses internal indices; orig_ maps back
  // to the graph's OpId for observers and messages.
  std::vector<std::uint32_t> stream_begin_, stream_head_;
  BigVector<OpId> orig_;
  std::vector<char> stream_busy_;
  std::vector<std::uint32_t> comm_active_;  // per slot: collectives moving data now
  // Per slot: the compute-stream kernel in flight, for interference (comm_state_changed).
  struct Running {
    std::uint32_t op = kNone;
    double left = 0;  // picoseconds of work at full speed still to do
    Time since;       // when `left` was last settled
    Time end;         // its scheduled completion (others for it are stale)
    Time base;        // its duration without interference (at its clock)
    bool slowed = false;
  };
  std::vector<Running> running_;
  void schedule_running(std::uint32_t slot);
  void comm_state_changed(std::uint32_t slot);
  void compute_done(std::uint32_t id);
  // Tells the observer the device's power, clock and temperature after a change.
  void sample_device(std::uint32_t slot) {
    if (!opt_.observer) return;
    opt_.observer->on_device(g_, DeviceSample{g_.simulated_ranks()[slot], now_, power_.power_w(slot), power_.clock_mhz(slot),
                                              power_.temperature_c(slot)});
  }
  // Per-op state in one record, so that touching an op costs one cache line, not four.
  struct OpState {
    Time posted;                       // when it reached its stream head with deps done
    std::uint32_t remaining = 0;       // explicit deps not yet finished
    std::uint32_t binding = kNone;     // the dep that finished last (what released it)
    std::uint32_t payload = 0;         // kernel id (compute op) or collective instance
    std::uint32_t key = 0;             // its (slot, stream) index, cached: saves a dependent load
    std::uint32_t succ_begin = 0;      // successors are succ_[succ_begin, next op's succ_begin)
    std::uint8_t compute = 0;          // a compute op
    std::uint8_t on_compute_stream = 0;  // ... on the stream whose idle time is attributed
    // The engine's hot path reads only this record (32 bytes, two per cache line), never the
    // graph's Op. st_ has one extra sentinel record closing the last op's successor range.
  };
  static_assert(sizeof(OpState) == 32, "two op records per cache line");
  BigVector<OpState> st_;
  BigVector<std::uint32_t> succ_;
  // Compute.
  std::vector<Time> kernel_time_;
  std::vector<hw::KernelPower> kernel_power_;  // with a power model
  DevicePowerTracker power_;
  std::vector<double> kernel_flops_;
  // Collectives.
  std::vector<Instance> inst_;
  BigVector<std::uint32_t> inst_members_;
  std::vector<std::vector<ReadyPhase>> lowered_;
  std::vector<char> lowered_done_;
  std::map<std::tuple<workload::GroupId, int, double>, std::uint32_t> lowered_by_key_;  // -> first payload lowered
  std::vector<Active> active_;
  std::vector<std::uint32_t> free_active_;
  std::vector<std::uint32_t> transfer_owner_;
  std::vector<std::pair<net::FlowNetwork::TransferId, Time>> resched_;
  // Stats.
  std::vector<RankTimes> ranks_;
  std::vector<Time> idle_since_;
  std::vector<OpId> last_op_;
  std::vector<Time> last_end_;
  BigVector<Time> start_;   // only with an observer
  std::uint64_t done_ops_ = 0;
  std::uint64_t transfers_ = 0;
};

void Engine::setup(const hw::ComputeModel& compute) {
  const auto& ops = g_.ops();
  const std::size_t n = ops.size();
  const auto& sim = g_.simulated_ranks();
  slot_of_.assign(static_cast<std::size_t>(g_.total_ranks()), -1);
  for (std::size_t i = 0; i < sim.size(); ++i) slot_of_[static_cast<std::size_t>(sim[i])] = static_cast<std::int32_t>(i);
  nstreams_ = static_cast<std::uint32_t>(std::max<std::size_t>(1, g_.stream_names().size()));
  for (std::size_t i = 0; i < g_.stream_names().size(); ++i)
    if (g_.stream_names()[i] == opt_.compute_stream) compute_stream_ = static_cast<int>(i);

  // Streams as CSR; internal index = position in the CSR.
  const std::size_t nkeys = sim.size() * nstreams_;
  stream_begin_.assign(nkeys + 1, 0);
  std::size_t collective_ops = 0;  // an upper bound of the collective instances, matched below
  for (const Op& op : ops) {
    ++stream_begin_[stream_key(op) + 1];
    collective_ops += op.type == OpType::collective;
  }
  for (std::size_t k = 0; k < nkeys; ++k) stream_begin_[k + 1] += stream_begin_[k];
  orig_.resize(n);
  BigVector<std::uint32_t> internal(n);
  {
    std::vector<std::uint32_t> fill(stream_begin_.begin(), stream_begin_.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t at = fill[stream_key(ops[i])]++;
      orig_[at] = static_cast<OpId>(i);
      internal[i] = at;
    }
  }
  stream_head_.assign(stream_begin_.begin(), stream_begin_.end() - 1);
  stream_busy_.assign(nkeys, 0);

  // Explicit dependencies reversed into successor lists.
  st_.assign(n + 1, OpState{});
  for (std::size_t j = 0; j < n; ++j) {
    const OpId i = orig_[j];
    const Op& op = ops[i];
    auto d = g_.deps(i);
    OpState& s = st_[j];
    s.remaining = static_cast<std::uint32_t>(d.size());
    s.key = stream_key(op);
    s.compute = op.type == OpType::compute;
    s.payload = op.type == OpType::compute ? op.payload : kNone;
    s.on_compute_stream = static_cast<int>(op.stream) == compute_stream_;
    for (OpId p : d) ++st_[internal[p] + 1].succ_begin;
  }
  for (std::size_t i = 0; i < n; ++i) st_[i + 1].succ_begin += st_[i].succ_begin;
  succ_.resize(st_[n].succ_begin);
  {
    BigVector<std::uint32_t> fill(n);
    for (std::size_t j = 0; j < n; ++j) fill[j] = st_[j].succ_begin;
    for (std::size_t j = 0; j < n; ++j)
      for (OpId p : g_.deps(orig_[j])) succ_[fill[internal[p]]++] = static_cast<std::uint32_t>(j);
  }

  kernel_time_.reserve(g_.kernels().size());
  for (const auto& k : g_.kernels()) kernel_flops_.push_back(k.cost.flops.value());
  for (const auto& k : g_.kernels()) {
    if (k.parts.empty()) {
      kernel_time_.push_back(compute.duration(k.cost));
    } else {
      Time t = Time::zero();
      for (const auto& part : k.parts) t += compute.duration(part);
      kernel_time_.push_back(t);
    }
  }
  if (opt_.power.model) {
    kernel_power_.reserve(g_.kernels().size());
    for (const auto& k : g_.kernels())
      kernel_power_.push_back(k.parts.empty() ? opt_.power.model->profile(k.cost, compute)
                                              : opt_.power.model->profile(k.parts, compute));
  }
  power_.reset(opt_.power, sim.size());

  // Match the k-th call of each rank on a group into instances (NCCL's communicator order).
  const auto& groups = g_.groups();
  std::vector<std::uint32_t> needed(groups.size(), 0);
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (auto r : groups[gi].members)
      if (slot_of_[static_cast<std::size_t>(r)] >= 0) ++needed[gi];
  std::vector<std::vector<std::uint32_t>> inst_by_ordinal(groups.size());
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> ordinal(sim.size());  // per slot: (group, count)
  std::vector<std::uint32_t> inst_count;
  // At most one instance per collective op: reserving avoids regrowing (and re-touching) the
  // instance table while it fills.
  inst_.reserve(collective_ops);
  inst_count.reserve(collective_ops);
  for (std::size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    if (op.type != OpType::collective) continue;
    const auto& c = g_.collectives()[op.payload];
    auto& mine = ordinal[static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(op.rank)])];
    std::uint32_t k = 0;
    bool found = false;
    for (auto& [grp, cnt] : mine)
      if (grp == c.group) { k = cnt++; found = true; break; }
    if (!found) mine.push_back({c.group, 1});
    auto& list = inst_by_ordinal[c.group];
    if (list.size() <= k) {
      list.push_back(static_cast<std::uint32_t>(inst_.size()));
      Instance in;
      in.payload = op.payload;
      in.needed = needed[c.group];
      inst_.push_back(in);
      inst_count.push_back(0);
    }
    std::uint32_t id = list[k];
    const auto& other = g_.collectives()[inst_[id].payload];
    if (other.kind != c.kind || other.bytes != c.bytes)
      throw core::Error(core::ErrorKind::input,
                        fmt::format("op {} on rank {}: call {} on group {} is a {} of {} bytes but other members "
                                    "made it a {} of {} bytes",
                                    i, op.rank, k, c.group, workload::to_string(c.kind), c.bytes.value(),
                                    workload::to_string(other.kind), other.bytes.value()));
    st_[internal[i]].payload = id;
    ++inst_count[id];
  }
  std::uint32_t acc = 0;
  for (std::size_t i = 0; i < inst_.size(); ++i) {
    inst_[i].member_begin = acc;
    acc += inst_count[i];
  }
  inst_members_.resize(acc);
  {
    std::vector<std::uint32_t> fill(inst_.size());
    for (std::size_t i = 0; i < inst_.size(); ++i) fill[i] = inst_[i].member_begin;
    for (std::size_t i = 0; i < n; ++i)
      if (!st_[internal[i]].compute) inst_members_[fill[st_[internal[i]].payload]++] = internal[i];
  }
  lowered_.resize(g_.collectives().size());
  lowered_done_.assign(g_.collectives().size(), 0);

  ranks_.resize(sim.size());
  for (std::size_t i = 0; i < sim.size(); ++i) ranks_[i].rank = sim[i];
  idle_since_.assign(sim.size(), Time::zero());
  comm_active_.assign(sim.size(), 0);
  running_.assign(sim.size(), Running{});
  last_op_.assign(sim.size(), kNone);
  last_end_.assign(sim.size(), Time::zero());
  if (opt_.observer) start_.assign(n, Time::zero());
  q_.reserve(sim.size() * 4 + 64);
}

const std::vector<ReadyPhase>& Engine::phases_for(std::uint32_t payload) {
  if (lowered_done_[payload]) return lowered_[payload];
  const auto& c = g_.collectives()[payload];
  // Collectives of the same kind and size on the same group lower identically: lower once.
  const auto key = std::make_tuple(c.group, static_cast<int>(c.kind), c.bytes.value());
  if (auto it = lowered_by_key_.find(key); it != lowered_by_key_.end()) {
    lowered_[payload] = lowered_[it->second];
    lowered_done_[payload] = 1;
    return lowered_[payload];
  }
  lowered_by_key_.emplace(key, payload);
  const auto& grp = g_.groups()[c.group];
  const net::CollectiveOp op = to_net(c.kind);
  net::LoweredCollective rep = net::lower_collective(op, grp.members, c.bytes, topo_, opt_.tuning);
  // A mirror inside one node that holds none of the representative's members crosses only that
  // node's scale-up links, none of which the representative's routes cross (a route leaves a
  // node only through its NICs): it adds no weight, so it is not lowered (the TP groups of the
  // other replicas, thousands on a 16k-GPU run).
  std::vector<char> rep_node(static_cast<std::size_t>(topo_.nodes()), 0);
  for (auto r : grp.members) rep_node[static_cast<std::size_t>(topo_.node_of(r))] = 1;
  auto disjoint = [&](const std::vector<workload::RankId>& m) {
    const int node = topo_.node_of(m.front());
    for (auto r : m)
      if (topo_.node_of(r) != node) return false;
    return !rep_node[static_cast<std::size_t>(node)];
  };
  std::vector<ReadyPhase> out;
  for (const auto& ph : rep.phases) {
    ReadyPhase r;
    r.bytes = ph.max_link_bytes;
    r.latency = Time::from_seconds(ph.latency.value());
    if (r.bytes > 0)
      for (const auto& [l, b] : ph.link_bytes) r.weights.push_back({l, b / r.bytes});
    out.push_back(std::move(r));
  }
  // The representative's transfer weighs on each of its links as itself plus every mirror
  // crossing that link. Links only mirrors cross are left out: on symmetric inputs each is the
  // image of one of the representative's own links under the symmetry, loaded the same way.
  auto add_mirror_bytes = [&](std::size_t p, net::LinkId l, double b) {
    if (p >= out.size() || out[p].bytes <= 0) return;
    auto& w = out[p].weights;
    auto it = std::lower_bound(w.begin(), w.end(), std::make_pair(l, 0.0),
                               [](const auto& x, const auto& y) { return x.first < y.first; });
    if (it != w.end() && it->first == l) it->second += b / out[p].bytes;
  };
  for (const auto& m : grp.mirrors) {
    if (m.empty() || disjoint(m)) continue;
    if (op == net::CollectiveOp::send_recv && m.size() == 2) {
      // A point-to-point mirror is one route carrying the message: no need to lower it (a 16k-GPU
      // plan has a thousand per pipeline boundary).
      if (m[0] == m[1]) continue;
      const net::Path path = topo_.route(m[0], m[1]);
      for (int i = 0; i < path.size; ++i) add_mirror_bytes(0, path.links[static_cast<std::size_t>(i)], c.bytes.value());
      continue;
    }
    const net::LoweredCollective lm = net::lower_collective(op, m, c.bytes, topo_, opt_.tuning);
    for (std::size_t p = 0; p < lm.phases.size(); ++p)
      for (const auto& [l, b] : lm.phases[p].link_bytes) add_mirror_bytes(p, l, b);
  }
  lowered_[payload] = std::move(out);
  lowered_done_[payload] = 1;
  return lowered_[payload];
}

void Engine::try_start(std::uint32_t id) {
  OpState& st = st_[id];
  if (st.remaining != 0) return;
  const std::uint32_t key = st.key;
  if (stream_busy_[key] || stream_head_[key] != id) return;
  stream_busy_[key] = 1;
  const std::uint32_t slot = key / nstreams_;
  if (st.compute) {
    Time dur = kernel_time_[st.payload];
    ranks_[slot].flops += kernel_flops_[st.payload];
    st.posted = now_;
    if (opt_.observer) start_[id] = now_;
    if (st.on_compute_stream) {
      attribute_gap(slot, idle_since_[slot], now_, st.binding);
      if (power_.enabled()) {
        // The clock the power limit and temperature allow; 1 at the calibrated clock (exact).
        const double scale = power_.kernel_start(slot, now_, kernel_power_[st.payload]);
        sample_device(slot);
        if (scale != 1.0) {
          const Time base = dur;
          dur = Time::ps(static_cast<Time::rep>(static_cast<double>(dur.count_ps()) * scale + 0.5));
          ranks_[slot].throttle += dur - base;
        }
      }
      if (opt_.comm_interference > 0) {
        // Progress at 1/(1 + interference) while a collective of this rank moves data; the
        // completion moves when that changes (interference_changed), and compute time is
        // counted at the end.
        Running& run = running_[slot];
        run.op = id;
        run.left = static_cast<double>(dur.count_ps());
        run.base = dur;
        run.since = now_;
        run.slowed = comm_active_[slot] > 0;
        schedule_running(slot);
        return;
      }
      ranks_[slot].compute += dur;
    }
    q_.push(now_ + dur, kComputeDone, id);
    return;
  }
  st_[id].posted = now_;
  Instance& in = inst_[st_[id].payload];
  if (++in.arrived == in.needed) start_collective(st_[id].payload);
}

void Engine::schedule_running(std::uint32_t slot) {
  Running& run = running_[slot];
  const double rate = run.slowed ? 1.0 + opt_.comm_interference : 1.0;
  run.end = now_ + Time::ps(static_cast<Time::rep>(run.left * rate + 0.5));
  q_.push(run.end, kComputeDone, run.op);
}

// The rank's communication state changed: settle the running kernel's progress at the old rate
// and reschedule its completion at the new one (the old completion event goes stale).
void Engine::comm_state_changed(std::uint32_t slot) {
  Running& run = running_[slot];
  const bool slowed = comm_active_[slot] > 0;
  if (run.op == kNone || run.slowed == slowed) return;
  const double rate = run.slowed ? 1.0 + opt_.comm_interference : 1.0;
  run.left = std::max(0.0, run.left - static_cast<double>((now_ - run.since).count_ps()) / rate);
  run.since = now_;
  run.slowed = slowed;
  schedule_running(slot);
}

void Engine::compute_done(std::uint32_t id) {
  const std::uint32_t slot = st_[id].key / nstreams_;
  Running& run = running_[slot];
  if (opt_.comm_interference > 0 && st_[id].on_compute_stream) {
    if (run.op != id || run.end != now_) return;  // a completion superseded by a reschedule
    run.op = kNone;
    const Time base = run.base;
    const Time took = now_ - st_[id].posted;
    ranks_[slot].compute += took;
    if (took > base) ranks_[slot].interference += took - base;
  }
  finish_op(id);
}

void Engine::start_collective(std::uint32_t inst) {
  Instance& in = inst_[inst];
  in.start = now_;
  {
    const std::uint32_t e = inst + 1 < inst_.size() ? inst_[inst + 1].member_begin : static_cast<std::uint32_t>(inst_members_.size());
    for (std::uint32_t i = in.member_begin; i < e; ++i) {
      const std::uint32_t slot = st_[inst_members_[i]].key / nstreams_;
      if (comm_active_[slot]++ == 0) {
        if (opt_.comm_interference > 0) comm_state_changed(slot);
        if (power_.enabled()) {
          power_.communication(slot, now_, true);
          sample_device(slot);
        }
      }
    }
  }
  const auto& phases = phases_for(in.payload);
  if (phases.empty()) {
    q_.push(now_, kCollectiveDone, inst);
    return;
  }
  std::uint32_t a;
  if (!free_active_.empty()) {
    a = free_active_.back();
    free_active_.pop_back();
  } else {
    a = static_cast<std::uint32_t>(active_.size());
    active_.emplace_back();
  }
  active_[a] = Active{inst, 0};
  start_phase(a);
}

void Engine::start_phase(std::uint32_t a) {
  const auto& ph = lowered_[inst_[active_[a].instance].payload][active_[a].phase];
  if (ph.latency > Time::zero()) q_.push(now_ + ph.latency, kPhaseLatencyDone, a);
  else start_transfer(a);
}

void Engine::start_transfer(std::uint32_t a) {
  const auto& ph = lowered_[inst_[active_[a].instance].payload][active_[a].phase];
  auto t = net_.start(now_, ph.weights, ph.bytes);
  if (transfer_owner_.size() <= t) transfer_owner_.resize(t + 1, kNone);
  transfer_owner_[t] = a;
  ++transfers_;
}

void Engine::complete_collective(std::uint32_t inst) {
  Instance& in = inst_[inst];
  in.end = now_;
  const std::uint32_t e = inst + 1 < inst_.size() ? inst_[inst + 1].member_begin : static_cast<std::uint32_t>(inst_members_.size());
  for (std::uint32_t i = in.member_begin; i < e; ++i) {
    const std::uint32_t slot = st_[inst_members_[i]].key / nstreams_;
    if (--comm_active_[slot] == 0) {
      if (opt_.comm_interference > 0) comm_state_changed(slot);
      if (power_.enabled()) {
        power_.communication(slot, now_, false);
        sample_device(slot);
      }
    }
  }
  for (std::uint32_t i = in.member_begin; i < e; ++i) {
    if (opt_.observer) start_[inst_members_[i]] = in.start;
    finish_op(inst_members_[i]);
  }
}

void Engine::finish_op(std::uint32_t id) {
  const std::uint32_t key = st_[id].key;
  const std::uint32_t slot = key / nstreams_;
  ++done_ops_;
  if (opt_.observer) opt_.observer->on_op(g_, OpSpan{orig_[id], st_[id].posted, start_[id], now_});
  if (st_[id].on_compute_stream && st_[id].compute) {
    idle_since_[slot] = now_;
    if (power_.enabled()) {
      power_.kernel_end(slot, now_);
      sample_device(slot);
    }
  }
  if (now_ >= last_end_[slot]) {
    last_end_[slot] = now_;
    last_op_[slot] = id;
  }
  stream_busy_[key] = 0;
  ++stream_head_[key];
  for (std::uint32_t s = st_[id].succ_begin, e = st_[id + 1].succ_begin; s < e; ++s) {
    const std::uint32_t nx = succ_[s];
    if (--st_[nx].remaining == 0) {
      st_[nx].binding = id;
      try_start(nx);
    }
  }
  if (stream_head_[key] < stream_begin_[key + 1]) {
    const std::uint32_t next = stream_head_[key];
    // If its deps were already done, the stream's order is what held it: this op released it
    // (e.g. a gradient bucket queued behind the previous bucket on the dp stream).
    if (st_[next].remaining == 0 && !stream_busy_[key]) st_[next].binding = id;
    try_start(next);
  }
}

// The compute stream of `slot` idled from `from` to `to`; `binding` is the dependency that
// released the op that ended the idle. Walking back along bindings: while the binding collective's
// data was moving, the idle is exposed communication of its dimension; while it had arrived but
// waited for its peers, the idle is pipeline bubble (for pipeline point-to-point) or "other"; before
// it arrived, the idle is explained by what released *it*, recursively.
void Engine::attribute_gap(std::uint32_t slot, Time from, Time to, std::uint32_t binding) {
  RankTimes& r = ranks_[slot];
  while (to > from) {
    if (binding == kNone || st_[binding].compute) {
      r.other += to - from;
      return;
    }
    const Instance& in = inst_[st_[binding].payload];
    const auto dim = g_.collectives()[in.payload].dim;
    const Time posted = st_[binding].posted;
    auto overlap = [&](Time a, Time b) {
      Time lo = std::max(from, a), hi = std::min(to, b);
      return hi > lo ? hi - lo : Time::zero();
    };
    r.exposed[static_cast<std::size_t>(dim)] += overlap(in.start, in.end);
    const Time waiting = overlap(posted, in.start);
    if (dim == workload::ParallelDim::pp) r.bubble += waiting;
    else r.other += waiting;
    // Idle after the collective ended (another stream's op released the compute op) is "other".
    r.other += overlap(std::max(in.end, posted), to);
    to = std::min(to, posted);
    binding = st_[binding].binding;
  }
}

EngineResult Engine::run() {
  if (opt_.observer) opt_.observer->on_begin(g_);
  now_ = Time::zero();
  if (power_.enabled())
    for (std::uint32_t slot = 0; slot < ranks_.size(); ++slot) sample_device(slot);  // the idle state at zero
  // Every stream's first op may start at time zero.
  for (std::uint32_t k = 0; k + 1 < stream_begin_.size(); ++k)
    if (stream_begin_[k] < stream_begin_[k + 1]) try_start(stream_begin_[k]);
  std::uint64_t events = 0;
  while (true) {
    net_.resolve(now_, resched_);
    for (const auto& [t, when] : resched_)
      if (when != Time::max()) q_.push(when, kTransferDone, t, net_.stamp(t));
    resched_.clear();
    if (q_.empty()) break;
    now_ = q_.top().time;
    // Process every event at this instant, then re-solve the network once.
    while (!q_.empty() && q_.top().time == now_) {
      core::Event e = q_.pop();
      ++events;
      switch (e.kind()) {
        case kComputeDone: compute_done(e.id); break;
        case kPhaseLatencyDone: start_transfer(e.id); break;
        case kTransferDone: {
          if (e.stamp != net_.stamp(e.id) || transfer_owner_[e.id] == kNone) break;  // stale
          std::uint32_t a = transfer_owner_[e.id];
          transfer_owner_[e.id] = kNone;
          net_.finish(e.id);
          Active& act = active_[a];
          const auto& phases = lowered_[inst_[act.instance].payload];
          if (++act.phase < phases.size()) {
            start_phase(a);
          } else {
            std::uint32_t inst = act.instance;
            free_active_.push_back(a);
            complete_collective(inst);
          }
          break;
        }
        case kCollectiveDone: complete_collective(e.id); break;
        default: core::check_invariant(false, "unknown event kind");
      }
    }
  }
  if (done_ops_ != g_.ops().size()) {
    // Find a stuck op to name.
    std::string detail;
    for (std::uint32_t k = 0; k + 1 < stream_begin_.size() && detail.empty(); ++k) {
      if (stream_head_[k] < stream_begin_[k + 1]) {
        const std::uint32_t id = stream_head_[k];
        const Op& op = g_.ops()[orig_[id]];
        if (op.type == OpType::collective) {
          const Instance& in = inst_[st_[id].payload];
          detail = fmt::format("op {} on rank {} waits in collective '{}' ({} of {} members arrived)", orig_[id], op.rank,
                               g_.collectives()[op.payload].name, in.arrived, in.needed);
        } else {
          detail = fmt::format("op {} on rank {} waits for {} dependencies", orig_[id], op.rank, st_[id].remaining);
        }
      }
    }
    throw core::Error(core::ErrorKind::input,
                      fmt::format("deadlock: {} of {} ops never ran; {}", g_.ops().size() - done_ops_, g_.ops().size(), detail));
  }
  EngineResult res;
  for (std::size_t s = 0; s < ranks_.size(); ++s) {
    RankTimes& r = ranks_[s];
    r.finish = last_end_[s];
    // The tail after the last compute op: attribute it to what finished last on the rank.
    if (r.finish > idle_since_[s]) {
      std::uint32_t last = last_op_[s];
      attribute_gap(static_cast<std::uint32_t>(s), idle_since_[s], r.finish, last);
    }
    res.makespan = std::max(res.makespan, r.finish);
  }
  if (power_.enabled()) {
    power_.finish(res.makespan);
    res.power = power_.devices();
  }
  res.ranks = std::move(ranks_);
  res.events = events;
  res.transfers = transfers_;
  if (opt_.observer) opt_.observer->on_end(g_, res.makespan);
  return res;
}

}  // namespace

EngineResult run_engine(const workload::ExecutionGraph& graph, const net::Topology& topo,
                        const hw::ComputeModel& compute, const EngineOptions& options) {
  Engine e(graph, topo, compute, options);
  return e.run();
}

}  // namespace inflect::sim
