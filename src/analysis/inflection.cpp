#include "inflect/analysis/inflection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "inflect/core/error.hpp"

namespace inflect::analysis {

namespace {

double share(double part, double whole) { return whole > 0 ? part / whole : 0; }

std::string pct(double fraction) { return fmt::format("{:.0f}%", 100 * fraction); }

const ScalingPoint* point_at(const Series& s, double scale) {
  for (const auto& p : s.points)
    if (p.scale == scale) return &p;
  return nullptr;
}

using Components = std::vector<std::pair<std::string, double>>;

// The component (other than plain compute) whose share of the step grows most from `a` to `b`,
// as a sentence; or, when none grows, what compute did.
std::string why_between(const ScalingPoint& a, const ScalingPoint& b, const std::string& unit) {
  const auto [ca, cb] = paired_breakdown_components(a.breakdown, b.breakdown);
  std::size_t best = 0;
  double best_rise = 0;
  for (std::size_t i = 1; i < ca.size(); ++i) {  // 0 is compute
    const double rise = share(cb[i].second, b.step_time.value()) - share(ca[i].second, a.step_time.value());
    if (rise > best_rise) {
      best_rise = rise;
      best = i;
    }
  }
  const std::string where = fmt::format("between {} and {} {}", format_scale(a.scale), format_scale(b.scale), unit);
  if (best_rise > 0.005)
    return fmt::format("{} rises from {} to {} of the step {}", ca[best].first,
                       pct(share(ca[best].second, a.step_time.value())), pct(share(cb[best].second, b.step_time.value())), where);
  return fmt::format("no overhead grows {}; compute per step goes from {:.3g} s to {:.3g} s, so the work per device "
                     "shrinks less than the scale grows",
                     where, ca[0].second, cb[0].second);
}

}  // namespace

std::vector<std::pair<std::string, double>> breakdown_components(const Breakdown& b) {
  std::vector<std::pair<std::string, double>> out = {
      {"compute", (b.compute - b.interference - b.throttle).value()},
      {"compute slowed by overlapping communication", b.interference.value()},
      {"compute slowed by clock throttling (power limit or heat)", b.throttle.value()},
      {"exposed DP communication", b.exposed_comm.dp.value()},
      {"exposed TP communication", b.exposed_comm.tp.value()},
      {"exposed PP communication", b.exposed_comm.pp.value()},
      {"exposed CP communication", b.exposed_comm.cp.value()},
      {"exposed EP communication", b.exposed_comm.ep.value()},
      {"the pipeline bubble", b.bubble.value()},
      {"other waiting", b.other.value()},
  };
  // Only with device variability (docs/variability.md), so that reports of uniform clusters keep
  // the components they had.
  if (b.stragglers) out.emplace_back("waiting for stragglers", b.stragglers->value());
  return out;
}

std::pair<Components, Components> paired_breakdown_components(const Breakdown& a, const Breakdown& b) {
  Breakdown pa = a, pb = b;
  if (pa.stragglers || pb.stragglers) {
    if (!pa.stragglers) pa.stragglers = core::Seconds(0);
    if (!pb.stragglers) pb.stragglers = core::Seconds(0);
  }
  return {breakdown_components(pa), breakdown_components(pb)};
}

std::string format_scale(double scale) {
  if (scale == std::floor(scale) && std::fabs(scale) < 1e15) {
    std::string digits = fmt::format("{}", static_cast<long long>(std::fabs(scale)));
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return scale < 0 ? fmt::format("-{}", out) : out;
  }
  return fmt::format("{:.4g}", scale);
}

std::string finding_kind_name(FindingKind k) {
  switch (k) {
    case FindingKind::knee: return "knee";
    case FindingKind::doubling_gain: return "doubling-gain";
    case FindingKind::efficiency_floor: return "efficiency-floor";
    case FindingKind::crossover: return "crossover";
    case FindingKind::infeasible: return "infeasible";
    case FindingKind::lead: return "lead";
  }
  return "?";
}

std::vector<ScalingMetrics> scaling_metrics(const Series& s) {
  std::vector<ScalingMetrics> out(s.points.size());
  if (s.points.empty()) return out;
  const double base = s.points[0].throughput / s.points[0].scale;
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    const auto& p = s.points[i];
    auto& m = out[i];
    m.per_device = p.throughput / (p.devices > 0 ? p.devices : p.scale);
    m.efficiency = base > 0 ? p.throughput / p.scale / base : 0;
    if (i == 0) continue;
    const auto& q = s.points[i - 1];
    m.marginal_per_device = (p.throughput - q.throughput) / (p.scale - q.scale);
    const double doublings = std::log2(p.scale / q.scale);
    m.doubling_gain = q.throughput > 0 && doublings > 0 ? std::pow(p.throughput / q.throughput, 1 / doublings) - 1 : 0;
  }
  return out;
}

