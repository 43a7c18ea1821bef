#include "inflect/sim/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "inflect/core/error.hpp"
#include "inflect/core/event_queue.hpp"
#include "inflect/core/free_slots.hpp"
#include "inflect/core/huge_pages.hpp"
#include "inflect/net/flow_network.hpp"

namespace inflect::sim {
namespace {

using core::Time;
using workload::ExecutionGraph;
using workload::GroupId;
using workload::Op;
using workload::OpId;
using workload::OpType;

/// Template tables: on a symmetric graph every rank is its own class, so they hold every op.
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

// How the engine holds a graph of millions of ops without a record per op.
//
// Ranks whose op sequences are the same up to the process groups they call (the data-parallel
// replicas of a pipeline stage, the members of a tensor-parallel group) form a class. The engine
// keeps one template per class — its ops in stream-major order, their dependencies and successors
// — and per rank only the class, the group each of the class's "roles" stands for on this rank,
// and where each of its streams has got to. An op is done when its stream's head has passed it
// (a stream runs its ops in order), so no per-op counter is needed either. What a rank's past ops
// must remember (when they were posted and what released them, for the step-time breakdown)
// lives in a small ring per stream, grown whenever a record the breakdown may still walk back to
// would be overwritten. A 1,024-rank GPT-3 step (21M ops) thus runs on a few megabytes of state
// instead of gigabytes, and the memory it touches per event stays in cache.
class Engine {
 public:
  Engine(const ExecutionGraph& g, const net::Topology& topo, const hw::ComputeModel& compute, const EngineOptions& opt)
      : g_(g), topo_(topo), opt_(opt), net_(topo.links()) {
    setup(compute);
  }

  EngineResult run();

 private:
  /// One op of a class template. Indices of templates (`top`s) are global over all classes.
  struct TOp {
    std::uint32_t payload = 0;     // kernel id, or the class representative's collective id
    std::uint32_t succ_begin = 0;  // successors are tsucc_[succ_begin, next TOp's succ_begin)
    std::uint32_t dep_begin = 0;   // dependencies are tdeps_[dep_begin, next TOp's dep_begin)
    std::uint32_t ordinal = 0;     // collective: this is the rank's ordinal-th call on its group
    std::uint16_t role = 0;        // collective: which of the rank's groups it calls
    std::uint8_t stream = 0;
    std::uint8_t compute = 0;            // a compute op
    std::uint8_t on_compute_stream = 0;  // ... on the stream whose idle time is attributed
    workload::ParallelDim dim = workload::ParallelDim::dp;  // collective: its dimension (for the breakdown)
  };
  struct RankClass {
    std::uint32_t rep = 0;    // the slot whose ops define the template
    std::uint32_t nops = 0;
    std::uint32_t nroles = 0;
    std::vector<std::uint32_t> top_of_local;  // the rank's j-th op (issue order) -> template op
  };
  /// What the breakdown needs of a past collective op (see attribute_gap; compute ops keep none).
  struct Record {
    Time posted;                 // when it reached its stream head with deps done
    Time start;                  // when data began to move
    Time end = Time::max();      // when it finished
    std::uint32_t top = kNone;   // which op (template index; the ring is per rank and stream)
    std::uint32_t binding = kNone;  // the op that released it (template index, same rank)
  };
  struct Instance {
    std::uint32_t top = 0;     // the first arrival's template op (kind, bytes, dim)
    GroupId group = 0;
    std::uint32_t ordinal = 0;
    std::uint32_t needed = 0;
    std::uint32_t lowered = 0;
    std::uint32_t next_open = kNone;  // the group's next live instance
    Time start = Time::max();
    Time end;
    std::vector<std::uint32_t> members;  // (slot, stream) keys that arrived
  };
  struct Active {
    std::uint32_t instance = 0;
    std::uint32_t phase = 0;
  };

  void setup(const hw::ComputeModel& compute);
  void build_classes();
  std::uint32_t build_class(std::uint32_t slot);
  bool matches(const RankClass& c, std::uint32_t slot);
  OpId op_id(std::uint32_t slot, std::uint32_t local) const {
    return local_ids_.empty() || is_replica_[slot] ? slot_first_[slot] + local : local_ids_[slot_first_[slot] + local];
  }
  std::uint32_t local_of(std::uint32_t slot, OpId id) const {
    return local_ids_.empty() ? id - slot_first_[slot] : local_of_[id];
  }
  OpId orig(std::uint32_t slot, std::uint32_t top) const {
    return op_id(slot, tlocal_[top]);
  }
  // Paths taken once per group and size, or only on bad input, kept out of line so that the hot
  // functions they would be inlined into (start_head, finish_op) stay small.
  [[gnu::noinline]] std::uint32_t lowered_for(GroupId group, const workload::Collective& c);
  [[gnu::noinline, gnu::cold]] void mismatched_call(std::uint32_t slot, std::uint32_t top, std::uint32_t inst);
  [[gnu::noinline]] void grow_ring(std::uint32_t key);
  bool deps_done(std::uint32_t base, std::uint32_t top) const {
    for (std::uint32_t d = tops_[top].dep_begin, e = tops_[top + 1].dep_begin; d < e; ++d) {
      const std::uint32_t dep = tdeps_[d];
      if (st_[base + tops_[dep].stream].head <= dep) return false;
    }
    return true;
  }
  Record& put_record(std::uint32_t key, std::uint32_t top);
  Record& record(std::uint32_t slot, std::uint32_t top);
  void start_head(std::uint32_t key, std::uint32_t binding);  // head op is ready: start it
  void try_start(std::uint32_t key, std::uint32_t binding) {
    const std::uint32_t top = st_[key].head;
    if (st_[key].busy || top >= st_[key].end) return;
    if (!deps_done(key & ~smask_, top)) return;
    start_head(key, binding);
  }
  /// The stream's head op finished now; a collective's data began to move at `moved`.
  void finish_op(std::uint32_t key, Time moved = Time::zero());
  std::uint32_t find_instance(GroupId group, std::uint32_t ordinal) const;
  void arrive(std::uint32_t key, std::uint32_t top);
  void start_collective(std::uint32_t inst);
  void start_phase(std::uint32_t active);
  void start_transfer(std::uint32_t active);
  void complete_collective(std::uint32_t inst);
  void attribute_gap(std::uint32_t slot, Time from, Time to, std::uint32_t binding);

