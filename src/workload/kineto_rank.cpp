#include "workload/kineto_rank.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include "inflect/core/error.hpp"
#include "workload/kineto_ops.hpp"

namespace inflect::workload::kineto {
namespace {

bool is_gpu(Cat c) { return c == Cat::kernel || c == Cat::gpu_memcpy || c == Cat::gpu_memset; }
bool is_launcher(Cat c) { return c == Cat::cuda_runtime || c == Cat::cuda_driver; }

// An op before ordering: deps are indices into the pending list, `key` its time for the order the
// builder's Kahn pass starts from (chronological, so exports read in time order).
struct Pending {
  std::int64_t key = 0;
  TraceOp op;
  std::vector<std::uint32_t> deps;
  std::uint32_t event = kNone;  // the trace event it stands for (kNone: a host gap)
};

// Host runtime calls that block the calling thread until GPU work ends (CUDA runtime API: the
// synchronize calls, and cudaMemcpy; an async copy to pageable host memory returns only once the
// copy is done, "API synchronization behavior"), with HIP's names (ROCm traces use the same
// categories).
enum class Blocking : std::uint8_t { no, device, stream, event };
Blocking blocking(std::string_view n) {
  if (n == "cudaDeviceSynchronize" || n == "cuCtxSynchronize" || n == "hipDeviceSynchronize") return Blocking::device;
  if (n == "cudaStreamSynchronize" || n == "cuStreamSynchronize" || n == "hipStreamSynchronize") return Blocking::stream;
  if (n == "cudaEventSynchronize" || n == "cuEventSynchronize" || n == "hipEventSynchronize") return Blocking::event;
  return Blocking::no;
}
bool is_stream_wait(std::string_view n) { return n == "cudaStreamWaitEvent" || n == "cuStreamWaitEvent" || n == "hipStreamWaitEvent"; }
// A copy or memset call that returns when the GPU has done it (hipMemcpyWithStream is HIP's
// synchronous copy on a stream).
bool is_sync_copy(std::string_view n) {
  return n == "cudaMemcpy" || n == "cudaMemset" || n == "hipMemcpy" || n == "hipMemset" || n == "hipMemcpyWithStream";
}

class RankBuilder {
 public:
  RankBuilder(const Trace& t, RankId rank, int world, const Window& w, TraceGraphBuilder& b, const TraceImportOptions& o)
      : t_(t), rank_(rank), world_(world), w_(w), b_(b), o_(o) {}

  RankBuild run();

 private:
  const Trace& t_;
  RankId rank_;
  int world_;
  const Window& w_;
  TraceGraphBuilder& b_;
  const TraceImportOptions& o_;
  RankBuild out_;
  std::vector<Pending> ops_;
  std::unordered_map<std::int64_t, std::uint32_t> launcher_;   // correlation -> runtime event
  std::unordered_map<std::int64_t, std::uint32_t> sync_;       // correlation -> cuda_sync event
  std::unordered_map<std::int64_t, std::uint32_t> cpu_op_;     // External id -> cpu_op event
  std::unordered_map<std::int64_t, std::vector<std::uint32_t>> launched_;  // correlation -> GPU ops
  std::unordered_map<std::int64_t, std::uint32_t> op_kernel_;  // External id -> the op's longest kernel
  // Per CUDA stream: its GPU ops in order, with their launch times (a running maximum, for search).
  struct Stream {
    std::int64_t id = 0;
    std::vector<std::uint32_t> ops;
    std::vector<std::int64_t> launched_by;
    std::vector<std::pair<std::int64_t, std::uint32_t>> waits;  // (host time of the wait, op waited for)
  };
  std::map<std::int64_t, Stream> streams_;
  std::int64_t gpu_begin_ = std::numeric_limits<std::int64_t>::max(), gpu_end_ = 0;

