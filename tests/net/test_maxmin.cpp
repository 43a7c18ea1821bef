#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "inflect/net/maxmin.hpp"

using inflect::net::MaxMinSystem;

namespace {

// The solver works in doubles; every expected value below is a short sum or quotient of small
// integers, so the only error is a few ulps of rounding.
constexpr double kRel = 1e-12;
// Property checks over random systems: "saturated", "at the bound" and "maximal" are judged to
// this relative margin (the solver's own saturation test is 1e-12 of capacity, errors accumulate
// over a few dozen filling rounds).
constexpr double kPropRel = 1e-9;

using Usage = std::vector<std::pair<MaxMinSystem::ConsId, double>>;

std::vector<MaxMinSystem::VarId> solve(MaxMinSystem& s) {
  std::vector<MaxMinSystem::VarId> changed;
  s.solve(changed);
  std::sort(changed.begin(), changed.end());
  return changed;
}

}  // namespace

TEST_CASE("maxmin: the two-link example of maxmin.hpp") {
  // A = 10, B = 4; x on A, y on A and B. Filling raises x and y together: B fills first at
  // y = 4 / 1 = 4 (A would fill at 10 / 2 = 5). Fix y = 4; A has 10 - 4 = 6 left for x alone.
  // Expected: x = 6, y = 4.
  MaxMinSystem s;
  auto a = s.add_constraint(10);
  auto b = s.add_constraint(4);
  auto x = s.add_variable(Usage{{a, 1.0}});
  auto y = s.add_variable(Usage{{a, 1.0}, {b, 1.0}});
  auto changed = solve(s);
  CHECK(changed == std::vector<MaxMinSystem::VarId>{x, y});
  CHECK(s.rate(x) == doctest::Approx(6).epsilon(kRel));
  CHECK(s.rate(y) == doctest::Approx(4).epsilon(kRel));
}

TEST_CASE("maxmin: three flows on one link share it equally") {
  // One constraint of 9, three unit-weight flows: all rise together until 3 * r = 9, r = 3.
  MaxMinSystem s;
  auto c = s.add_constraint(9);
  std::vector<MaxMinSystem::VarId> v;
  for (int i = 0; i < 3; ++i) v.push_back(s.add_variable(Usage{{c, 1.0}}));
  CHECK(solve(s).size() == 3);
  for (auto id : v) CHECK(s.rate(id) == doctest::Approx(3).epsilon(kRel));
  CHECK(s.live_variables() == 3);
}

TEST_CASE("maxmin: a weight-2 flow consumes twice its rate") {
  // A = 12, B = 2. x uses A with weight 2; y uses A (weight 1) and B (weight 1).
  // Level l rises for both: A fills at 2l + l = 12, l = 4; B fills at l = 2 -> B first.
  // Fix y = 2 (A used 2 * 2 + 2 = 6 so far, 6 left). x alone on A with weight 2 rises by
  // 6 / 2 = 3 more: x = 2 + 3 = 5. Check: A carries 2 * 5 + 2 = 12 = capacity.
  MaxMinSystem s;
  auto a = s.add_constraint(12);
  auto b = s.add_constraint(2);
  auto x = s.add_variable(Usage{{a, 2.0}});
  auto y = s.add_variable(Usage{{a, 1.0}, {b, 1.0}});
  solve(s);
  CHECK(s.rate(x) == doctest::Approx(5).epsilon(kRel));
  CHECK(s.rate(y) == doctest::Approx(2).epsilon(kRel));

  // Alone on a link, weights split the capacity by consumption, not by rate: one constraint of
  // 12, p with weight 2, q with weight 1, both rise at l until 2l + l = 12: p = q = 4.
  MaxMinSystem t;
  auto c = t.add_constraint(12);
  auto p = t.add_variable(Usage{{c, 2.0}});
  auto q = t.add_variable(Usage{{c, 1.0}});
  solve(t);
  CHECK(t.rate(p) == doctest::Approx(4).epsilon(kRel));
  CHECK(t.rate(q) == doctest::Approx(4).epsilon(kRel));

  // Duplicate usage entries are summed: {c, 1} twice is weight 2 on c; alone on 12 it gets 6.
  MaxMinSystem u;
  auto d = u.add_constraint(12);
  auto w = u.add_variable(Usage{{d, 1.0}, {d, 1.0}});
  solve(u);
  CHECK(u.rate(w) == doctest::Approx(6).epsilon(kRel));
}

