#pragma once
// The one narrow call through which everything above the engine runs an experiment.
#include "inflect/analysis/run_report.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/experiment.hpp"
#include "inflect/sim/observer.hpp"

namespace inflect::analysis {

struct SimulateOptions {
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  bool fuse_blocks = true;
  sim::Observer* observer = nullptr;  // e.g. the Chrome trace writer
};

/// Compiles (or loads the trace of) an experiment, runs the engine once, and reports.
RunReport simulate(const plan::Experiment& e, const SimulateOptions& options = {});

/// Runs an already built execution graph on the experiment's cluster (for trace replay and tests).
/// `memory` may be null when unknown.
RunReport simulate_graph(const plan::Experiment& e, const workload::ExecutionGraph& graph,
                         const plan::MemoryEstimate* memory, const std::string& plan_summary,
                         const SimulateOptions& options = {});

/// The execution graph the experiment compiles to (what `inflect export` writes).
workload::ExecutionGraph build_graph(const plan::Experiment& e, const SimulateOptions& options = {});

}  // namespace inflect::analysis