  std::string where(std::uint32_t e) const { return t_.where(t_.events[e]); }
  std::int64_t launch_time(const Event& e) const {
    auto it = launcher_.find(e.correlation);
    return it != launcher_.end() && e.correlation >= 0 ? t_.events[it->second].ts : e.ts;
  }
  bool in_window(std::int64_t ts) const { return w_.whole || (ts >= w_.begin && ts < w_.end); }
  std::uint32_t add(std::int64_t key, const TraceOp& op, std::uint32_t event) {
    ops_.push_back(Pending{key, op, {}, event});
    return static_cast<std::uint32_t>(ops_.size() - 1);
  }
  /// The last op on `stream` launched before host time `h`, or kNone.
  std::uint32_t last_before(const Stream& s, std::int64_t h) const {
    auto it = std::lower_bound(s.launched_by.begin(), s.launched_by.end(), h);
    if (it == s.launched_by.begin()) return kNone;
    return s.ops[static_cast<std::size_t>(it - s.launched_by.begin()) - 1];
  }
  /// The op a CUDA event recorded by runtime call `record_correlation` on `stream` stands for.
  std::uint32_t recorded_op(std::int64_t stream, std::int64_t record_correlation, const char*& why_not) const {
    auto s = streams_.find(stream);
    auto r = launcher_.find(record_correlation);
    if (record_correlation < 0 || stream < 0) return why_not = "the event's record is not identified: taken as met", kNone;
    if (r == launcher_.end()) return why_not = "the event was recorded before the trace: taken as met", kNone;
    if (s == streams_.end()) return why_not = "the recorded stream ran nothing in the replayed span: taken as met", kNone;
    const std::uint32_t op = last_before(s->second, t_.events[r->second].ts);
    if (op == kNone) why_not = "the event was recorded before the replayed span: taken as met";
    return op;
  }
  void gpu_ops();
  void host_ops();
  void stream_waits();
  void stream_order();
  void kernel_op(std::uint32_t e, TraceOp& op);
};

void RankBuilder::kernel_op(std::uint32_t ei, TraceOp& op) {
  const Event& e = t_.events[ei];
  const std::string& shortname = t_.short_name(e);
  if (e.cat == Cat::kernel && is_nccl_kernel(shortname)) {
    const CollectiveMeta* meta = e.collective != kNone ? &t_.collectives[e.collective] : nullptr;
    if (meta == nullptr && e.external_id >= 0)
      if (auto c = cpu_op_.find(e.external_id); c != cpu_op_.end() && t_.events[c->second].collective != kNone)
        meta = &t_.collectives[t_.events[c->second].collective];
    if (meta == nullptr)
      throw core::Error(core::ErrorKind::input,
                        fmt::format("{}: an NCCL kernel without collective metadata ('Collective name', 'In msg nelems', "
                                    "'dtype', 'Process Group Ranks' on the kernel or its record_param_comms op; traces of "
                                    "older PyTorch versions have none): its size and group are unknown",
                                    where(ei)));
    CollectiveCall call = collective_call(t_, e, *meta, rank_, world_, b_);
    op.type = OpType::collective;
    op.payload = b_.collective(call.collective);
    out_.communication.add(call.tally);
    out_.other.add(call.dim_note);
    if (std::find(out_.groups.begin(), out_.groups.end(), call.members) == out_.groups.end()) out_.groups.push_back(call.members);
    out_.collectives.push_back(IssuedCollective{call.members, call.collective.kind, call.collective.bytes.value(), call.seq,
                                                fmt::format("event {} '{}' ({} of {:g} B)", e.index, call.collective.name,
                                                            to_string(call.collective.kind), call.collective.bytes.value())});
    return;
  }
  Kernel k;
  k.name = shortname;
  k.recorded = core::Time::ps(e.dur * 1000);
  if (e.cat != Cat::kernel) {
    k.cost.bytes = core::Bytes(static_cast<double>(std::max<std::int64_t>(e.bytes, 0)));
    out_.compute.add(e.cat == Cat::gpu_memcpy ? "recorded: copies (gpu_memcpy)" : "recorded: memsets (gpu_memset)");
  } else {
    std::string why = "recorded: not launched by a GEMM or attention op with shapes (record_shapes=True records them)";
    std::optional<core::KernelCost> cost;
    const char* retimed = "re-timed: GEMM from the launching op's Input Dims";
    if (auto c = cpu_op_.find(e.external_id); e.external_id >= 0 && c != cpu_op_.end() && t_.events[c->second].shapes != kNone) {
      const Event& launcher = t_.events[c->second];
      if (is_attention_op(t_.name(launcher))) {
        cost = attention_from_shapes(t_, launcher, o_.precision, why);
        retimed = "re-timed: attention from the launching op's Input Dims";
      } else {
        cost = gemm_from_shapes(t_, launcher, o_.precision, why);
      }
      if (cost && op_kernel_.at(e.external_id) != ei) {
        cost.reset();
        why = "recorded: another kernel of a GEMM or attention op (a split-K reduction, a backward's pre- or "
              "post-processing); the op's longest kernel stands for it";
      }
    }
    if (cost) k.cost = *cost;
    if (cost && o_.retime) {
      k.recorded.reset();
      out_.compute.add(retimed);
    } else {
      out_.compute.add(o_.retime ? why : std::string("recorded duration"));
    }
  }
  op.payload = b_.kernel(k);
}

void RankBuilder::gpu_ops() {
  std::int64_t device = -1;
  for (std::uint32_t i = 0; i < t_.events.size(); ++i) {
    const Event& e = t_.events[i];
    if (!is_gpu(e.cat)) continue;
    if (!in_window(launch_time(e))) {
      out_.other.add("GPU activities outside the replayed step: not replayed");
      continue;
    }
    if (e.device >= 0) {
      if (device >= 0 && e.device != device)
        throw core::Error(core::ErrorKind::input,
                          fmt::format("{}: runs on device {} but earlier activities on device {}: one file per rank (GPU)",
                                      where(i), e.device, device));
      device = e.device;
    }
    if (e.stream < 0) throw core::Error(core::ErrorKind::input, fmt::format("{}: a GPU activity without 'stream'", where(i)));
    streams_[e.stream].ops.push_back(i);  // event indices for now; ops after sorting
  }
  // A stream runs its activities one at a time in the order they started on the GPU.
  for (auto& [id, s] : streams_) {
    s.id = id;
    std::sort(s.ops.begin(), s.ops.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Event &x = t_.events[a], &y = t_.events[b];
      return x.ts != y.ts ? x.ts < y.ts : x.index < y.index;
    });
    // An op's longest kernel stands for the op (cuBLAS may add a split-K reduction kernel).
    for (std::uint32_t ei : s.ops) {
      const Event& e = t_.events[ei];
      if (e.cat != Cat::kernel || e.external_id < 0) continue;
      auto [it, fresh] = op_kernel_.try_emplace(e.external_id, ei);
      if (!fresh && t_.events[it->second].dur < e.dur) it->second = ei;
    }
  }
  // The stream with the most compute-kernel time is named "compute": the engine's breakdown reads
  // the stream of that name (its busy time is compute, its waits on collectives exposed
  // communication), as the compiler and the Chakra import name theirs. The others keep their CUDA
  // stream's number.
  std::int64_t compute_stream = -1, most = -1;
  for (const auto& [id, s] : streams_) {
    std::int64_t busy = 0;
    for (std::uint32_t ei : s.ops) {
      const Event& e = t_.events[ei];
      if (e.cat == Cat::kernel && !is_nccl_kernel(t_.short_name(e))) busy += e.dur;
    }
    if (busy > most) most = busy, compute_stream = id;
  }
  if (compute_stream >= 0)
    out_.other.add(fmt::format("stream {} named 'compute' (the most kernel time; the breakdown reads it)", compute_stream));
  for (auto& [id, s] : streams_) {
    const std::uint8_t sid = b_.stream(id == compute_stream ? std::string("compute") : fmt::format("stream {}", id), t_.file);
    std::int64_t latest = 0;
    for (std::uint32_t& ei : s.ops) {
      const Event& e = t_.events[ei];
      TraceOp op;
      op.stream = sid;
      kernel_op(ei, op);
      const std::uint32_t p = add(e.ts, op, ei);
      latest = std::max(latest, launch_time(e));
      s.launched_by.push_back(latest);
      gpu_begin_ = std::min(gpu_begin_, e.ts);
      gpu_end_ = std::max(gpu_end_, e.ts + e.dur);
      if (e.correlation >= 0) launched_[e.correlation].push_back(p);
      ei = p;
    }
  }
}

void RankBuilder::host_ops() {
  // The launching threads in order of their first call; the thread that annotated the step is
  // "host" when it launches, the others "host 1", "host 2"... (names, not OS thread ids, so that
  // ranks compare equal).
  std::map<std::int64_t, std::vector<std::uint32_t>> by_tid;
  for (std::uint32_t i = 0; i < t_.events.size(); ++i) {
    const Event& e = t_.events[i];
    if (!is_launcher(e.cat)) continue;
    if (!in_window(e.ts)) {
      out_.other.add("host calls outside the replayed step: not replayed");
      continue;
    }
    by_tid[e.tid].push_back(i);
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> order;  // (first call, tid)
  for (auto& [tid, v] : by_tid) {
    std::sort(v.begin(), v.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Event &x = t_.events[a], &y = t_.events[b];
      return x.ts != y.ts ? x.ts < y.ts : x.index < y.index;
    });
    order.emplace_back(tid == w_.step_tid ? std::numeric_limits<std::int64_t>::min() : t_.events[v.front()].ts, tid);
  }
  std::sort(order.begin(), order.end());
  for (std::size_t n = 0; n < order.size(); ++n) {
    const std::int64_t tid = order[n].second;
    const std::uint8_t sid = b_.stream(n == 0 ? std::string("host") : fmt::format("host {}", n), t_.file);
    // Time starts when the GPU starts the step (recorded_ns is the GPU's span): what the host
    // launched before then was queued (a delay of 0), and a thread's later calls keep their gaps
    // from there. In a steady loop the host runs ahead of the GPU (HTA's ns_resolution trace:
    // ProfilerStep#104's kernels start 89.5 ms into its 95.6 ms), so starting the host at its
    // own first call would pace the GPU by launches the real run had queued long before.
    std::int64_t t_prev = gpu_begin_ <= gpu_end_ ? gpu_begin_ : t_.events[by_tid[tid].front()].ts;
    std::uint32_t last = kNone;
    std::vector<std::uint32_t> waits;
    // A host gap as a recorded delay op, after the previous one and whatever the host waited for.
    auto delay = [&](std::int64_t until, std::int64_t key) {
      if (until - t_prev > kMaxDurationNs)
        throw core::Error(core::ErrorKind::input,
                          fmt::format("{}: a host gap of {:g} s on thread {}, past the bound of a day", t_.file,
                                      static_cast<double>(until - t_prev) * 1e-9, tid));
      Kernel k;
      k.name = "host";
      k.recorded = core::Time::ps(std::max<std::int64_t>(until - t_prev, 0) * 1000);
      TraceOp op;
      op.stream = sid;
      op.payload = b_.kernel(k);
      const std::uint32_t p = add(key, op, kNone);
      if (last != kNone) ops_[p].deps.push_back(last);
      for (auto w : waits) ops_[p].deps.push_back(w);
      waits.clear();
      out_.compute.add("host: the gaps between launches, as recorded delays");
      last = p;
      return p;
    };
    auto wait_streams = [&](std::int64_t h, std::int64_t only) {
      for (const auto& [id, s] : streams_)
        if (only < 0 || id == only)
          if (auto op = last_before(s, h); op != kNone) waits.push_back(op);
    };
    std::int64_t unresolved_wait = -1;  // host time of a cudaStreamWaitEvent without its cuda_sync record
    // Calls after the thread's last launch cannot delay the step's GPU work, and the step as
    // recorded ends with its last GPU activity: they are not replayed (a final synchronize would
    // otherwise add the host's time after the GPU finished).
    const std::vector<std::uint32_t>& calls = by_tid[tid];
    std::size_t end = calls.size();
    while (end > 0 && !(t_.events[calls[end - 1]].correlation >= 0 && launched_.contains(t_.events[calls[end - 1]].correlation)))
      --end;
    if (end < calls.size())
      out_.other.add("host calls after the last launch: not replayed (the step ends with its last GPU activity)",
                     static_cast<std::int64_t>(calls.size() - end));
    for (std::size_t ci = 0; ci < end; ++ci) {
      const std::uint32_t ri = calls[ci];
      const Event& r = t_.events[ri];
      const std::string& name = t_.name(r);
      auto launched = r.correlation >= 0 ? launched_.find(r.correlation) : launched_.end();
      if (launched != launched_.end()) {
        const std::uint32_t h = delay(r.ts + r.dur, r.ts);
        bool sync_copy = is_sync_copy(name);
        for (std::uint32_t g : launched->second) {
          ops_[g].deps.push_back(h);
          if (unresolved_wait >= 0) {
            // The wait does not say which stream's event it waits for: the launch after it waits
            // for every other stream's work launched before the wait. This is what PyTorch's own
            // waits mean (ProcessGroupNCCL's stream waits for the current stream's last op before a
            // collective; the current stream waits for the collective after it), and never lets a
            // kernel start before what it may need.
            const std::int64_t own = t_.events[ops_[g].event].stream;
            for (const auto& [id, st] : streams_)
              if (id != own)
                if (auto op = last_before(st, unresolved_wait); op != kNone) ops_[g].deps.push_back(op);
          }
          const std::string& gname = t_.name(t_.events[ops_[g].event]);
          if (t_.events[ops_[g].event].cat == Cat::gpu_memcpy && gname.find("-> Pageable") != std::string::npos) sync_copy = true;
        }
        if (sync_copy) {
          for (std::uint32_t g : launched->second) waits.push_back(g);
          out_.other.add("host calls: synchronous copies, the host waits for them");
        } else {
          out_.other.add("host calls: launches, each after a host delay");
        }
        t_prev = std::max(t_prev, r.ts + r.dur);
        unresolved_wait = -1;
        continue;
      }
      if (is_stream_wait(name) && (r.correlation < 0 || !sync_.contains(r.correlation))) {
        unresolved_wait = r.ts;
        out_.other.add("stream waits without their cuda_sync record: the next launch waits for every other stream's work "
                       "launched before (the trace does not say which stream)");
        continue;
      }
      const Blocking bl = blocking(name);
      if (bl == Blocking::no) {
        out_.other.add("host calls: other runtime calls, host time kept in the gaps");
        continue;
      }
      delay(r.ts, r.ts);
      auto s = r.correlation >= 0 ? sync_.find(r.correlation) : sync_.end();
      if (s == sync_.end()) {
        // Without CUPTI's synchronization record the call does not say what it waits for: every stream.
        wait_streams(r.ts, -1);
        out_.other.add(bl == Blocking::device ? "host calls: device synchronizations, the host waits for every stream"
                                              : "host calls: stream/event synchronizations without their cuda_sync record: "
                                                "the host waits for every stream");
      } else {
        const Event& se = t_.events[s->second];
        if (se.sync == SyncKind::context) {
          wait_streams(r.ts, -1);
        } else if (se.sync == SyncKind::stream) {
          wait_streams(r.ts, se.stream);
        } else if (se.sync == SyncKind::event) {
          const char* why = "";
          const std::uint32_t op = recorded_op(se.wait_stream, se.wait_record_correlation, why);
          if (op != kNone) waits.push_back(op);
          else out_.other.add(fmt::format("event synchronizations: {}", why));
        }
        out_.other.add("host calls: synchronizations, the host waits for the GPU work they name");
      }
      t_prev = std::max(t_prev, r.ts + r.dur);
    }
    // A last synchronization holds the host (and the step) until the GPU work it names ends.
    if (!waits.empty()) delay(t_prev, t_prev);
  }
}

void RankBuilder::stream_waits() {
  // cudaStreamWaitEvent: the stream's work launched after the call waits for the op the event
  // captured on the other stream (the last launched there before the cudaEventRecord).
  for (const Event& se : t_.events) {
    if (se.cat != Cat::cuda_sync) continue;
    const std::int64_t h = launch_time(se);
    if (!in_window(h)) {
      out_.other.add("cuda_sync outside the replayed step: not replayed");
      continue;
    }
    if (se.sync != SyncKind::stream_wait_event) {
      auto r = launcher_.find(se.correlation);
      const bool blocks = r != launcher_.end() && blocking(t_.name(t_.events[r->second])) != Blocking::no;
      out_.other.add(blocks ? "cuda_sync: read with its host call" : "cuda_sync of a non-blocking call (cudaEventQuery): no dependency");
      continue;
    }
    auto s = streams_.find(se.stream);
    if (s == streams_.end()) {
      out_.other.add("stream waits: the waiting stream runs nothing after: no dependency");
      continue;
    }
    const char* why = "";
    const std::uint32_t op = recorded_op(se.wait_stream, se.wait_record_correlation, why);
    if (op == kNone) {
      out_.other.add(fmt::format("stream waits: {}", why));
      continue;
    }
    s->second.waits.emplace_back(h, op);
    out_.other.add("stream waits (cudaStreamWaitEvent): dependencies between streams");
  }
}

void RankBuilder::stream_order() {
  for (auto& [id, s] : streams_) {
    std::sort(s.waits.begin(), s.waits.end());
    std::size_t next = 0;
    for (std::size_t j = 0; j < s.ops.size(); ++j) {
      Pending& p = ops_[s.ops[j]];
      if (j > 0) p.deps.push_back(s.ops[j - 1]);
      const std::int64_t launched = launch_time(t_.events[p.event]);
      for (; next < s.waits.size() && s.waits[next].first < launched; ++next)
        if (s.waits[next].second != s.ops[j]) p.deps.push_back(s.waits[next].second);
    }
  }
}

RankBuild RankBuilder::run() {
  for (std::uint32_t i = 0; i < t_.events.size(); ++i) {
    const Event& e = t_.events[i];
    if (is_launcher(e.cat) && e.correlation >= 0) launcher_.emplace(e.correlation, i);
    if (e.cat == Cat::cuda_sync && e.correlation >= 0) sync_.emplace(e.correlation, i);
    if (e.cat == Cat::cpu_op) {
      if (e.external_id >= 0) cpu_op_.emplace(e.external_id, i);
      out_.other.add("cpu_op: shapes or collective metadata read; host time kept in the gaps");
    }
    if (e.cat == Cat::user_annotation) out_.other.add("ProfilerStep annotations: the step's bounds");
  }
  gpu_ops();
  stream_waits();
  stream_order();
  host_ops();
  // Positions in time order (ties in creation order), so the builder's order reads chronologically.
  std::vector<std::uint32_t> order(ops_.size()), position(ops_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return ops_[a].key < ops_[b].key; });
  for (std::uint32_t p = 0; p < order.size(); ++p) position[order[p]] = p;
  out_.trace.reserve(ops_.size());
  std::vector<std::uint32_t> deps, event_of(order.size());
  for (std::uint32_t i : order) {
    const Pending& p = ops_[i];
    deps.clear();
    for (auto d : p.deps) deps.push_back(position[d]);
    event_of[position[i]] = p.event;
    out_.trace.add(p.op, deps);
  }
  // An op's label, for errors only: its event (the labeler reads the trace, which outlives add_rank).
  out_.trace.set_labeler([&t = t_, event_of = std::move(event_of)](std::size_t op) {
    const std::uint32_t e = event_of[op];
    return e == kNone ? std::string("host delay")
                      : fmt::format("event {} '{}'", t.events[e].index, t.short_name(t.events[e]));
  });
  // The step as the GPU ran it, first activity to last: in a steady loop the GPU runs a step's
  // kernels while the host prepares the next (HTA's ns_resolution trace: ProfilerStep#104 spans
  // 95.6 ms on the host and its kernels start 89.5 ms into it, spanning 95.7 ms on the GPU), so the
  // annotation's host span, or its start to the last kernel (185 ms there), misstate the step.
  out_.recorded_ns = gpu_begin_ <= gpu_end_ ? gpu_end_ - gpu_begin_ : 0;
  return std::move(out_);
}

}  // namespace

