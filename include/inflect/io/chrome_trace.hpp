#pragma once
// Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one process per simulated rank,
// one thread per stream, compute and communication as complete ("X") slices.
//
// Layout: metadata events name each process "rank N" and each thread by the graph's stream name;
// every op is an "X" slice (ts and dur in microseconds, as doubles, pid = rank, tid = stream) named
// "<kernel or collective> L<layer> mb<micro-batch>", with args {phase, layer, micro_batch, flops,
// bytes, ...}; a collective that waited for its peers also gets a slice "wait <name>" from posted
// to start on the same thread. With a power model, each rank also has counter ("C") tracks
// "power (W)", "clock (MHz)" and "temperature (C)".
#include <string>
#include <vector>

#include "inflect/sim/observer.hpp"

namespace inflect::io {

class ChromeTraceWriter : public sim::Observer {
 public:
  /// Keeps at most `max_ranks` ranks (lowest ids first) so traces of huge runs stay openable;
  /// max_ranks <= 0 keeps every rank.
  explicit ChromeTraceWriter(int max_ranks = 64);
  void on_begin(const workload::ExecutionGraph& graph) override;
  void on_op(const workload::ExecutionGraph& graph, const sim::OpSpan& span) override;
  void on_device(const workload::ExecutionGraph& graph, const sim::DeviceSample& sample) override;
  void on_end(const workload::ExecutionGraph& graph, core::Time makespan) override;
  /// The trace JSON; valid after on_end (before it, a trace with no events). Deterministic: the
  /// same spans, in any arrival order, give the same bytes.
  std::string json() const;
  /// Writes json() to `path`; throws core::Error(io) when it cannot. A no-op for the path the
  /// trace was streamed to.
  void write(const std::string& path) const;
  /// Makes on_end write the trace to `path` as it formats it, in pieces, instead of holding it
  /// (a full-fidelity trace reaches a gigabyte); json() then stays the empty trace.
  void stream_to(std::string path) { stream_path_ = std::move(path); }

 private:
  int max_ranks_;
  std::string stream_path_;
  bool streamed_ = false;
  std::vector<workload::RankId> kept_;  // sorted ranks whose ops are recorded
  struct Slice {
    sim::OpSpan span;
    workload::Op op;  // looked up once, when the op finishes
  };
  std::vector<Slice> spans_;
  std::vector<sim::DeviceSample> samples_;
  std::string json_;
};

}  // namespace inflect::io