  const ExecutionGraph& g_;
  const net::Topology& topo_;
  const EngineOptions& opt_;
  net::FlowNetwork net_;
  core::EventQueue q_;
  Time now_;

  std::vector<std::int32_t> slot_of_;
  std::uint32_t nstreams_ = 0;
  // Keys of (rank, stream) pairs are slot << shift_ | stream: the hot path splits them with a shift
  // and a mask instead of a division (streams padded to a power of two; the padding is empty).
  std::uint32_t shift_ = 0, smask_ = 0;
  int compute_stream_ = -1;
  // Each simulated rank's ops in issue order: op_id(slot, j). On a graph whose ranks' ops are
  // contiguous (what the compiler emits) that is slot_first_[slot] + j and the two tables below
  // stay empty.
  // A replica's ops (ExecutionGraph::end_rank) are ids slot_first_[slot] + j, beyond ops().
  std::vector<std::uint32_t> slot_first_, slot_count_;
  std::vector<char> is_replica_;
  std::vector<OpId> local_ids_;
  std::vector<std::uint32_t> local_of_;
  // Templates.
  std::vector<RankClass> classes_;
  BigVector<TOp> tops_;  // with one sentinel closing the last op's ranges
  BigVector<std::uint32_t> tdeps_, tsucc_, tlocal_;
  std::vector<std::uint32_t> nsucc_;  // build_class's scratch
  // Per class: its streams' first template ops and one past the last, nstreams_ + 1 entries.
  std::vector<std::uint32_t> tstream_begin_;
  std::uint32_t stream_first(std::uint32_t slot, std::uint32_t stream) const {
    return tstream_begin_[sl_[slot].cls * (nstreams_ + 1) + stream];
  }
  // Per rank and per (rank, stream), each in one struct: an event reads and writes most fields of
  // its rank's and its stream's (head, busy, records, idle time, accumulators), so keeping them
  // together costs one or two cache lines per event instead of one per field's array.
  // The compute-stream kernel in flight, for interference (comm_state_changed).
  struct Running {
    std::uint32_t top = kNone;
    double left = 0;  // picoseconds of work at full speed still to do
    Time since;       // when `left` was last settled
    Time end;         // its scheduled completion (others for it are stale)
    Time base;        // its duration without interference (at its clock)
    bool slowed = false;
  };
  struct Slot {
    RankTimes times;              // the breakdown's accumulators
    Time idle_since;              // when the compute stream last went idle
    Time last_end;                // when the rank's latest op finished ...
    std::uint32_t last_top = kNone;  // ... and which
    std::uint32_t comm_active = 0;   // collectives moving data now
    bool comm_on = false;       // what the power tracker and interference were last told
    bool comm_pending = false;  // comm_active crossed zero this instant (in pending_comm_)
    std::uint32_t bind_begin = 0;    // the rank's groups by role: bind_[bind_begin + role]
    std::uint32_t cls = kNone;       // its class
    Running run;
  };
  struct Stream {  // key = (slot << shift_) + stream
    std::uint32_t head = 0;       // the next op to run (template index)
    std::uint32_t end = 0;        // one past the stream's last op
    std::uint32_t first = 0;      // the stream's first template op (its records' origin)
    std::uint32_t ring_at = 0;    // its record ring: op at stream position p is recs_[ring_at + (p & ring_mask)]
    std::uint32_t ring_mask = 0;
    std::uint32_t busy = 0;       // an op is running
    Time started;                 // when the running compute op started
  };
  std::vector<Slot> sl_;
  std::vector<Stream> st_;
  std::vector<GroupId> bind_;
  // Each stream's ring is a power-of-two block of recs_. One pool, so neighbouring streams share
  // cache lines.
  std::vector<Record> recs_;
  void schedule_running(std::uint32_t key);
  void comm_state_changed(std::uint32_t slot);
  // Whether a rank's collectives move data matters to its power and to its running kernel's
  // speed. Half of a TP-heavy step's transitions undo one another within an instant (a
  // reduce-scatter ends and the next all-gather starts at once), so a crossing of zero is noted
  // and applied at the end of the instant, or before the rank's next kernel starts or ends,
  // whichever is first: the power and interference models see the same sequence of states,
  // without the pairs that change nothing.
  std::vector<std::uint32_t> pending_comm_;
  void comm_crossed(std::uint32_t slot) {
    if (!power_.enabled() && opt_.comm_interference <= 0) return;
    Slot& sl = sl_[slot];
    if (sl.comm_pending) return;
    sl.comm_pending = true;
    pending_comm_.push_back(slot);
  }
  void apply_comm(std::uint32_t slot) {
    Slot& sl = sl_[slot];
    if (!sl.comm_pending) return;
    sl.comm_pending = false;
    const bool on = sl.comm_active > 0;
    if (on == sl.comm_on) return;
    sl.comm_on = on;
    if (opt_.comm_interference > 0) comm_state_changed(slot);
    if (power_.enabled()) {
      power_.communication(slot, now_, on);
      sample_device(slot);
    }
  }
  void compute_done(std::uint32_t key);
  // Tells the observer the device's power, clock and temperature after a change.
  void sample_device(std::uint32_t slot) {
    if (!opt_.observer) return;
    opt_.observer->on_device(g_, DeviceSample{g_.simulated_ranks()[slot], now_, power_.power(slot), power_.clock_mhz(slot),
                                              power_.temperature(slot)});
  }
  // Compute.
  std::vector<Time> kernel_time_;
  std::vector<hw::KernelPower> kernel_power_;  // with a power model
  DevicePowerTracker power_;
  std::vector<double> kernel_flops_;
  // Collectives: live instances, found by (group, ordinal) through a list per group (open_head_,
  // Instance::next_open): a group rarely has more than one or two open at a time.
  std::vector<std::uint32_t> needed_;  // per group: its simulated members
  std::vector<Instance> inst_;
  std::vector<std::uint32_t> free_inst_;
  std::vector<std::uint32_t> open_head_;  // per group: a live instance, or kNone
  std::vector<std::uint32_t> scratch_;
  struct LoweredKey {
    const workload::Collective* c;  // kind, size and what follows it
    std::uint32_t index;
  };
  std::vector<ReadyPhase> lower(GroupId group, workload::CollectiveKind kind, core::Bytes bytes);
  std::vector<std::vector<LoweredKey>> lowered_of_group_;
  std::vector<std::vector<ReadyPhase>> lowered_;
  std::vector<Active> active_;
  std::vector<std::uint32_t> free_active_;
  std::vector<std::uint32_t> transfer_owner_;
  std::vector<std::pair<net::FlowNetwork::TransferId, Time>> resched_;
  // Stats.
  std::uint64_t done_ops_ = 0;
  std::uint64_t transfers_ = 0;
};

void Engine::setup(const hw::ComputeModel& compute) {
  const auto& sim = g_.simulated_ranks();
  slot_of_.assign(static_cast<std::size_t>(g_.total_ranks()), -1);
  for (std::size_t i = 0; i < sim.size(); ++i) slot_of_[static_cast<std::size_t>(sim[i])] = static_cast<std::int32_t>(i);
  nstreams_ = static_cast<std::uint32_t>(std::max<std::size_t>(1, g_.stream_names().size()));
  while ((1u << shift_) < nstreams_) ++shift_;
  smask_ = (1u << shift_) - 1;
  for (std::size_t i = 0; i < g_.stream_names().size(); ++i)
    if (g_.stream_names()[i] == opt_.compute_stream) compute_stream_ = static_cast<int>(i);

  sl_.assign(sim.size(), Slot{});
  build_classes();

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

  const auto& groups = g_.groups();
  needed_.assign(groups.size(), 0);
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (auto r : groups[gi].members)
      if (static_cast<std::size_t>(r) < slot_of_.size() && slot_of_[static_cast<std::size_t>(r)] >= 0) ++needed_[gi];
  open_head_.assign(groups.size(), kNone);
  lowered_of_group_.assign(groups.size(), {});

  const std::size_t nkeys = sim.size() << shift_;
  st_.assign(nkeys, Stream{});  // the padding streams stay empty (head == end)
  for (std::uint32_t slot = 0; slot < sim.size(); ++slot)
    for (std::uint32_t s = 0; s < nstreams_; ++s) {
      st_[(slot << shift_) + s].head = stream_first(slot, s);
      st_[(slot << shift_) + s].first = stream_first(slot, s);
      st_[(slot << shift_) + s].end = stream_first(slot, s + 1);
    }
  constexpr std::uint32_t kRing = 4;
  recs_.assign(nkeys * kRing, Record{});
  for (std::size_t k = 0; k < nkeys; ++k) {
    st_[k].ring_at = static_cast<std::uint32_t>(k * kRing);
    st_[k].ring_mask = kRing - 1;
  }

  for (std::size_t i = 0; i < sim.size(); ++i) sl_[i].times.rank = sim[i];
  q_.reserve(sim.size() * 4 + 64);
}

// Lists each simulated rank's ops, then sorts the ranks into classes (see the comment on Engine).
void Engine::build_classes() {
  const auto& ops = g_.ops();
  const std::size_t n = ops.size();
  const std::size_t nslots = g_.simulated_ranks().size();
  slot_first_.assign(nslots, 0);
  slot_count_.assign(nslots, 0);
  bool contiguous = true;
  {
    std::vector<char> seen(nslots, 0);
    std::int64_t prev = -1;
    for (std::size_t i = 0; i < n; ++i) {
      const auto slot = static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(ops[i].rank)]);
      if (static_cast<std::int64_t>(slot) != prev) {
        if (seen[slot]) contiguous = false;
        seen[slot] = 1;
        prev = static_cast<std::int64_t>(slot);
        if (slot_count_[slot] == 0) slot_first_[slot] = static_cast<std::uint32_t>(i);
      }
      ++slot_count_[slot];
    }
  }
  is_replica_.assign(nslots, 0);
  for (const auto& rep : g_.replicas()) {
    const auto slot = static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(rep.rank)]);
    is_replica_[slot] = 1;
    slot_first_[slot] = static_cast<std::uint32_t>(n + rep.offset);
    slot_count_[slot] = g_.kept_ranks()[rep.kept].count;
  }
  if (!contiguous) {
    // Ops of the ranks interleave (a hand-written or imported graph): list them per rank.
    std::uint32_t acc = 0;
    for (std::size_t s = 0; s < nslots; ++s) {
      if (is_replica_[s]) continue;
      slot_first_[s] = acc;
      acc += slot_count_[s];
    }
    local_ids_.resize(n);
    local_of_.resize(n);
    std::vector<std::uint32_t> fill(slot_first_);
    for (std::size_t i = 0; i < n; ++i) {
      const auto slot = static_cast<std::size_t>(slot_of_[static_cast<std::size_t>(ops[i].rank)]);
      local_of_[i] = fill[slot] - slot_first_[slot];
      local_ids_[fill[slot]++] = static_cast<OpId>(i);
    }
  }
  // Room for the worst case (every rank its own class) without regrowing; only the part used is
  // ever touched, so a 21M-op graph of 16 classes pays for 16 ranks' worth.
  tops_.reserve(n + 1);
  tlocal_.reserve(n);
  tdeps_.reserve(g_.dep_storage().size());
  tsucc_.reserve(g_.dep_storage().size());
  for (std::uint32_t slot = 0; slot < nslots; ++slot) {
    if (is_replica_[slot]) continue;
    for (std::uint32_t c = 0; c < classes_.size() && sl_[slot].cls == kNone; ++c)
      if (classes_[c].nops == slot_count_[slot] && matches(classes_[c], slot)) sl_[slot].cls = c;
    if (sl_[slot].cls == kNone) sl_[slot].cls = build_class(slot);
  }
  // A replica runs its kept rank's class on its own groups: each of the kept rank's groups maps to
  // the replica's through their collectives (end_rank checked that the map is one-to-one).
  const auto& colls = g_.collectives();
  for (const auto& rep : g_.replicas()) {
    const auto slot = static_cast<std::uint32_t>(slot_of_[static_cast<std::size_t>(rep.rank)]);
    const auto& kept = g_.kept_ranks()[rep.kept];
    const auto like = static_cast<std::uint32_t>(slot_of_[static_cast<std::size_t>(kept.rank)]);
    const std::uint32_t c = sl_[like].cls;
    sl_[slot].cls = c;
    sl_[slot].bind_begin = static_cast<std::uint32_t>(bind_.size());
    for (std::uint32_t role = 0; role < classes_[c].nroles; ++role) {
      const GroupId theirs = bind_[sl_[like].bind_begin + role];
      GroupId ours = kNone;
      for (std::size_t i = 0; i < kept.colls.size() && ours == kNone; ++i)
        if (colls[kept.colls[i]].group == theirs) ours = colls[rep.colls[i]].group;
      core::check_invariant(ours != kNone, "a replica's kept rank calls a group it has no collective on");
      bind_.push_back(ours);
    }
  }
  TOp sentinel;
  sentinel.dep_begin = static_cast<std::uint32_t>(tdeps_.size());
  sentinel.succ_begin = static_cast<std::uint32_t>(tsucc_.size());
  tops_.push_back(sentinel);
}

