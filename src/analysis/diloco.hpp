#pragma once
// DiLoCo-style training in the one narrow call (training.diloco; docs/low-communication.md):
// simulate() hands a DiLoCo experiment here. Private to analysis.
#include "inflect/analysis/run_report.hpp"
#include "inflect/analysis/simulate.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/experiment.hpp"

namespace inflect::analysis {

/// Compiles and simulates the inner step and the sync step (plan::DilocoStep) with `co`, and the
/// synchronous plan (the experiment without training.diloco; not simulated when its memory does
/// not fit), and reports the period's mean step: every step figure of the report weighs the inner
/// step by (sync_every - fragments) / sync_every and the sync step by fragments / sync_every
/// (amortise), and `diloco` holds the steps and what they amortise to. The observer sees the sync
/// step. `mem` is e's memory estimate at its derived dp (simulate() has it already).
RunReport simulate_diloco(const plan::Experiment& e, const SimulateOptions& options, const plan::CompileOptions& co,
                          const plan::MemoryEstimate& mem);

/// The settings of e's training.diloco into `d` (modeled), with every timing figure unknown: what
/// a report whose plan was not simulated says.
void describe_diloco(const plan::Experiment& e, DilocoReport& d);

/// The report of a period of `inner_weight` inner steps and `sync_weight` sync steps (weights
/// summing to 1): each step figure the weighted mean of the two runs' (so the breakdown's parts
/// still add up to the step), rates from the mean step, mean powers weighted by time, peaks and
/// temperatures the higher of the two. Memory, identity and settings are the sync run's.
RunReport amortise(const RunReport& inner, double inner_weight, const RunReport& sync, double sync_weight);

}  // namespace inflect::analysis