TEST_CASE("maxmin: a bound caps one rate and the others take the rest") {
  // One link of 10, three flows, the first bounded at 1. Level rises: the bound is hit at l = 1
  // before the link fills (10 / 3 = 3.33). Fix it at 1; 10 - 3 * 1 = 7 left for two flows:
  // l = 1 + 7 / 2 = 4.5. Expected: 1, 4.5, 4.5 (sum 10).
  MaxMinSystem s;
  auto c = s.add_constraint(10);
  auto capped = s.add_variable(Usage{{c, 1.0}}, 1.0);
  auto f1 = s.add_variable(Usage{{c, 1.0}});
  auto f2 = s.add_variable(Usage{{c, 1.0}});
  solve(s);
  CHECK(s.rate(capped) == doctest::Approx(1).epsilon(kRel));
  CHECK(s.rate(f1) == doctest::Approx(4.5).epsilon(kRel));
  CHECK(s.rate(f2) == doctest::Approx(4.5).epsilon(kRel));

  // A bound above the fair share does not bind: bound 8 > 10 / 3, so all three get 10 / 3.
  MaxMinSystem t;
  auto d = t.add_constraint(10);
  std::vector<MaxMinSystem::VarId> v{t.add_variable(Usage{{d, 1.0}}, 8.0), t.add_variable(Usage{{d, 1.0}}),
                                     t.add_variable(Usage{{d, 1.0}})};
  solve(t);
  for (auto id : v) CHECK(t.rate(id) == doctest::Approx(10.0 / 3).epsilon(kRel));

  // A variable over no constraint runs at its bound.
  MaxMinSystem u;
  auto free_var = u.add_variable(Usage{}, 7.0);
  CHECK(solve(u) == std::vector<MaxMinSystem::VarId>{free_var});
  CHECK(u.rate(free_var) == doctest::Approx(7).epsilon(kRel));
}

TEST_CASE("maxmin: unconnected components are solved independently") {
  // A = 10 with x, y: 5 each. Then z alone on B = 6 (no shared constraint with A): z = 6, and
  // only z is re-solved and reported; x and y keep 5.
  MaxMinSystem s;
  auto a = s.add_constraint(10);
  auto b = s.add_constraint(6);
  auto x = s.add_variable(Usage{{a, 1.0}});
  auto y = s.add_variable(Usage{{a, 1.0}});
  CHECK(solve(s) == std::vector<MaxMinSystem::VarId>{x, y});
  auto z = s.add_variable(Usage{{b, 1.0}});
  CHECK(solve(s) == std::vector<MaxMinSystem::VarId>{z});
  CHECK(s.rate(x) == doctest::Approx(5).epsilon(kRel));
  CHECK(s.rate(y) == doctest::Approx(5).epsilon(kRel));
  CHECK(s.rate(z) == doctest::Approx(6).epsilon(kRel));
  // A second flow on B halves z (6 / 2 = 3) and leaves A's flows untouched and unreported.
  auto w = s.add_variable(Usage{{b, 1.0}});
  CHECK(solve(s) == std::vector<MaxMinSystem::VarId>{z, w});
  CHECK(s.rate(z) == doctest::Approx(3).epsilon(kRel));
  CHECK(s.rate(x) == doctest::Approx(5).epsilon(kRel));
  // Nothing touched: nothing reported.
  CHECK(solve(s).empty());
}

