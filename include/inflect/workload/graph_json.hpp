#pragma once
// The execution graph as JSON, so an exported graph replays to the same report
// (`workload: {trace: file.json}`). Format documented in docs/execution-graph.md.
#include <string>

#include "inflect/workload/exec_graph.hpp"

namespace inflect::workload {

/// Serializes the whole graph (deterministic: same graph, same bytes).
std::string graph_to_json(const ExecutionGraph& g);
/// Parses a graph; throws core::Error(input) naming `file` and the offending field.
ExecutionGraph graph_from_json(const std::string& text, const std::string& file);

}  // namespace inflect::workload
