#pragma once
// The execution graph as MLCommons Chakra execution traces, one per simulated rank, so that
// Chakra's own tools and ASTRA-sim read what inflect builds (`inflect export --format chakra`,
// docs/traces.md). Each file holds the standard fields those tools read (node types, both
// dependency kinds, duration_micros, num_ops, tensor_size, comm_type, comm_size, pg_name and the
// `## process_group:init ##` metadata node) and, in attributes named inflect_*, the op exactly as
// inflect had it, so that importing the files gives the same graph and the same report.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "inflect/core/time.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::workload {

/// One rank's trace in both of Chakra's forms: the protobuf `.et` bytes (length-delimited
/// messages, as Chakra's protolib writes them) and the JSON chakra_jsonizer would print for them.
struct ChakraRankTrace {
  RankId rank = 0;
  std::string et;
  std::string json;
};

struct ChakraExportOptions {
  /// The inflect_* attributes that make a round trip exact. Without them the files hold only what
  /// Chakra's converter writes (a trace as another tool would record it): inflect reads them back
  /// with each kernel at its duration_micros, recorded.
  bool inflect_attributes = true;
  /// Also print each rank's JSON (ChakraRankTrace::json); off, it stays empty.
  bool json = true;
};

/// Writes the graph rank by rank (replicas written out), calling `sink` for each simulated rank in
/// order. `durations`, when given, is each kernel's duration as the engine runs it on the
/// experiment's device (sim::kernel_duration: recorded, or modeled), written as duration_micros for
/// ASTRA-sim's replay mode; without it a recorded kernel writes its recorded duration and a modeled
/// one 0. inflect ignores duration_micros on import of its own export (its kernels come back whole).
void export_chakra(const ExecutionGraph& g, const std::vector<core::Time>* durations,
                   const std::function<void(const ChakraRankTrace&)>& sink, const ChakraExportOptions& options = {});

}  // namespace inflect::workload