TEST_CASE("maxmin: remove then re-add a variable") {
  // Link of 9 with three flows: 3 each. Remove one: 9 / 2 = 4.5 each for the two left, both
  // reported. Re-add: back to 3 each, the freed id reused.
  MaxMinSystem s;
  auto c = s.add_constraint(9);
  auto a = s.add_variable(Usage{{c, 1.0}});
  auto b = s.add_variable(Usage{{c, 1.0}});
  auto d = s.add_variable(Usage{{c, 1.0}});
  solve(s);
  s.remove_variable(b);
  CHECK(s.live_variables() == 2);
  CHECK(solve(s) == std::vector<MaxMinSystem::VarId>{a, d});
  CHECK(s.rate(a) == doctest::Approx(4.5).epsilon(kRel));
  CHECK(s.rate(d) == doctest::Approx(4.5).epsilon(kRel));
  auto e = s.add_variable(Usage{{c, 1.0}});
  CHECK(e == b);
  CHECK(solve(s) == std::vector<MaxMinSystem::VarId>{a, b, d});
  for (auto id : {a, d, e}) CHECK(s.rate(id) == doctest::Approx(3).epsilon(kRel));

  // Removing the flow that joined two links splits the component: A = 10 with x, B = 4 with z,
  // y on both. Before: y = 4 / 2 = 2 and z = 2 (B fills at l = 2), x = 10 - 2 = 8. Remove y:
  // x = 10 alone on A, z = 4 alone on B.
  MaxMinSystem t;
  auto la = t.add_constraint(10);
  auto lb = t.add_constraint(4);
  auto x = t.add_variable(Usage{{la, 1.0}});
  auto y = t.add_variable(Usage{{la, 1.0}, {lb, 1.0}});
  auto z = t.add_variable(Usage{{lb, 1.0}});
  solve(t);
  CHECK(t.rate(x) == doctest::Approx(8).epsilon(kRel));
  CHECK(t.rate(y) == doctest::Approx(2).epsilon(kRel));
  CHECK(t.rate(z) == doctest::Approx(2).epsilon(kRel));
  t.remove_variable(y);
  CHECK(solve(t) == std::vector<MaxMinSystem::VarId>{x, z});
  CHECK(t.rate(x) == doctest::Approx(10).epsilon(kRel));
  CHECK(t.rate(z) == doctest::Approx(4).epsilon(kRel));
}

namespace {

struct RandomVar {
  Usage usage;
  double bound = MaxMinSystem::kUnbounded;
};

struct RandomSystem {
  std::vector<double> capacity;
  std::vector<RandomVar> vars;
};

RandomSystem random_system(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> ncons(1, 6), nvars(1, 12), nuse(1, 3);
  std::uniform_real_distribution<double> cap(0.5, 20.0), weight(0.25, 4.0), bound(0.05, 6.0), coin(0, 1);
  RandomSystem r;
  const int nc = ncons(rng);
  for (int i = 0; i < nc; ++i) r.capacity.push_back(cap(rng));
  std::uniform_int_distribution<int> pick(0, nc - 1);
  const int nv = nvars(rng);
  for (int i = 0; i < nv; ++i) {
    RandomVar v;
    const int k = nuse(rng);
    for (int j = 0; j < k; ++j) v.usage.push_back({static_cast<MaxMinSystem::ConsId>(pick(rng)), weight(rng)});
    if (coin(rng) < 0.3) v.bound = bound(rng);
    r.vars.push_back(std::move(v));
  }
  return r;
}

std::vector<double> solve_fresh(const RandomSystem& r) {
  MaxMinSystem s;
  for (double c : r.capacity) s.add_constraint(c);
  std::vector<MaxMinSystem::VarId> ids;
  for (const auto& v : r.vars) ids.push_back(s.add_variable(v.usage, v.bound));
  solve(s);
  std::vector<double> rates;
  for (auto id : ids) rates.push_back(s.rate(id));
  return rates;
}

// Checks feasibility and the max-min bottleneck condition; returns the number of failures.
int check_max_min(const RandomSystem& r, const std::vector<double>& rate) {
  const std::size_t nc = r.capacity.size();
  std::vector<double> load(nc, 0.0), max_rate(nc, 0.0);
  for (std::size_t i = 0; i < r.vars.size(); ++i)
    for (const auto& [c, w] : r.vars[i].usage) {
      load[c] += w * rate[i];
      max_rate[c] = std::max(max_rate[c], rate[i]);
    }
  int failures = 0;
  for (std::size_t c = 0; c < nc; ++c)
    if (load[c] > r.capacity[c] * (1 + kPropRel)) ++failures;
  for (std::size_t i = 0; i < r.vars.size(); ++i) {
    if (rate[i] > r.vars[i].bound * (1 + kPropRel)) ++failures;
    if (rate[i] >= r.vars[i].bound * (1 - kPropRel)) continue;  // bottlenecked by its bound
    bool bottlenecked = false;
    for (const auto& [c, w] : r.vars[i].usage)
      if (load[c] >= r.capacity[c] * (1 - kPropRel) && rate[i] >= max_rate[c] * (1 - kPropRel)) bottlenecked = true;
    if (!bottlenecked) ++failures;
  }
  return failures;
}

}  // namespace