// Makes `slot` the representative of a new class: its ops become the template.
std::uint32_t Engine::build_class(std::uint32_t slot) {
  const auto& ops = g_.ops();
  const auto c = static_cast<std::uint32_t>(classes_.size());
  RankClass rc;
  rc.rep = slot;
  rc.nops = slot_count_[slot];
  const auto base = static_cast<std::uint32_t>(tops_.size());
  // Stream-major order: a stream's ops are one contiguous range and its head an index into it.
  std::vector<std::uint32_t> count(nstreams_ + 1, 0);
  for (std::uint32_t j = 0; j < rc.nops; ++j) ++count[ops[op_id(slot, j)].stream + 1];
  for (std::uint32_t s = 0; s < nstreams_; ++s) count[s + 1] += count[s];
  for (std::uint32_t s = 0; s <= nstreams_; ++s) tstream_begin_.push_back(base + count[s]);
  rc.top_of_local.resize(rc.nops);
  tops_.resize(base + rc.nops);
  tlocal_.resize(base + rc.nops);
  std::vector<std::uint32_t> fill(count.begin(), count.end() - 1);
  // Roles: the rank's distinct groups in the order of first use.
  std::vector<GroupId> roles;
  std::vector<std::uint32_t> calls;  // per role
  const auto& colls = g_.collectives();
  for (std::uint32_t j = 0; j < rc.nops; ++j) {
    const Op& op = ops[op_id(slot, j)];
    const std::uint32_t t = base + fill[op.stream]++;
    rc.top_of_local[j] = t;
    tlocal_[t] = j;
    TOp& top = tops_[t];
    top.stream = op.stream;
    top.compute = op.type == OpType::compute;
    top.on_compute_stream = static_cast<int>(op.stream) == compute_stream_;
    top.payload = op.payload;
    if (!top.compute) {
      const GroupId grp = colls[op.payload].group;
      std::uint32_t role = 0;
      while (role < roles.size() && roles[role] != grp) ++role;
      if (role == roles.size()) {
        if (roles.size() >= std::numeric_limits<std::uint16_t>::max())
          throw core::Error(core::ErrorKind::input, fmt::format("rank {} calls more than 65535 process groups",
                                                                g_.simulated_ranks()[slot]));
        roles.push_back(grp);
        calls.push_back(0);
      }
      top.role = static_cast<std::uint16_t>(role);
      top.dim = colls[op.payload].dim;
      top.ordinal = calls[role]++;
    }
  }
  // Dependencies and successors in template order (successors sorted, as they are pushed in order).
  auto& nsucc = nsucc_;
  nsucc.assign(rc.nops + 1, 0);
  for (std::uint32_t t = base; t < base + rc.nops; ++t) {
    tops_[t].dep_begin = static_cast<std::uint32_t>(tdeps_.size());
    for (OpId d : g_.deps(op_id(slot, tlocal_[t]))) {
      const std::uint32_t dt = rc.top_of_local[local_of(slot, d)];
      tdeps_.push_back(dt);
      ++nsucc[dt - base + 1];
    }
  }
  for (std::uint32_t i = 0; i < rc.nops; ++i) nsucc[i + 1] += nsucc[i];
  const auto succ_base = static_cast<std::uint32_t>(tsucc_.size());
  tsucc_.resize(succ_base + nsucc[rc.nops]);
  for (std::uint32_t i = 0; i < rc.nops; ++i) tops_[base + i].succ_begin = succ_base + nsucc[i];
  for (std::uint32_t t = base; t < base + rc.nops; ++t) {
    const std::uint32_t e = t + 1 < base + rc.nops ? tops_[t + 1].dep_begin : static_cast<std::uint32_t>(tdeps_.size());
    for (std::uint32_t d = tops_[t].dep_begin; d < e; ++d) tsucc_[succ_base + nsucc[tdeps_[d] - base]++] = t;
  }
  rc.nroles = static_cast<std::uint32_t>(roles.size());
  sl_[slot].bind_begin = static_cast<std::uint32_t>(bind_.size());
  bind_.insert(bind_.end(), roles.begin(), roles.end());
  classes_.push_back(std::move(rc));
  return c;
}

