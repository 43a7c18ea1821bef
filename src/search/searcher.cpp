#include "inflect/search/searcher.hpp"

#include <algorithm>
#include <chrono>

#include "inflect/analysis/simulate.hpp"
#include "inflect/core/error.hpp"
#include "inflect/core/parallel.hpp"

namespace inflect::search {

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<Estimate> estimate_all(const plan::Experiment& base, const std::vector<Candidate>& plans, int jobs,
                                   bool even_if_over_memory) {
  std::vector<Estimate> out(plans.size());
  if (plans.empty()) return out;
  auto topo = std::make_shared<const net::Topology>(base.cluster.topology, base.cluster.nodes);
  // Contiguous blocks, each with its own Estimator, so the estimates do not depend on `jobs`.
  core::parallel_blocks(plans.size(), jobs, [&](std::size_t lo, std::size_t hi) {
    Estimator est(base, topo);
    for (std::size_t i = lo; i < hi; ++i) out[i] = est.estimate(plans[i], even_if_over_memory);
  });
  return out;
}

analysis::RunReport simulate_plan(const plan::Experiment& base, const Candidate& c, plan::Fidelity fidelity) {
  plan::Experiment e = base;
  apply(c, e);
  plan::check_plan(e);
  analysis::SimulateOptions o;
  o.fidelity = fidelity;
  return analysis::simulate(e, o);
}

double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  if (n < 2) return 1;
  double concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double x = (a[i] - a[j]) * (b[i] - b[j]);
      if (x > 0) ++concordant;
      else if (x < 0) ++discordant;
    }
  return (concordant - discordant) / (static_cast<double>(n) * static_cast<double>(n - 1) / 2);
}

SearchResult run_search(const SearchSpec& spec, const SearchOptions& options) {
  SearchResult r;
  r.name = spec.name;
  r.devices = spec.base.cluster.devices();
  r.jobs = std::max(1, options.jobs);
  r.space = resolve_space(spec.base, spec.space);

  auto t0 = std::chrono::steady_clock::now();
  const std::vector<Candidate> plans = enumerate_plans(spec.base, spec.space);
  r.enumerate_s = since(t0);
  r.enumerated = plans.size();

  t0 = std::chrono::steady_clock::now();
  const std::vector<Estimate> est = estimate_all(spec.base, plans, r.jobs);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (est[i].fits) order.push_back(i);
  // Best estimate first; ties by enumeration order, so the ranking never depends on threads.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return est[a].step_s < est[b].step_s; });
  r.estimate_s = since(t0);
  r.estimated = order.size();
  r.pruned = plans.size() - order.size();

  const std::size_t k = std::min<std::size_t>(order.size(), static_cast<std::size_t>(std::max(0, options.top)));
  r.plans.resize(k);
  for (std::size_t i = 0; i < k; ++i) {
    r.plans[i].plan = plans[order[i]];
    r.plans[i].label = describe(spec.base, r.plans[i].plan);
    r.plans[i].estimate = est[order[i]];
    r.plans[i].estimate_rank = static_cast<int>(i) + 1;
  }
  t0 = std::chrono::steady_clock::now();
  core::parallel_blocks(k, r.jobs, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      try {
        r.plans[i].report = simulate_plan(spec.base, r.plans[i].plan, options.fidelity);
        r.plans[i].report->name = spec.name;
      } catch (const core::Error& e) {
        r.plans[i].error = e.what();
      }
    }
  });
  r.simulate_s = since(t0);
  r.simulated = k;

  auto ok = [](const RankedPlan& p) { return p.report && p.report->simulated; };
  std::stable_sort(r.plans.begin(), r.plans.end(), [&](const RankedPlan& a, const RankedPlan& b) {
    if (ok(a) != ok(b)) return ok(a);
    return ok(a) && a.simulated_step_s() < b.simulated_step_s();
  });
  std::vector<double> by_estimate, by_engine;
  for (const auto& p : r.plans)
    if (ok(p)) {
      by_estimate.push_back(p.estimate.step_s);
      by_engine.push_back(p.simulated_step_s());
    }
  r.kendall_tau = kendall_tau(by_estimate, by_engine);
  if (!r.plans.empty() && ok(r.plans.front())) r.engine_best_estimate_rank = r.plans.front().estimate_rank;
  return r;
}

}  // namespace inflect::search
