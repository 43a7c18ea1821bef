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
  if (v.find('/') != std::string::npos || v.ends_with(".yaml")) v = std::filesystem::path(v).stem().string();
  return fmt::format("{}={}", leaf, v);
}

}  // namespace

double row_scale(const ScanMeta& m, const ScanRow& r) {
  if (m.scale == "devices") return r.devices;
  for (const auto& [k, v] : r.values)
    if (k == m.scale) {
      double x = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      return ec == std::errc() && p == v.data() + v.size() ? x : 0;
    }
  return 0;
}

analysis::InflectionOptions inflection_options(const ScanMeta& m) {
  analysis::InflectionOptions o;
  o.knee_sensitivity = m.knee_sensitivity;
  o.knee_log_scale = m.knee_log_scale;
  o.min_doubling_gain = m.min_doubling_gain;
  o.efficiency_floor = m.efficiency_floor;
  return o;
}

ScanAnalysis analyze(const ScanMeta& m, const std::vector<ScanRow>& rows) {
  ScanAnalysis out;
  out.unit = m.scale == "devices" ? "GPUs" : m.scale;
  const std::string along = scale_axis(m);

  std::map<std::vector<std::string>, std::size_t> by_identity;
  for (const auto& r : rows) {
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
      s.identity = id;
      out.series.push_back(std::move(s));
    }
    auto& s = out.series[it->second];
    const double x = row_scale(m, r);
    if (x <= 0) continue;
    if (r.status != RowStatus::ok) {
      s.series.infeasible.push_back({x, fmt::format("{}: {}", status_name(r.status), r.reason)});
      continue;
    }
    bool duplicate = false;
    for (const auto& p : s.series.points) duplicate = duplicate || p.scale == x;
    if (duplicate) continue;  // two points of one series at one scale: the first (lowest index) stands
    analysis::ScalingPoint p;
    p.scale = x;
    p.throughput = r.tokens_per_s;
    p.step_time_s = r.step_time_s;
    p.breakdown = r.breakdown;
    s.series.points.push_back(p);
    s.rows.push_back(&r);
  }
  for (auto& s : out.series) {
    // Sort points (and their rows) by scale.
    std::vector<std::size_t> order(s.series.points.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return s.series.points[a].scale < s.series.points[b].scale; });
    SeriesRows sorted = s;
    for (std::size_t i = 0; i < order.size(); ++i) {
      sorted.series.points[i] = s.series.points[order[i]];
      sorted.rows[i] = s.rows[order[i]];
    }
    std::sort(sorted.series.infeasible.begin(), sorted.series.infeasible.end(),
              [](const auto& a, const auto& b) { return a.scale < b.scale; });
    s = std::move(sorted);
  }

  const auto opts = inflection_options(m);
  for (const auto& s : out.series)
    for (auto& f : analysis::series_findings(s.series, opts, out.unit)) out.findings.push_back(std::move(f));
  // Crossovers between series that differ in exactly one respect (the family, or one axis value):
  // comparing an H100 FSDP curve with an H200 TP curve would mix two questions.
  for (std::size_t a = 0; a < out.series.size(); ++a)
    for (std::size_t b = a + 1; b < out.series.size(); ++b) {
      const auto& ia = out.series[a].identity;
      const auto& ib = out.series[b].identity;
      if (ia.size() != ib.size()) continue;
      int differ = 0;
      for (std::size_t i = 0; i < ia.size(); ++i) differ += ia[i] != ib[i];
      if (differ != 1) continue;
      for (auto& f : analysis::crossovers(out.series[a].series, out.series[b].series, out.unit))
        out.findings.push_back(std::move(f));
    }
  return out;
}

}  // namespace inflect::scan