// Whether `slot` runs the class's ops: the same streams, kernels, collective kinds, sizes and
// dimensions and the same dependencies, its groups standing one-to-one for the class's roles.
bool Engine::matches(const RankClass& c, std::uint32_t slot) {
  const auto& ops = g_.ops();
  const auto& colls = g_.collectives();
  const std::uint32_t bind = static_cast<std::uint32_t>(bind_.size());
  bind_.resize(bind + c.nroles, kNone);
  auto fail = [&] {
    bind_.resize(bind);
    return false;
  };
  for (std::uint32_t j = 0; j < c.nops; ++j) {
    const OpId ia = op_id(c.rep, j), ib = op_id(slot, j);
    const Op& a = ops[ia];
    const Op& b = ops[ib];
    if (a.stream != b.stream || a.type != b.type) return fail();
    const auto da = g_.deps(ia), db = g_.deps(ib);
    if (da.size() != db.size()) return fail();
    for (std::size_t k = 0; k < da.size(); ++k)
      if (local_of(c.rep, da[k]) != local_of(slot, db[k])) return fail();
    if (a.type == OpType::compute) {
      if (a.payload != b.payload) return fail();
      continue;
    }
    const auto& cb = colls[b.payload];
    if (a.payload != b.payload) {  // the same entry is the same call
      const auto& ca = colls[a.payload];
      if (!workload::same_traffic(ca, cb) || ca.dim != cb.dim) return fail();
    }
    const std::uint32_t role = tops_[c.top_of_local[j]].role;
    if (bind_[bind + role] == kNone) bind_[bind + role] = cb.group;
    else if (bind_[bind + role] != cb.group) return fail();
  }
  // One-to-one: two roles on one group would merge their call sequences.
  std::vector<GroupId> sorted(bind_.begin() + bind, bind_.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return fail();
  sl_[slot].bind_begin = bind;
  return true;
}

std::uint32_t Engine::lowered_for(GroupId group, const workload::Collective& c) {
  // Collectives of the same kind and size (and followers) on the same group lower identically:
  // lower once.
  auto& mine = lowered_of_group_[group];
  for (const auto& k : mine)
    if (workload::same_traffic(*k.c, c)) return k.index;
  const auto index = static_cast<std::uint32_t>(lowered_.size());
  mine.push_back(LoweredKey{&c, index});
  // A collective with followers (Collective::then) runs their phases after its own, in order.
  std::vector<ReadyPhase> out = lower(group, c.kind, c.bytes);
  for (const auto& part : c.then) {
    std::vector<ReadyPhase> more = lower(group, part.kind, part.bytes);
    for (auto& ph : more) out.push_back(std::move(ph));
  }
  lowered_.push_back(std::move(out));
  return index;
}

std::vector<ReadyPhase> Engine::lower(GroupId group, workload::CollectiveKind kind, core::Bytes bytes) {
  const auto& grp = g_.groups()[group];
  const net::CollectiveOp op = to_net(kind);
  net::LoweredCollective rep = net::lower_collective(op, grp.members, bytes, topo_, opt_.tuning);
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
      for (int i = 0; i < path.size; ++i) add_mirror_bytes(0, path.links[static_cast<std::size_t>(i)], bytes.value());
      continue;
    }
    const net::LoweredCollective lm = net::lower_collective(op, m, bytes, topo_, opt_.tuning);
    for (std::size_t p = 0; p < lm.phases.size(); ++p)
      for (const auto& [l, b] : lm.phases[p].link_bytes) add_mirror_bytes(p, l, b);
  }
  return out;
}

