#pragma once
// Traces users already record, read into the execution graph: MLCommons Chakra execution traces
// (docs/traces.md, chakra_import.cpp) and PyTorch profiler (Kineto) Chrome traces
// (kineto_import.cpp); inflect's own execution-graph JSON (graph_json.hpp) is the third format.
//
// An import keeps what the trace measured (each compute node's duration) and models what the
// question changes: collectives and point-to-point transfers are simulated on the modeled fabric
// (their recorded durations are not used), and with `retime` every compute node whose work the
// trace describes (FLOPs, bytes, shapes) is timed by the target device's model instead of its
// recorded duration. The summary says how many nodes were treated which way and why, for the
// report.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inflect/core/precision.hpp"
#include "inflect/core/units.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::workload {

enum class TraceFormat : std::uint8_t { graph_json, chakra, kineto };
const char* to_string(TraceFormat f);

struct TraceImportOptions {
  /// Time compute nodes from their FLOPs and bytes on the target device instead of their recorded
  /// durations (`--retime`, `workload.retime`).
  bool retime = false;
  /// A compute node's precision when the trace does not name its tensors' types (training.precision).
  core::Precision precision = core::Precision::bf16;
};

/// How many nodes went which way, each with the reason, in the order first met (for the report's
/// `trace` section and the summary).
struct NodeTally {
  std::vector<std::pair<std::string, std::int64_t>> counts;
  void add(const std::string& what, std::int64_t n = 1);
  std::int64_t total() const;
};

/// What an import read and how it treated it.
struct TraceImportSummary {
  TraceFormat format = TraceFormat::graph_json;
  std::string path;
  int rank_files = 0;      // files read
  int distinct_files = 0;  // of those, different in content (identical files are parsed once)
  int ranks = 0;           // ranks of the job
  std::int64_t nodes = 0;  // nodes (Chakra) or events (Kineto) read, over all files
  /// Compute nodes by treatment: "recorded duration", "re-timed from FLOPs and bytes", "timed by
  /// the model (inflect export)", "recorded: host op", "recorded: no FLOPs or bytes in the trace"...
  NodeTally compute;
  /// Communication nodes by kind ("all_reduce", "send/recv", ...): simulated on the fabric.
  NodeTally communication;
  /// Everything else, each with what became of it ("process-group metadata", "control dependency
  /// on a node not in the trace: taken as met", ...).
  NodeTally other;
  /// The step as recorded: the longest rank's span from its first node's start to its last
  /// node's end (Chakra start_time_micros + duration_micros; Kineto's ProfilerStep), if the trace
  /// has timestamps.
  std::optional<core::Seconds> recorded_step;
  /// Ranks absent from the trace that a present rank stands for (symmetric), by the rule of
  /// docs/traces.md.
  int replicated_ranks = 0;
};

struct ImportedTrace {
  ExecutionGraph graph;
  TraceImportSummary summary;
};

/// Reads `path` in `format` into an execution graph. Errors (core::Error input or io) name the
/// file, the node and the field.
ImportedTrace import_trace(TraceFormat format, const std::string& path, const TraceImportOptions& options);

/// One rank's file given as its content, named `name` (its extension says the form: a Chakra
/// `.json` is chakra_jsonizer's, any other name protobuf): for fuzzing and tests; the same checks.
ImportedTrace import_trace_text(TraceFormat format, const std::string& name, const std::string& text,
                                const TraceImportOptions& options);

/// The files a trace at `path` is read from, in rank order: for Chakra a directory's
/// `NAME.RANK.et` / `NAME.RANK.json` files (or the one file given), for Kineto a directory's
/// `*.json` / `*.pt.trace.json` files (or the one file), for graph JSON the file. For the
/// loader's provenance; the importers read the same list.
std::vector<std::string> trace_files(TraceFormat format, const std::string& path);

}  // namespace inflect::workload