TEST_CASE("maxmin: random systems are feasible, bottlenecked and monotone in capacity") {
  // Max-min fairness is exactly: feasible (no constraint over capacity, no rate over its bound)
  // and every variable bottlenecked (it sits at its bound, or crosses a saturated constraint on
  // which no variable is faster). Raising a capacity can only raise the first filling level,
  // min over constraints of capacity / (sum of weights) and over bounds, so the smallest rate
  // never falls.
  std::mt19937_64 rng(20240611);
  std::uniform_real_distribution<double> raise(1.0, 3.0);
  int failures = 0, monotone_failures = 0;
  for (int trial = 0; trial < 400; ++trial) {
    RandomSystem r = random_system(rng);
    const std::vector<double> rate = solve_fresh(r);
    failures += check_max_min(r, rate);
    RandomSystem raised = r;
    std::uniform_int_distribution<std::size_t> pick(0, r.capacity.size() - 1);
    raised.capacity[pick(rng)] *= raise(rng);
    const std::vector<double> rate2 = solve_fresh(raised);
    failures += check_max_min(raised, rate2);
    const double min1 = *std::min_element(rate.begin(), rate.end());
    const double min2 = *std::min_element(rate2.begin(), rate2.end());
    if (min2 < min1 * (1 - kPropRel)) ++monotone_failures;
  }
  CHECK(failures == 0);
  CHECK(monotone_failures == 0);
}

TEST_CASE("maxmin: incremental adds and removes match a fresh solve") {
  // The incremental solver re-solves only touched components; after any sequence of adds and
  // removes its rates must equal those of a system built from scratch with the live variables.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> coin(0, 1);
  int mismatches = 0, failures = 0;
  for (int trial = 0; trial < 60; ++trial) {
    RandomSystem pool = random_system(rng);
    for (int i = 0; i < 20; ++i) pool.vars.push_back(random_system(rng).vars.front());
    for (auto& v : pool.vars)  // keep usage within this pool's constraints
      for (auto& u : v.usage) u.first %= static_cast<MaxMinSystem::ConsId>(pool.capacity.size());
    MaxMinSystem s;
    for (double c : pool.capacity) s.add_constraint(c);
    std::vector<std::pair<std::size_t, MaxMinSystem::VarId>> live;  // (pool index, id)
    for (int step = 0; step < 30; ++step) {
      if (!live.empty() && coin(rng) < 0.4) {
        std::uniform_int_distribution<std::size_t> pick(0, live.size() - 1);
        std::size_t k = pick(rng);
        s.remove_variable(live[k].second);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        std::uniform_int_distribution<std::size_t> pick(0, pool.vars.size() - 1);
        std::size_t k = pick(rng);
        live.push_back({k, s.add_variable(pool.vars[k].usage, pool.vars[k].bound)});
      }
      solve(s);
      RandomSystem now;
      now.capacity = pool.capacity;
      for (const auto& [k, id] : live) now.vars.push_back(pool.vars[k]);
      const std::vector<double> fresh = solve_fresh(now);
      std::vector<double> inc;
      for (const auto& [k, id] : live) inc.push_back(s.rate(id));
      for (std::size_t i = 0; i < inc.size(); ++i)
        if (std::abs(inc[i] - fresh[i]) > kPropRel * std::max(1.0, fresh[i])) ++mismatches;
      if (!inc.empty()) failures += check_max_min(now, inc);
    }
  }
  CHECK(mismatches == 0);
  CHECK(failures == 0);
}