// The record of the op at template index `top` on stream `key`, replacing the oldest one in the
// ring. A replaced record must be one the breakdown can no longer reach: attribute_gap walks back
// only through ops that finished after the rank's compute stream last went idle (each op it visits
// released the previous one, i.e. finished when that one was posted, after the gap began). If the
// oldest may still be reached, the ring doubles.
Engine::Record& Engine::put_record(std::uint32_t key, std::uint32_t top) {
  const std::uint32_t slot = (key >> shift_);
  const std::uint32_t pos = top - st_[key].first;
  while (true) {
    Record& r = recs_[st_[key].ring_at + (pos & st_[key].ring_mask)];
    if (r.top == kNone || r.end <= sl_[slot].idle_since) return r;
    grow_ring(key);
  }
}

// Grow: a block twice the size at the end of the pool (the old one is left unused).
void Engine::grow_ring(std::uint32_t key) {
  const std::uint32_t first = st_[key].first;
  const std::uint32_t old_at = st_[key].ring_at, old_size = st_[key].ring_mask + 1;
  const auto at = static_cast<std::uint32_t>(recs_.size());
  recs_.resize(recs_.size() + 2 * old_size);
  for (std::uint32_t i = 0; i < old_size; ++i) {
    const Record old = recs_[old_at + i];
    if (old.top != kNone) recs_[at + ((old.top - first) & (2 * old_size - 1))] = old;
  }
  st_[key].ring_at = at;
  st_[key].ring_mask = 2 * old_size - 1;
}