std::vector<std::size_t> kneedle(const std::vector<double>& x, const std::vector<double>& y, double sensitivity) {
  core::check_invariant(x.size() == y.size(), "kneedle: x and y differ in length");
  const std::size_t n = x.size();
  if (n < 3) return {};
  for (std::size_t i = 1; i < n; ++i) core::check_invariant(x[i] > x[i - 1], "kneedle: x not increasing");
  const auto [ymin, ymax] = std::minmax_element(y.begin(), y.end());
  if (*ymax <= *ymin) return {};
  // Normalise both axes to [0, 1]; on a concave increasing curve the knee is where y_n - x_n
  // peaks and then falls clearly (by S mean x steps) before the next peak.
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i)
    d[i] = (y[i] - *ymin) / (*ymax - *ymin) - (x[i] - x[0]) / (x[n - 1] - x[0]);
  const double threshold_drop = sensitivity / static_cast<double>(n - 1);
  std::vector<bool> local_max(n, false);
  for (std::size_t i = 1; i + 1 < n; ++i) local_max[i] = d[i] > d[i - 1] && d[i] >= d[i + 1];
  std::vector<std::size_t> knees;
  for (std::size_t i = 1; i + 1 < n; ++i) {
    if (!local_max[i]) continue;
    const double threshold = d[i] - threshold_drop;
    for (std::size_t j = i + 1; j < n; ++j) {
      if (local_max[j]) break;
      if (d[j] < threshold) {
        knees.push_back(i);
        break;
      }
    }
  }
  return knees;
}

std::vector<Finding> series_findings(const Series& s, const InflectionOptions& o, const std::string& unit) {
  std::vector<Finding> out;
  const auto metrics = scaling_metrics(s);
  const auto& pts = s.points;

  std::vector<double> x, y;
  for (const auto& p : pts) {
    x.push_back(o.knee_log_scale ? std::log2(p.scale) : p.scale);
    y.push_back(p.throughput);
  }
  for (std::size_t k : kneedle(x, y, o.knee_sensitivity)) {
    Finding f;
    f.kind = FindingKind::knee;
    f.series = s.name;
    f.scale = pts[k].scale;
    f.from_scale = pts[k].scale;
    f.to_scale = pts[k + 1].scale;
    f.what = fmt::format("{}: the scaling curve bends at {} {} (Kneedle, S = {:g}); the next step to {} {} buys {} "
                         "more throughput, efficiency {} -> {}",
                         s.name, format_scale(pts[k].scale), unit, o.knee_sensitivity, format_scale(pts[k + 1].scale),
                         unit, pct(pts[k + 1].throughput / pts[k].throughput - 1), pct(metrics[k].efficiency),
                         pct(metrics[k + 1].efficiency));
    f.why = why_between(pts[k], pts[k + 1], unit);
    out.push_back(std::move(f));
  }
  // The first point at which a per-point metric falls below a threshold.
  auto first_below = [&](double ScalingMetrics::*metric, double threshold) -> std::optional<std::size_t> {
    for (std::size_t i = 1; i < pts.size(); ++i)
      if (metrics[i].*metric < threshold) return i;
    return std::nullopt;
  };
  auto interval_finding = [&](FindingKind kind, std::size_t from, std::size_t to, std::string what) {
    Finding f;
    f.kind = kind;
    f.series = s.name;
    f.scale = pts[to].scale;
    f.from_scale = pts[from].scale;
    f.to_scale = pts[to].scale;
    f.what = std::move(what);
    f.why = why_between(pts[from], pts[to], unit);
    out.push_back(std::move(f));
  };
  if (o.min_doubling_gain)
    if (const auto i = first_below(&ScalingMetrics::doubling_gain, *o.min_doubling_gain))
      interval_finding(FindingKind::doubling_gain, *i - 1, *i,
                       fmt::format("{}: from {} to {} {} each doubling buys {} more throughput, below the {} asked for",
                                   s.name, format_scale(pts[*i - 1].scale), format_scale(pts[*i].scale), unit,
                                   pct(metrics[*i].doubling_gain), pct(*o.min_doubling_gain)));
  if (o.efficiency_floor)
    if (const auto i = first_below(&ScalingMetrics::efficiency, *o.efficiency_floor))
      interval_finding(FindingKind::efficiency_floor, 0, *i,
                       fmt::format("{}: scaling efficiency falls to {} at {} {} (against linear from {} {}), below the {} floor",
                                   s.name, pct(metrics[*i].efficiency), format_scale(pts[*i].scale), unit,
                                   format_scale(pts[0].scale), unit, pct(*o.efficiency_floor)));
  for (const auto& g : s.infeasible) {
    Finding f;
    f.kind = FindingKind::infeasible;
    f.series = s.name;
    f.scale = f.from_scale = f.to_scale = g.scale;
    f.what = fmt::format("{}: no figure at {} {}", s.name, format_scale(g.scale), unit);
    f.why = g.reason;
    out.push_back(std::move(f));
  }
  return out;
}

