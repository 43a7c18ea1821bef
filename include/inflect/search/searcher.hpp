#pragma once
// `inflect search`: enumerate every plan of the space, prune those whose memory does not fit,
// estimate the rest analytically, simulate the best K with the engine, and rank them by the
// engine's step time.
#include <optional>
#include <string>
#include <vector>

#include "inflect/analysis/run_report.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/search/estimate.hpp"
#include "inflect/search/search_file.hpp"

namespace inflect::search {

struct SearchOptions {
  int top = 10;  // plans simulated
  int jobs = 1;  // threads for estimation and simulation (results do not depend on it)
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
};

struct RankedPlan {
  Candidate plan;
  std::string label;  // describe(): the plan as its report labels it
  Estimate estimate;
  int estimate_rank = 0;  // 1 = the estimate's best
  std::optional<analysis::RunReport> report;  // the engine's, for simulated plans
  std::string error;                          // when the engine could not run it
  double simulated_step_s() const { return report && report->simulated ? report->step_time.value() : 0.0; }
};

struct SearchResult {
  std::string name;
  int devices = 0;
  SearchSpace space;  // with the defaults resolved
  std::size_t enumerated = 0, pruned = 0, estimated = 0, simulated = 0;
  double enumerate_s = 0, estimate_s = 0, simulate_s = 0;  // wall-clock, not part of any result
  int jobs = 1;
  /// The simulated plans, best engine step time first (failed ones last).
  std::vector<RankedPlan> plans;
  /// Kendall's tau between the estimate's and the engine's order of the simulated plans (1 =
  /// same order), and where the engine's best plan stood in the estimate's ranking.
  double kendall_tau = 1;
  int engine_best_estimate_rank = 0;
  double plans_per_s() const { return enumerated / std::max(1e-9, enumerate_s + estimate_s); }
};

/// Estimates every candidate, `jobs` threads over contiguous blocks (each with its own
/// Estimator); the result is in candidate order and independent of `jobs`.
std::vector<Estimate> estimate_all(const plan::Experiment& base, const std::vector<Candidate>& plans, int jobs,
                                   bool even_if_over_memory = false);
/// The base experiment with the candidate's plan, run through the engine.
analysis::RunReport simulate_plan(const plan::Experiment& base, const Candidate& c, plan::Fidelity fidelity);
/// Kendall's tau-a of two equally long score lists (pairs tied in either count as neither).
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b);

SearchResult run_search(const SearchSpec& spec, const SearchOptions& options);

}  // namespace inflect::search