Engine::Record& Engine::record(std::uint32_t slot, std::uint32_t top) {
  const std::uint32_t key = (slot << shift_) + tops_[top].stream;
  const std::uint32_t pos = top - st_[key].first;
  Record& r = recs_[st_[key].ring_at + (pos & st_[key].ring_mask)];
  core::check_invariant(r.top == top, "breakdown walked back to an op whose record was replaced");
  return r;
}

void Engine::start_head(std::uint32_t key, std::uint32_t binding) {
  const std::uint32_t top = st_[key].head;
  const TOp& t = tops_[top];
  st_[key].busy = 1;
  const std::uint32_t slot = (key >> shift_);
  if (!t.compute) {
    // Only collectives keep records: the breakdown's walk stops at a compute op without reading
    // its record, and a running kernel's start is kept per stream (Stream::started).
    Record& rec = put_record(key, top);
    rec.top = top;
    rec.binding = binding;
    rec.posted = now_;
    rec.start = now_;
    rec.end = Time::max();
    arrive(key, top);
    return;
  }
  st_[key].started = now_;
  Time dur = kernel_time_[t.payload];
  sl_[slot].times.flops += kernel_flops_[t.payload];
  if (t.on_compute_stream) {
    attribute_gap(slot, sl_[slot].idle_since, now_, binding);
    apply_comm(slot);
    if (power_.enabled()) {
      // The clock the power limit and temperature allow; 1 at the calibrated clock (exact).
      const double scale = power_.kernel_start(slot, now_, kernel_power_[t.payload]);
      sample_device(slot);
      if (scale != 1.0) {
        const Time base = dur;
        dur = Time::ps(static_cast<Time::rep>(static_cast<double>(dur.count_ps()) * scale + 0.5));
        sl_[slot].times.throttle += dur - base;
      }
    }
    if (opt_.comm_interference > 0) {
      // Progress at 1/(1 + interference) while a collective of this rank moves data; the
      // completion moves when that changes (comm_state_changed), and compute time is counted at
      // the end.
      Running& run = sl_[slot].run;
      run.top = top;
      run.left = static_cast<double>(dur.count_ps());
      run.base = dur;
      run.since = now_;
      run.slowed = sl_[slot].comm_on;
      schedule_running(key);
      return;
    }
    sl_[slot].times.compute += dur;
  }
  q_.push(now_ + dur, kComputeDone, key);
}

void Engine::schedule_running(std::uint32_t key) {
  Running& run = sl_[(key >> shift_)].run;
  const double rate = run.slowed ? 1.0 + opt_.comm_interference : 1.0;
  run.end = now_ + Time::ps(static_cast<Time::rep>(run.left * rate + 0.5));
  q_.push(run.end, kComputeDone, key);
}

// The rank's communication state changed: settle the running kernel's progress at the old rate
// and reschedule its completion at the new one (the old completion event goes stale).
void Engine::comm_state_changed(std::uint32_t slot) {
  Running& run = sl_[slot].run;
  const bool slowed = sl_[slot].comm_on;
  if (run.top == kNone || run.slowed == slowed) return;
  const double rate = run.slowed ? 1.0 + opt_.comm_interference : 1.0;
  run.left = std::max(0.0, run.left - static_cast<double>((now_ - run.since).count_ps()) / rate);
  run.since = now_;
  run.slowed = slowed;
  schedule_running((slot << shift_) + tops_[run.top].stream);
}

void Engine::compute_done(std::uint32_t key) {
  const std::uint32_t slot = (key >> shift_);
  const std::uint32_t top = st_[key].head;
  // Under interference a compute-stream kernel may have stale completions, which can arrive after
  // the stream has moved on (even past its last op): recognise them by the key's stream.
  if (opt_.comm_interference > 0 && static_cast<int>((key & smask_)) == compute_stream_) {
    Running& run = sl_[slot].run;
    if (run.top != top || run.end != now_) return;  // a completion superseded by a reschedule
    run.top = kNone;
    const Time base = run.base;
    const Time took = now_ - st_[key].started;
    sl_[slot].times.compute += took;
    if (took > base) sl_[slot].times.interference += took - base;
  }
  finish_op(key);
}