std::string inflection_verdict(const Series& s, const InflectionOptions& o, const std::string& unit, bool devices_scale) {
  const auto& pts = s.points;
  if (pts.empty()) return "no knee can be told: the series has no simulated point";
  const std::string span = fmt::format("between {} and {} {}", format_scale(pts.front().scale), format_scale(pts.back().scale), unit);
  if (pts.size() < 3) {
    std::string at;
    for (const auto& p : pts) at += fmt::format("{}{}", at.empty() ? "" : " and ", format_scale(p.scale));
    return fmt::format("no knee can be told: Kneedle needs 3 points, the series has {} ({} {})", pts.size(), at, unit);
  }
  const auto metrics = scaling_metrics(s);
  std::vector<double> x, y;
  for (const auto& p : pts) {
    x.push_back(o.knee_log_scale ? std::log2(p.scale) : p.scale);
    y.push_back(p.throughput);
  }
  const auto knees = kneedle(x, y, o.knee_sensitivity);
  if (knees.empty()) {
    if (!devices_scale)
      return fmt::format("no knee {}: throughput goes from {:.4g} to {:.4g} {}, {:+.0f}% (Kneedle, S = {:g})", span,
                         pts.front().throughput, pts.back().throughput, s.unit,
                         100 * (pts.back().throughput / pts.front().throughput - 1), o.knee_sensitivity);
    double low = metrics[0].efficiency;
    for (const auto& m : metrics) low = std::min(low, m.efficiency);
    // The largest whole percent strictly below the lowest efficiency, so "stays above" is true as printed.
    return fmt::format("no knee {}: efficiency stays above {:.0f}% (Kneedle, S = {:g})", span, std::ceil(100 * low) - 1,
                       o.knee_sensitivity);
  }
  std::string v;
  for (std::size_t k : knees) {
    const auto& a = pts[k];
    const auto& b = pts[k + 1];
    v += fmt::format("{}knee at {} {} (Kneedle, S = {:g}): going on to {} {} buys {:.0f}% more throughput", v.empty() ? "" : "; ",
                     format_scale(a.scale), unit, o.knee_sensitivity, format_scale(b.scale), unit,
                     100 * (b.throughput / a.throughput - 1));
    if (devices_scale)
      v += fmt::format(", efficiency {} -> {}", pct(metrics[k].efficiency), pct(metrics[k + 1].efficiency));
    v += fmt::format(", because {}", why_between(a, b, unit));
  }
  return v;
}

