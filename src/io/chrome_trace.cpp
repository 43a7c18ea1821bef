#include "inflect/io/chrome_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include <iterator>
#include <memory>

#include "inflect/core/error.hpp"

namespace inflect::io {

namespace {

using Json = nlohmann::ordered_json;

// Trace-event timestamps are microseconds; simulated time is integer picoseconds, so divide once
// here and keep sub-microsecond precision as a fraction.
double to_us(core::Time t) { return static_cast<double>(t.count_ps()) / 1e6; }

std::string op_label(const workload::ExecutionGraph& g, const workload::Op& op) {
  std::string base;
  if (op.type == workload::OpType::compute) {
    base = g.kernels()[op.payload].name;
    if (base.empty()) base = "kernel";
  } else {
    const auto& c = g.collectives()[op.payload];
    base = c.name.empty() ? fmt::format("{} {}", workload::to_string(c.dim), workload::to_string(c.kind)) : c.name;
  }
  if (op.layer >= 0) base += fmt::format(" L{}", op.layer);
  if (op.phase != workload::Phase::optimizer) base += fmt::format(" mb{}", op.micro_batch);
  return base;
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(int max_ranks) : max_ranks_(max_ranks) {}

void ChromeTraceWriter::on_begin(const workload::ExecutionGraph& graph) {
  kept_ = graph.simulated_ranks();
  std::sort(kept_.begin(), kept_.end());
  kept_.erase(std::unique(kept_.begin(), kept_.end()), kept_.end());
  if (max_ranks_ > 0 && kept_.size() > static_cast<std::size_t>(max_ranks_))
    kept_.resize(static_cast<std::size_t>(max_ranks_));
  spans_.clear();
  samples_.clear();
  json_.clear();
  streamed_ = false;
}

void ChromeTraceWriter::on_device(const workload::ExecutionGraph& /*graph*/, const sim::DeviceSample& sample) {
  if (!std::binary_search(kept_.begin(), kept_.end(), sample.rank)) return;
  // Several changes at one instant: only the last one holds from there on.
  if (!samples_.empty() && samples_.back().rank == sample.rank && samples_.back().time == sample.time) samples_.back() = sample;
  else samples_.push_back(sample);
}

void ChromeTraceWriter::on_op(const workload::ExecutionGraph& graph, const sim::OpSpan& span) {
  if (span.op >= graph.op_count()) return;
  const workload::Op op = graph.op(span.op);
  if (!std::binary_search(kept_.begin(), kept_.end(), op.rank)) return;
  // The id a user finds in `inflect export`'s graph (which writes replicas out as ops).
  sim::OpSpan s = span;
  s.op = graph.expanded_id(span.op);
  spans_.push_back(Slice{s, op});
}

void ChromeTraceWriter::on_end(const workload::ExecutionGraph& graph, core::Time makespan) {
  // Arrival order depends on how the engine breaks ties; sorting makes the bytes depend only on
  // what happened.
  std::sort(spans_.begin(), spans_.end(), [&](const Slice& x, const Slice& y) {
    const auto& a = x.span;
    const auto& b = y.span;
    const auto& oa = x.op;
    const auto& ob = y.op;
    if (oa.rank != ob.rank) return oa.rank < ob.rank;
    if (oa.stream != ob.stream) return oa.stream < ob.stream;
    if (a.start != b.start) return a.start < b.start;
    return a.op < b.op;
  });

  // Events are dumped one by one so a trace of millions of slices never becomes one JSON tree.
  std::string out = "{\"traceEvents\":[\n";
  // Streaming: what is formatted goes to the file in pieces of about 16 MB.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(nullptr, &std::fclose);
  if (!stream_path_.empty()) {
    file.reset(std::fopen(stream_path_.c_str(), "wb"));
    if (!file) throw core::Error(core::ErrorKind::io, fmt::format("cannot write trace '{}'", stream_path_));
  }
  constexpr std::size_t kPiece = std::size_t{16} << 20;
  bool flushed = false;
  auto flush = [&] {
    if (!file || out.empty()) return;
    flushed = true;
    if (std::fwrite(out.data(), 1, out.size(), file.get()) != out.size())
      throw core::Error(core::ErrorKind::io, fmt::format("error writing trace '{}'", stream_path_));
    out.clear();
  };
  bool first = true;
  auto emit = [&](const Json& ev) {
    if (!first) out += ",\n";
    first = false;
    out += ev.dump();
  };

  const auto& streams = graph.stream_names();
  for (workload::RankId r : kept_) {
    emit(Json{{"name", "process_name"}, {"ph", "M"}, {"pid", r}, {"tid", 0}, {"args", {{"name", fmt::format("rank {}", r)}}}});
    emit(Json{{"name", "process_sort_index"}, {"ph", "M"}, {"pid", r}, {"tid", 0}, {"args", {{"sort_index", r}}}});
    for (std::size_t s = 0; s < streams.size(); ++s) {
      emit(Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", r}, {"tid", s}, {"args", {{"name", streams[s]}}}});
      emit(Json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", r}, {"tid", s}, {"args", {{"sort_index", s}}}});
    }
  }

  // Slices are formatted directly (not as JSON trees): a trace holds hundreds of thousands of them.
  // Names are JSON-escaped once per distinct kernel/collective string via nlohmann.
  auto quoted = [](const std::string& text) { return Json(text).dump(); };
  // Written straight into `out`, reserved for its size: a full-fidelity trace reaches a gigabyte,
  // and every regrowth or copy of that costs seconds (mostly faulting in fresh pages).
  out.reserve(file ? kPiece + 4096 : out.size() + spans_.size() * 440 + samples_.size() * 3 * 100 + 4096);
  const std::size_t slices_at = out.size();
  auto buf_it = std::back_inserter(out);
  for (const auto& slice : spans_) {
    if (out.size() > kPiece) flush();
    const auto& sp = slice.span;
    const auto& op = slice.op;
    const std::string name = quoted(op_label(graph, op));
    if (op.type == workload::OpType::compute) {
      const auto& k = graph.kernels()[op.payload];
      fmt::format_to(buf_it,
                     ",\n{{\"name\":{},\"cat\":\"compute\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{},"
                     "\"args\":{{\"op\":{},\"phase\":\"{}\",\"layer\":{},\"micro_batch\":{},\"flops\":{},\"bytes\":{}}}}}",
                     name, to_us(sp.start), to_us(sp.end - sp.start), op.rank, op.stream, sp.op, workload::to_string(op.phase),
                     op.layer, op.micro_batch, k.cost.flops.value(), k.cost.bytes.value());
    } else {
      const auto& c = graph.collectives()[op.payload];
      const std::size_t group_size = c.group < graph.groups().size() ? graph.groups()[c.group].members.size() : 0;
      if (sp.start > sp.posted)
        fmt::format_to(buf_it,
                       ",\n{{\"name\":{},\"cat\":\"wait\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{},"
                       "\"args\":{{\"op\":{},\"waiting_for\":\"other members of the group\"}}}}",
                       quoted("wait " + op_label(graph, op)), to_us(sp.posted), to_us(sp.start - sp.posted), op.rank, op.stream, sp.op);
      // A fused run of collectives (Collective::then): the args list the ones after the first.
      std::string then;
      for (std::size_t i = 0; i < c.then.size(); ++i)
        then += fmt::format("{}{{\"name\":{},\"collective\":\"{}\",\"bytes\":{}}}", i ? "," : ",\"then\":[", quoted(c.then[i].name),
                            workload::to_string(c.then[i].kind), c.then[i].bytes.value());
      if (!then.empty()) then += ']';
      fmt::format_to(buf_it,
                     ",\n{{\"name\":{},\"cat\":\"comm.{}\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{},"
                     "\"args\":{{\"op\":{},\"phase\":\"{}\",\"layer\":{},\"micro_batch\":{},\"collective\":\"{}\",\"dim\":\"{}\","
                     "\"group\":{},\"group_size\":{},\"bytes\":{},\"algorithm\":\"{}\",\"protocol\":\"{}\"{}}}}}",
                     name, workload::to_string(c.dim), to_us(sp.start), to_us(sp.end - sp.start), op.rank, op.stream, sp.op,
                     workload::to_string(op.phase), op.layer, op.micro_batch, workload::to_string(c.kind), workload::to_string(c.dim),
                     c.group, group_size, c.bytes.value(), sp.algorithm ? sp.algorithm : "none",
                     sp.protocol ? sp.protocol : "none", then);
    }
  }
  // Counter tracks per rank, in time order (stable: same-time samples keep the engine's order).
  std::stable_sort(samples_.begin(), samples_.end(), [](const sim::DeviceSample& a, const sim::DeviceSample& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.time < b.time;
  });
  for (const auto& d : samples_) {
    if (out.size() > kPiece) flush();
    fmt::format_to(buf_it, ",\n{{\"name\":\"power (W)\",\"ph\":\"C\",\"ts\":{},\"pid\":{},\"args\":{{\"W\":{:.1f}}}}}",
                   to_us(d.time), d.rank, d.power.value());
    fmt::format_to(buf_it, ",\n{{\"name\":\"clock (MHz)\",\"ph\":\"C\",\"ts\":{},\"pid\":{},\"args\":{{\"MHz\":{:.0f}}}}}",
                   to_us(d.time), d.rank, d.clock_mhz);
    fmt::format_to(buf_it,
                   ",\n{{\"name\":\"temperature (C)\",\"ph\":\"C\",\"ts\":{},\"pid\":{},\"args\":{{\"C\":{:.2f}}}}}",
                   to_us(d.time), d.rank, d.temperature.value());
  }
  samples_.clear();
  samples_.shrink_to_fit();
  if (first && !flushed && out.size() > slices_at + 2) out.erase(slices_at, 2);  // no leading ",\n"
  out += "\n],\n\"displayTimeUnit\":\"ms\",\n";
  Json other{{"graph", graph.name},
             {"total_ranks", graph.total_ranks()},
             {"ranks_in_trace", kept_.size()},
             {"makespan_us", to_us(makespan)}};
  out += "\"otherData\":" + other.dump() + "\n}\n";
  if (file) {
    flush();
    if (std::fclose(file.release()) != 0) throw core::Error(core::ErrorKind::io, fmt::format("error writing trace '{}'", stream_path_));
    streamed_ = true;
  } else {
    json_ = std::move(out);
  }
  spans_.clear();
  spans_.shrink_to_fit();
}

std::string ChromeTraceWriter::json() const {
  if (json_.empty()) return "{\"traceEvents\":[]}\n";
  return json_;
}

void ChromeTraceWriter::write(const std::string& path) const {
  if (streamed_ && path == stream_path_) return;  // on_end wrote it
  std::ofstream f(path, std::ios::binary);
  if (!f) throw core::Error(core::ErrorKind::io, fmt::format("cannot write trace '{}'", path));
  // Not json(): that copies, and the trace can be a gigabyte.
  static const std::string empty = "{\"traceEvents\":[]}\n";
  const std::string& j = json_.empty() ? empty : json_;
  f.write(j.data(), static_cast<std::streamsize>(j.size()));
  f.close();
  if (!f) throw core::Error(core::ErrorKind::io, fmt::format("error writing trace '{}'", path));
}

}  // namespace inflect::io
