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

/// One entry of the `kernels` table exactly as graph_to_json writes it, and back (checked as the
/// graph reader checks it; `where` names the entry in errors). For formats that carry inflect's
/// own kernels and collectives exactly: Chakra export (chakra_export.cpp).
std::string kernel_to_json(const Kernel& k);
Kernel kernel_from_json(const std::string& text, const std::string& where);
/// One entry of the `collectives` table; `group_count` bounds its group.
std::string collective_to_json(const Collective& c);
Collective collective_from_json(const std::string& text, const std::string& where, std::size_t group_count);

}  // namespace inflect::workload