RankBuild build_rank(const Trace& t, RankId rank, int world, const Window& w, TraceGraphBuilder& b,
                     const TraceImportOptions& options) {
  return RankBuilder(t, rank, world, w, b, options).run();
}

std::vector<Step> complete_steps(const Trace& t) {
  std::vector<Step> steps;
  for (const Event& e : t.events) {
    if (e.cat != Cat::user_annotation) continue;
    const std::string& n = t.name(e);
    Step s;
    try {
      std::size_t used = 0;
      s.number = std::stoll(n.substr(13), &used);
      if (used + 13 != n.size() || s.number < 0) s.number = -1;
    } catch (const std::exception&) {
      s.number = -1;
    }
    if (s.number < 0) throw core::Error(core::ErrorKind::input, fmt::format("{}: not a ProfilerStep#N annotation", t.where(e)));
    s.begin = e.ts, s.end = e.ts + e.dur, s.tid = e.tid;
    steps.push_back(s);
  }
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.begin < b.begin; });
  // A step is proven whole when the next step's annotation starts (torch.profiler's step() closes
  // one and opens the next); the last annotation may have been cut by the end of profiling.
  if (steps.size() > 1) steps.pop_back();
  return steps;
}

Window whole_window(const Trace& t) {
  Window w;
  bool any = false;
  for (const Event& e : t.events) {
    if (!is_gpu(e.cat) && !is_launcher(e.cat)) continue;
    if (!any) w.begin = e.ts, w.end = e.ts + e.dur, any = true;
    w.begin = std::min(w.begin, e.ts);
    if (is_launcher(e.cat)) w.end = std::max(w.end, e.ts + e.dur);
  }
  w.whole = true;
  return w;
}

}  // namespace inflect::workload::kineto
