#pragma once
// One rank's Kineto trace as execution-graph ops (kineto_rank.cpp): the GPU activities of the
// replayed window on their CUDA streams, the launching host threads' gaps as delay ops, and the
// dependencies the trace records (launches, synchronizations, stream waits on CUDA events).
// Private to the workload layer.
#include <cstdint>
#include <string>
#include <vector>

#include "inflect/workload/trace_builder.hpp"
#include "inflect/workload/trace_import.hpp"
#include "workload/kineto_trace.hpp"

namespace inflect::workload::kineto {

/// The span replayed, in the trace's nanoseconds: a ProfilerStep's [begin, end), or the whole trace.
struct Window {
  std::int64_t begin = 0, end = 0;
  bool whole = true;
  std::int64_t step = -1;   // ProfilerStep#N, -1 for the whole trace
  std::int64_t step_tid = -1;  // the thread that annotated the step (its host stream is "host")
};

/// A collective a rank issues, in issue order, for matching the ranks (kineto_import.cpp).
struct IssuedCollective {
  std::vector<RankId> members;
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0;
  std::int64_t seq = -1;
  std::string label;  // "event 812 'ncclDevKernel_AllReduce_Sum_f32_RING_LL' (all_reduce of 4 MB)"
};

struct RankBuild {
  RankTrace trace;
  std::vector<IssuedCollective> collectives;
  /// Every process group the rank's collectives use, with the group description (for the
  /// replication rule and the dimension note).
  std::vector<std::vector<RankId>> groups;
  std::int64_t recorded_ns = 0;  // the step as the GPU ran it: its first activity to its last
  NodeTally compute, communication, other;
};

/// Builds rank `rank`'s ops from `t` over `w` (kernels, collectives and groups registered in `b`).
RankBuild build_rank(const Trace& t, RankId rank, int world, const Window& w, TraceGraphBuilder& b,
                   const TraceImportOptions& options);

/// The ProfilerStep numbers of `t` that are complete (a later step's annotation follows them; with
/// one annotation, that one), with their annotations' spans.
struct Step {
  std::int64_t number = -1, begin = 0, end = 0, tid = -1;
};
std::vector<Step> complete_steps(const Trace& t);

/// The whole trace as a window.
Window whole_window(const Trace& t);

}  // namespace inflect::workload::kineto