std::uint32_t Engine::find_instance(GroupId group, std::uint32_t ordinal) const {
  for (std::uint32_t i = open_head_[group]; i != kNone; i = inst_[i].next_open)
    if (inst_[i].ordinal == ordinal) return i;
  return kNone;
}

// The rank reached a collective: the k-th call of each member on a group forms one instance (as
// NCCL matches calls on a communicator); it starts when every simulated member has arrived.
void Engine::arrive(std::uint32_t key, std::uint32_t top) {
  const std::uint32_t slot = (key >> shift_);
  const TOp& t = tops_[top];
  const GroupId group = bind_[sl_[slot].bind_begin + t.role];
  std::uint32_t id = find_instance(group, t.ordinal);
  const auto& mine = g_.collectives()[t.payload];
  if (id == kNone) {
    id = core::take_slot(free_inst_, inst_);
    Instance& in = inst_[id];
    in.top = top;
    in.group = group;
    in.ordinal = t.ordinal;
    in.needed = needed_[group];
    in.lowered = lowered_for(group, mine);
    in.start = Time::max();
    in.end = Time::zero();
    in.members.clear();
    in.next_open = open_head_[group];
    open_head_[group] = id;
  }
  Instance& in = inst_[id];
  const auto& first = g_.collectives()[tops_[in.top].payload];
  if (in.top != top && !workload::same_traffic(first, mine))
    mismatched_call(slot, top, id);
  in.members.push_back(key);
  if (in.members.size() == in.needed) start_collective(id);
}

void Engine::mismatched_call(std::uint32_t slot, std::uint32_t top, std::uint32_t inst) {
  const auto& mine = g_.collectives()[tops_[top].payload];
  const auto& first = g_.collectives()[tops_[inst_[inst].top].payload];
  throw core::Error(core::ErrorKind::input,
                    fmt::format("op {} on rank {}: call {} on group {} is a {} of {} bytes{} but other members "
                                "made it a {} of {} bytes{}",
                                orig(slot, top), g_.simulated_ranks()[slot], tops_[top].ordinal, inst_[inst].group,
                                workload::to_string(mine.kind), mine.bytes.value(), mine.then.empty() ? "" : " (with more after it)",
                                workload::to_string(first.kind), first.bytes.value(), first.then.empty() ? "" : " (with more after it)"));
}

void Engine::start_collective(std::uint32_t inst) {
  Instance& in = inst_[inst];
  in.start = now_;
  // Members finish in rank order whatever order they arrived in.
  std::sort(in.members.begin(), in.members.end());
  for (std::uint32_t key : in.members) {
    const std::uint32_t slot = (key >> shift_);
    if (sl_[slot].comm_active++ == 0) comm_crossed(slot);
  }
  const auto& phases = lowered_[inst_[inst].lowered];
  if (phases.empty()) {
    q_.push(now_, kCollectiveDone, inst);
    return;
  }
  const std::uint32_t a = core::take_slot(free_active_, active_);
  active_[a] = Active{inst, 0};
  start_phase(a);
}

void Engine::start_phase(std::uint32_t a) {
  const auto& ph = lowered_[inst_[active_[a].instance].lowered][active_[a].phase];
  if (ph.latency > Time::zero()) q_.push(now_ + ph.latency, kPhaseLatencyDone, a);
  else start_transfer(a);
}

void Engine::start_transfer(std::uint32_t a) {
  const auto& ph = lowered_[inst_[active_[a].instance].lowered][active_[a].phase];
  auto t = net_.start(now_, ph.weights, ph.bytes);
  if (transfer_owner_.size() <= t) transfer_owner_.resize(t + 1, kNone);
  transfer_owner_[t] = a;
  ++transfers_;
}

void Engine::complete_collective(std::uint32_t inst) {
  {
    Instance& in = inst_[inst];
    in.end = now_;
    scratch_.assign(in.members.begin(), in.members.end());
    std::uint32_t* link = &open_head_[in.group];
    while (*link != inst) link = &inst_[*link].next_open;
    *link = in.next_open;
  }
  const Time start = inst_[inst].start;
  free_inst_.push_back(inst);  // finish_op below may reuse it: nothing reads it after this
  for (std::uint32_t key : scratch_) {
    const std::uint32_t slot = (key >> shift_);
    if (--sl_[slot].comm_active == 0) comm_crossed(slot);
  }
  // finish_op never completes a collective synchronously, so scratch_ is not reused meanwhile.
  for (std::size_t i = 0; i < scratch_.size(); ++i) {
    const std::uint32_t key = scratch_[i];
    finish_op(key, start);
  }
}

