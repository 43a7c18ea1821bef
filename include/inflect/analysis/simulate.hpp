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
  /// Simulate a plan whose peak memory exceeds the device's HBM. Off by default: such a plan is
  /// reported with its memory (what does not fit, and by how much) and no step time, never
  /// timed as if it fitted. On, its figures describe a device with enough memory.
  bool simulate_over_memory = false;
};

/// Compiles (or loads the trace of) an experiment, runs the engine once, and reports.
RunReport simulate(const plan::Experiment& e, const SimulateOptions& options = {});

/// Runs an already built execution graph on the experiment's cluster (for trace replay and tests).
/// `memory` may be null when unknown.
RunReport simulate_graph(const plan::Experiment& e, const workload::ExecutionGraph& graph,
                         const plan::MemoryEstimate* memory, const std::string& plan_summary,
                         const SimulateOptions& options = {});

/// Whether `graph` can run on the experiment's cluster: as many ranks as devices, and every rank
/// simulated where devices differ (cluster.thermal, kernel jitter). Throws core::Error(input)
/// located at the key that decides. simulate_graph checks it; `inflect validate` too; `inflect jobs`
/// for each job, passing its name as `job`: the job's devices are its `nodes` in the jobs file (its
/// experiment's cluster is that share), so a wrong rank count is said of the job and located at the
/// trace that decides it.
void check_graph(const plan::Experiment& e, const workload::ExecutionGraph& graph, const std::string& job = {});

/// The execution graph the experiment compiles to (what `inflect export` writes).
workload::ExecutionGraph build_graph(const plan::Experiment& e, const SimulateOptions& options = {});

}  // namespace inflect::analysis