std::vector<Finding> crossovers(const Series& a, const Series& b, const std::string& unit) {
  struct Common {
    double scale;
    const ScalingPoint* pa;
    const ScalingPoint* pb;
  };
  std::vector<Common> common;
  for (const auto& p : a.points)
    if (const auto* q = point_at(b, p.scale); q && p.throughput > 0 && q->throughput > 0)
      common.push_back({p.scale, &p, q});
  std::vector<Finding> out;
  // log of the throughput ratio: its sign says who leads, and interpolating it in log2(scale)
  // treats both curves as locally power laws, which scaling curves are between two doublings.
  // Points where neither leads by more than kCrossoverMargin are ties: a crossing is between the
  // last decisive point and the next decisive one of the other sign, ties between them skipped.
  const double tie = std::log1p(kCrossoverMargin);
  auto ratio = [&](std::size_t k) { return std::log(common[k].pa->throughput / common[k].pb->throughput); };
  std::size_t last = common.size();  // the last decisive point
  for (std::size_t k = 0; k < common.size(); ++k) {
    const double r = ratio(k);
    if (std::fabs(r) <= tie) continue;
    const std::size_t prev = last;
    last = k;
    if (prev == common.size() || (ratio(prev) > 0) == (r > 0)) continue;
    const double r0 = ratio(prev), r1 = r;
    const double l0 = std::log2(common[prev].scale), l1 = std::log2(common[k].scale);
    const double t = r0 / (r0 - r1);
    const bool a_wins = r1 > 0;
    const Series& winner = a_wins ? a : b;
    const Series& loser = a_wins ? b : a;
    const ScalingPoint& w = a_wins ? *common[k].pa : *common[k].pb;
    const ScalingPoint& l = a_wins ? *common[k].pb : *common[k].pa;
    Finding f;
    f.kind = FindingKind::crossover;
    f.series = winner.name;
    f.other = loser.name;
    f.scale = std::exp2(l0 + t * (l1 - l0));
    f.from_scale = common[prev].scale;
    f.to_scale = common[k].scale;
    f.what = fmt::format("{} overtakes {} at about {} {} (between {} and {}): {:.4g} vs {:.4g} {} at {}",
                         winner.name, loser.name, format_scale(std::round(f.scale)), unit,
                         format_scale(f.from_scale), format_scale(f.to_scale), w.throughput, l.throughput, winner.unit,
                         format_scale(f.to_scale));
    const auto [cw, cl] = paired_breakdown_components(w.breakdown, l.breakdown);
    std::size_t best = 0;
    double gap = -1;
    for (std::size_t i = 0; i < cw.size(); ++i)
      if (cl[i].second - cw[i].second > gap) {
        gap = cl[i].second - cw[i].second;
        best = i;
      }
    f.why = fmt::format("at {} {}, {} spends {:.3g} s of its {:.3g} s step on {}, against {:.3g} s of {:.3g} s for {}",
                        format_scale(f.to_scale), unit, loser.name, cl[best].second, l.step_time.value(), cl[best].first,
                        cw[best].second, w.step_time.value(), winner.name);
    out.push_back(std::move(f));
  }
  if (out.empty() && !common.empty()) {
    // No crossing: say who leads, and by how much, so "is H200 better than H100 here?" gets an
    // answer even when the curves never cross.
    double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
    for (const auto& c : common) {
      const double r = c.pa->throughput / c.pb->throughput;
      lo = std::min(lo, r);
      hi = std::max(hi, r);
    }
    if (lo >= 1 || hi <= 1) {
      const bool a_leads = lo >= 1;
      const Series& leader = a_leads ? a : b;
      const Series& behind = a_leads ? b : a;
      const double gain_lo = a_leads ? lo - 1 : 1 / hi - 1;
      const double gain_hi = a_leads ? hi - 1 : 1 / lo - 1;
      Finding f;
      f.kind = FindingKind::lead;
      f.series = leader.name;
      f.other = behind.name;
      f.from_scale = common.front().scale;
      f.to_scale = common.back().scale;
      f.scale = f.to_scale;
      f.what = fmt::format("{} leads {} at every common scale from {} to {} {}, by {:.1f}% to {:.1f}% in throughput",
                           leader.name, behind.name, format_scale(f.from_scale), format_scale(f.to_scale), unit,
                           100 * gain_lo, 100 * gain_hi);
      const ScalingPoint& w = a_leads ? *common.back().pa : *common.back().pb;
      const ScalingPoint& l = a_leads ? *common.back().pb : *common.back().pa;
      const auto [cw, cl] = paired_breakdown_components(w.breakdown, l.breakdown);
      std::size_t best = 0;
      double gap = -std::numeric_limits<double>::max();
      for (std::size_t i = 0; i < cw.size(); ++i)
        if (cl[i].second - cw[i].second > gap) {
          gap = cl[i].second - cw[i].second;
          best = i;
        }
      f.why = fmt::format("at {} {}, the largest difference is {}: {:.3g} s for {} against {:.3g} s for {}",
                          format_scale(f.to_scale), unit, cl[best].first, cl[best].second, behind.name, cw[best].second,
                          leader.name);
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace inflect::analysis
