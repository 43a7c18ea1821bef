#include "inflect/scan/scan_analysis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>

namespace inflect::scan {

namespace {

// The axis that moves a point along the scale: cluster.nodes when the scale is the device count.
std::string scale_axis(const ScanMeta& m) { return m.scale == "devices" ? "cluster.nodes" : m.scale; }

// "topology=hgx-h200" for cluster.topology = ../../topologies/hgx-h200.yaml.
std::string short_label(const std::string& path, const std::string& value) {
  const auto dot = path.rfind('.');
  const std::string leaf = dot == std::string::npos ? path : path.substr(dot + 1);
  std::string v = value;
  // A file's stem; a quantity with a slash (400Gb/s) stays itself.
  if (v.ends_with(".yaml") || v.ends_with(".yml")) v = std::filesystem::path(v).stem().string();
  return fmt::format("{}={}", leaf, v);
}

}  // namespace

double row_scale(const ScanMeta& m, const ScanRow& r) {
  if (m.scale == "devices") return r.report.devices;
  for (const auto& [k, v] : r.values)
    if (k == m.scale) {
      double x = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      return ec == std::errc() && p == v.data() + v.size() ? x : 0;
    }
  return 0;
}

ScanAnalysis analyze(const ScanMeta& m, const std::vector<ScanRow>& rows) {
  ScanAnalysis out;
  out.unit = m.scale == "devices" ? "GPUs" : m.scale;
  const std::string along = scale_axis(m);
  // A replayed trace that does not say its tokens has no tokens/s: when no simulated point has
  // them, the curves are of steps per second (the same shape: tokens/s is steps/s x a constant).
  bool any_tokens = false, any_ok = false;
  for (const auto& r : rows)
    if (r.status == RowStatus::ok) {
      any_ok = true;
      any_tokens = any_tokens || r.report.tokens_per_s.has_value();
    }
  const bool step_rate = any_ok && !any_tokens;
  if (step_rate) out.throughput_unit = "steps/s";

  // Series in order of first appearance (point order), so reports list families as the file does.
  std::map<std::vector<std::string>, std::size_t> by_identity;
  std::vector<std::size_t> series_of(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    std::vector<std::string> id{r.family};
    std::string name = r.family;
    for (const auto& [k, v] : r.values) {
      if (k == along) continue;
      id.push_back(v);
      if (!name.empty()) name += ' ';
      name += short_label(k, v);
    }
    auto [it, fresh] = by_identity.emplace(id, out.series.size());
    if (fresh) {
      SeriesRows s;
      s.series.name = name.empty() ? m.name : name;
      s.series.unit = out.throughput_unit;
      s.identity = std::move(id);
      out.series.push_back(std::move(s));
    }
    series_of[i] = it->second;
  }
  // Points go in by scale (stable: at one scale the lowest index comes first and stands), so every
  // series comes out sorted without a second pass.
  std::vector<std::size_t> by_scale(rows.size());
  for (std::size_t i = 0; i < by_scale.size(); ++i) by_scale[i] = i;
  std::stable_sort(by_scale.begin(), by_scale.end(),
                   [&](std::size_t a, std::size_t b) { return row_scale(m, rows[a]) < row_scale(m, rows[b]); });
  for (std::size_t i : by_scale) {
    const auto& r = rows[i];
    auto& s = out.series[series_of[i]];
    const double x = row_scale(m, r);
    if (x <= 0) continue;
    if (r.status != RowStatus::ok) {
      s.series.infeasible.push_back({x, fmt::format("{}: {}", status_name(r.status), r.reason)});
      continue;
    }
    if (!step_rate && !r.report.tokens_per_s) {  // a trace without tokens among points with them
      s.series.infeasible.push_back({x, "throughput unknown: the trace does not give tokens_per_step"});
      continue;
    }
    if (step_rate && !(r.report.step_time.value() > 0)) {
      s.series.infeasible.push_back({x, "no step time"});
      continue;
    }
    if (!s.series.points.empty() && s.series.points.back().scale == x) continue;  // a second point at one scale
    analysis::ScalingPoint p;
    p.scale = x;
    p.devices = r.report.devices;
    p.throughput = step_rate ? 1.0 / r.report.step_time.value() : *r.report.tokens_per_s;
    p.step_time = r.report.step_time;
    p.breakdown = r.report.breakdown;
    s.series.points.push_back(p);
    s.rows.push_back(&r);
  }

  for (auto& s : out.series) {
    s.metrics = analysis::scaling_metrics(s.series);
    s.verdict = analysis::inflection_verdict(s.series, m.inflection, out.unit, m.scale == "devices");
    for (auto& f : analysis::series_findings(s.series, m.inflection, out.unit)) out.findings.push_back(std::move(f));
  }
  // Crossovers between series that differ in exactly one respect (the family, or one axis value):
  // comparing an H100 FSDP curve with an H200 TP curve would mix two questions. Such pairs are
  // found by bucketing the series on their identity with one respect left out (every pair in a
  // bucket differs in that respect alone), not by testing every pair: 40,000 series took 26 s.
  // A bucket of more than kAllPairs series (an axis of many values) compares neighbours only, in
  // the order the series appear: a crossover between the 3rd and the 900th value of one axis is
  // not a finding anyone reads. Pairs are then taken in (a, b) order, as before.
  constexpr std::size_t kAllPairs = 16;
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  const std::size_t respects = out.series.empty() ? 0 : out.series.front().identity.size();
  for (std::size_t leave_out = 0; leave_out < respects; ++leave_out) {
    std::map<std::vector<std::string>, std::vector<std::size_t>> buckets;
    for (std::size_t a = 0; a < out.series.size(); ++a) {
      auto id = out.series[a].identity;
      if (id.size() != respects) continue;
      id.erase(id.begin() + static_cast<std::ptrdiff_t>(leave_out));
      buckets[std::move(id)].push_back(a);
    }
    for (const auto& [rest, members] : buckets) {
      if (members.size() <= kAllPairs) {
        for (std::size_t i = 0; i < members.size(); ++i)
          for (std::size_t j = i + 1; j < members.size(); ++j) pairs.emplace_back(members[i], members[j]);
      } else {
        for (std::size_t i = 0; i + 1 < members.size(); ++i) pairs.emplace_back(members[i], members[i + 1]);
      }
    }
  }
  // A scan with no scale to move along (every series one point: a plane of plan families over
  // other axes) has no crossover to find; which family wins where is the plane's (plane.hpp).
  bool any_curve = false;
  for (const auto& s : out.series) any_curve = any_curve || s.series.points.size() > 1;
  if (!any_curve) pairs.clear();
  std::sort(pairs.begin(), pairs.end());
  for (const auto& [a, b] : pairs)
    for (auto& f : analysis::crossovers(out.series[a].series, out.series[b].series, out.unit))
      out.findings.push_back(std::move(f));
  out.plane = winners(m, rows, step_rate);
  return out;
}

}  // namespace inflect::scan
