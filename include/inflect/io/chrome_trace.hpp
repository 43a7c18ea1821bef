#pragma once
// Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one process per simulated rank,
// one thread per stream, compute and communication as complete ("X") slices.
#include <string>
#include <vector>

#include "inflect/sim/observer.hpp"

namespace inflect::io {

class ChromeTraceWriter : public sim::Observer {
 public:
  /// Keeps at most `max_ranks` ranks (lowest ids first) so traces of huge runs stay openable.
  explicit ChromeTraceWriter(int max_ranks = 64);
  void on_begin(const workload::ExecutionGraph& graph) override;
  void on_op(const workload::ExecutionGraph& graph, const sim::OpSpan& span) override;
  void on_end(const workload::ExecutionGraph& graph, core::Time makespan) override;
  /// The trace JSON; valid after on_end.
  std::string json() const;
  /// Writes json() to `path`; throws core::Error(io) when it cannot.
  void write(const std::string& path) const;

 private:
  int max_ranks_;
  std::vector<sim::OpSpan> spans_;
  std::string json_;
};

}  // namespace inflect::io