TEST_CASE("maxmin: a variable added alone is solved directly, and re-solved with one that joins it") {
  MaxMinSystem s;
  const auto a = s.add_constraint(10), b = s.add_constraint(4);
  std::vector<MaxMinSystem::VarId> changed;
  // Alone on its constraints: the tightest one over its weight.
  const std::pair<MaxMinSystem::ConsId, double> ab[] = {{a, 1}, {b, 2}};
  const auto x = s.add_variable(ab);
  s.solve(changed);
  CHECK(changed == std::vector<MaxMinSystem::VarId>{x});
  CHECK(s.rate(x) == doctest::Approx(2));  // b: 4 / 2
  // One added alone and another joining its constraint before the solve: solved together.
  s.remove_variable(x);
  const std::pair<MaxMinSystem::ConsId, double> only_a[] = {{a, 1}};
  const auto y = s.add_variable(only_a);
  const auto z = s.add_variable(only_a);
  changed.clear();
  s.solve(changed);
  CHECK(s.rate(y) == doctest::Approx(5));
  CHECK(s.rate(z) == doctest::Approx(5));
  // Removed, and its id reused by a new lone variable before the solve: reported once.
  s.remove_variable(y);
  s.remove_variable(z);
  const std::pair<MaxMinSystem::ConsId, double> only_b[] = {{b, 1}};
  const auto w = s.add_variable(only_a);
  s.remove_variable(w);
  const auto v = s.add_variable(only_b);
  changed.clear();
  s.solve(changed);
  CHECK(std::count(changed.begin(), changed.end(), v) == 1);
  CHECK(s.rate(v) == doctest::Approx(4));
}

TEST_CASE("maxmin: a solo variable joined after its solve shares, and gets the link back when left alone") {
  // x alone on a (capacity 10) is solved directly at 10. y joins a after that solve: x must be
  // entered in a's list and both re-solved (5 each, both reported). When y leaves, x is re-solved
  // to 10 again; when x leaves too, a new variable on a is alone again (rate 10).
  MaxMinSystem s;
  const auto a = s.add_constraint(10);
  std::vector<MaxMinSystem::VarId> changed;
  const std::pair<MaxMinSystem::ConsId, double> only_a[] = {{a, 1}};
  const auto x = s.add_variable(only_a);
  s.solve(changed);
  CHECK(s.rate(x) == doctest::Approx(10));
  const auto y = s.add_variable(only_a);
  changed.clear();
  s.solve(changed);
  CHECK(s.rate(x) == doctest::Approx(5));
  CHECK(s.rate(y) == doctest::Approx(5));
  CHECK(std::count(changed.begin(), changed.end(), x) == 1);
  CHECK(std::count(changed.begin(), changed.end(), y) == 1);
  s.remove_variable(y);
  changed.clear();
  s.solve(changed);
  CHECK(s.rate(x) == doctest::Approx(10));
  CHECK(changed == std::vector<MaxMinSystem::VarId>{x});
  s.remove_variable(x);
  const auto z = s.add_variable(only_a);
  changed.clear();
  s.solve(changed);
  CHECK(s.rate(z) == doctest::Approx(10));
  CHECK(changed == std::vector<MaxMinSystem::VarId>{z});
}
