#pragma once
// Several jobs' execution graphs as one graph over a shared cluster (`inflect jobs`,
// docs/geo.md "Several jobs on shared sites"): each job's ranks renamed to the devices it was
// placed on, its kernels, collectives and process groups appended to the merged tables. The jobs
// stay independent in their dependencies (a dependency never leaves its rank, and a collective
// only its job's groups), so in the engine they meet only where their transfers share links.
#include <span>
#include <string>
#include <vector>

#include "inflect/workload/exec_graph.hpp"

namespace inflect::workload {

/// One job's graph and where its ranks run: rank r of `graph` becomes rank `devices[r]`.
struct GraphPart {
  const ExecutionGraph* graph = nullptr;
  std::vector<RankId> devices;  // one per rank of the job (graph->total_ranks())
};

/// The parts as one graph of `total_ranks` ranks (the cluster's devices); a device no part uses
/// is an idle rank, not simulated. Every part's simulated ranks are simulated (a symmetric part's
/// mirrors are renamed too, so its ranks still stand for the ones they stood for). Ops keep their
/// stream names, phases, layers and micro-batches; ranks are added in increasing device order and
/// bracketed by ExecutionGraph::end_rank, so copies are stored once as in any graph. Facts are
/// left empty: they are each job's own. Throws core::Error(input) when a part's devices do not
/// match its ranks, fall outside [0, total_ranks), or two parts share a device.
ExecutionGraph merge_graphs(std::span<const GraphPart> parts, int total_ranks, std::string name);

}  // namespace inflect::workload