void Engine::finish_op(std::uint32_t key, Time moved) {
  const std::uint32_t slot = (key >> shift_);
  const std::uint32_t top = st_[key].head;
  const TOp& t = tops_[top];
  ++done_ops_;
  if (t.compute) {
    if (opt_.observer) opt_.observer->on_op(g_, OpSpan{orig(slot, top), st_[key].started, st_[key].started, now_});
  } else {
    Record& rec = record(slot, top);
    rec.start = moved;
    rec.end = now_;
    if (opt_.observer) opt_.observer->on_op(g_, OpSpan{orig(slot, top), rec.posted, rec.start, now_});
  }
  if (t.on_compute_stream && t.compute) {
    sl_[slot].idle_since = now_;
    if (power_.enabled()) {
      apply_comm(slot);
      power_.kernel_end(slot, now_);
      sample_device(slot);
    }
  }
  if (now_ >= sl_[slot].last_end) {
    sl_[slot].last_end = now_;
    sl_[slot].last_top = top;
  }
  st_[key].busy = 0;
  ++st_[key].head;
  const std::uint32_t base = (slot << shift_);
  for (std::uint32_t s = t.succ_begin, e = tops_[top + 1].succ_begin; s < e; ++s) {
    const std::uint32_t nx = tsucc_[s];
    const std::uint32_t nkey = base + tops_[nx].stream;
    if (st_[nkey].head == nx && !st_[nkey].busy && deps_done(base, nx)) start_head(nkey, top);
  }
  // If its deps were already done, the stream's order is what held the next op: this op released
  // it (e.g. a gradient bucket queued behind the previous bucket on the dp stream).
  try_start(key, top);
}

// The compute stream of `slot` idled from `from` to `to`; `binding` is the op that released the
// op that ended the idle. Walking back along bindings: while the binding collective's data was
// moving, the idle is exposed communication of its dimension; while it had arrived but waited for
// its peers, the idle is pipeline bubble (for pipeline point-to-point) or "other"; before it
// arrived, the idle is explained by what released *it*, recursively.
void Engine::attribute_gap(std::uint32_t slot, Time from, Time to, std::uint32_t binding) {
  RankTimes& r = sl_[slot].times;
  while (to > from) {
    if (binding == kNone || tops_[binding].compute) {
      r.other += to - from;
      return;
    }
    const Record& rec = record(slot, binding);
    const auto dim = tops_[binding].dim;
    auto overlap = [&](Time a, Time b) {
      Time lo = std::max(from, a), hi = std::min(to, b);
      return hi > lo ? hi - lo : Time::zero();
    };
    r.exposed[static_cast<std::size_t>(dim)] += overlap(rec.start, rec.end);
    const Time waiting = overlap(rec.posted, rec.start);
    if (dim == workload::ParallelDim::pp) r.bubble += waiting;
    else r.other += waiting;
    // Idle after the collective ended (another stream's op released the compute op) is "other".
    r.other += overlap(std::max(rec.end, rec.posted), to);
    to = std::min(to, rec.posted);
    binding = rec.binding;
  }
}

EngineResult Engine::run() {
  if (opt_.observer) opt_.observer->on_begin(g_);
  now_ = Time::zero();
  if (power_.enabled())
    for (std::uint32_t slot = 0; slot < sl_.size(); ++slot) sample_device(slot);  // the idle state at zero
  // Every stream's first op may start at time zero.
  for (std::uint32_t k = 0; k < st_.size(); ++k) try_start(k, kNone);
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
          const auto& phases = lowered_[inst_[act.instance].lowered];
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
    // The instant's crossings of zero that were not undone within it (comm_crossed).
    for (std::size_t i = 0; i < pending_comm_.size(); ++i) apply_comm(pending_comm_[i]);
    pending_comm_.clear();
  }
  if (done_ops_ != g_.op_count()) {
    // Find a stuck op to name.
    std::string detail;
    for (std::uint32_t k = 0; k < st_.size() && detail.empty(); ++k) {
      if (st_[k].head >= st_[k].end) continue;
      const std::uint32_t slot = (k >> shift_), top = st_[k].head;
      const OpId id = orig(slot, top);
      const Op op = g_.op(id);
      if (op.type == OpType::collective) {
        const GroupId group = bind_[sl_[slot].bind_begin + tops_[top].role];
        const std::uint32_t inst = find_instance(group, tops_[top].ordinal);
        const std::size_t arrived = inst == kNone ? 0 : inst_[inst].members.size();
        detail = fmt::format("op {} on rank {} waits in collective '{}' ({} of {} members arrived)", id, op.rank,
                             g_.collectives()[op.payload].name, arrived, needed_[group]);
      } else {
        std::size_t waiting = 0;
        for (std::uint32_t d = tops_[top].dep_begin, e = tops_[top + 1].dep_begin; d < e; ++d)
          waiting += st_[(slot << shift_) + tops_[tdeps_[d]].stream].head <= tdeps_[d];
        detail = fmt::format("op {} on rank {} waits for {} dependencies", id, op.rank, waiting);
      }
    }
    throw core::Error(core::ErrorKind::input,
                      fmt::format("deadlock: {} of {} ops never ran; {}", g_.op_count() - done_ops_, g_.op_count(), detail));
  }
  EngineResult res;
  for (std::size_t s = 0; s < sl_.size(); ++s) {
    RankTimes& r = sl_[s].times;
    r.finish = sl_[s].last_end;
    // The tail after the last compute op: attribute it to what finished last on the rank.
    if (r.finish > sl_[s].idle_since) attribute_gap(static_cast<std::uint32_t>(s), sl_[s].idle_since, r.finish, sl_[s].last_top);
    res.makespan = std::max(res.makespan, r.finish);
  }
  if (power_.enabled()) {
    power_.finish(res.makespan);
    res.power = power_.devices();
  }
  res.ranks.reserve(sl_.size());
  for (const Slot& slot : sl_) res.ranks.push_back(slot.times);
  res.events = events;
  res.transfers = transfers_;
  res.classes = static_cast<std::uint32_t>(classes_.size());
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
