// report.html: one self-contained page (inline SVG, no scripts, nothing fetched) with what
// report.md has (the findings, each series' verdict and table, every point) and the plots: scaling,
// power / clock / temperature when the points modelled them, and the step-time breakdown in seconds
// and as shares of the step.
#include <fmt/format.h>

#include "inflect/scan/report.hpp"
#include "inflect/scan/plane.hpp"
#include "inflect/scan/svg.hpp"
#include "scan/report_tables.hpp"

namespace inflect::scan {

namespace {

using svg::escape;

std::string html(const detail::Table& t) {
  std::string h = "<table><tr>";
  for (std::size_t c = 0; c < t.head.size(); ++c)
    h += fmt::format("<th{}>{}</th>", t.left[c] ? " class=\"l\"" : "", escape(t.head[c]));
  h += "</tr>\n";
  for (const auto& row : t.rows) {
    h += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c)
      h += fmt::format("<td{}>{}</td>", c < t.left.size() && t.left[c] ? " class=\"l\"" : "", escape(row[c]));
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

// One line per series of a figure read off each point's row, when `has` holds for some point;
// "" otherwise (a scan whose points did not model power draws no power plot).
template <class Has, class Value>
std::string row_plot(const ScanMeta& m, const ScanAnalysis& a, const std::string& title, const std::string& y_label, Has has,
                     Value value) {
  svg::LinePlot p{title, a.unit, y_label, m.scale == "devices" || m.inflection.knee_log_scale, {}, {}};
  bool any = false;
  for (const auto& sr : a.series) {
    svg::Line l{sr.series.name, {}};
    for (std::size_t i = 0; i < sr.rows.size(); ++i)
      if (has(sr.rows[i]->report)) {
        l.points.emplace_back(sr.series.points[i].scale, value(sr.rows[i]->report));
        any = true;
      }
    p.lines.push_back(std::move(l));
  }
  return any ? svg::render(p) + "\n" : "";
}

}  // namespace

std::string report_html(const ScanMeta& m, const std::vector<ScanRow>& rows, const ScanAnalysis& a) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  h += fmt::format("<title>inflect scan: {}</title>", escape(m.name));
  // Plots take the page's width (their viewBox keeps the proportions); wide tables scroll inside
  // their own box rather than widening the page.
  h += "<style>body{font-family:sans-serif;margin:24px;max-width:1200px;color:#222}table{border-collapse:collapse;"
       "font-size:12px;margin:8px 0;display:block;overflow-x:auto;max-width:100%}td,th{border:1px solid #ccc;"
       "padding:3px 6px;text-align:right}td.l,th.l{text-align:left}li{margin:6px 0}.why{color:#555}.kind{font-weight:bold}"
       "svg{margin:8px 0;display:block;width:100%;height:auto}</style></head><body>\n";
  h += fmt::format("<h1>Scan: {}</h1>\n<p>{}</p>\n", escape(m.name), escape(detail::headline(m, rows)));

  // Throughput and efficiency against scale, knees ringed, crossovers as dashed lines. Efficiency
  // against linear is plotted only when the scale is the device count: along micro-batch or inlet
  // temperature, "linear in the scale" is no baseline anyone scales against.
  const bool devices = m.scale == "devices";
  svg::LinePlot thr{"Throughput", a.unit, a.throughput_unit, devices || m.inflection.knee_log_scale, {}, {}};
  svg::LinePlot eff{"Scaling efficiency against linear (from each series' smallest point)", a.unit, "efficiency", thr.log2_x, {}, {}};
  svg::LinePlot per{"Throughput per device", a.unit, a.throughput_unit + " per device", thr.log2_x, {}, {}};
  for (const auto& sr : a.series) {
    svg::Line lt{sr.series.name, {}}, le{sr.series.name, {}}, lp{sr.series.name, {}};
    const auto& met = sr.metrics;
    for (std::size_t i = 0; i < sr.series.points.size(); ++i) {
      const auto& p = sr.series.points[i];
      lt.points.emplace_back(p.scale, p.throughput);
      le.points.emplace_back(p.scale, met[i].efficiency);
      lp.points.emplace_back(p.scale, met[i].per_device);
    }
    thr.lines.push_back(std::move(lt));
    eff.lines.push_back(std::move(le));
    per.lines.push_back(std::move(lp));
  }
  for (const auto& f : a.findings) {
    if (f.kind == analysis::FindingKind::crossover) {
      thr.markers.push_back({f.scale, 0, fmt::format("{} > {}", f.series, f.other), true});
      continue;
    }
    // A lead spans the whole curve and an infeasible scale has no point: neither is marked.
    if (f.kind == analysis::FindingKind::infeasible || f.kind == analysis::FindingKind::lead) continue;
    for (const auto& sr : a.series) {
      if (sr.series.name != f.series) continue;
      for (std::size_t i = 0; i < sr.series.points.size(); ++i)
        if (sr.series.points[i].scale == f.scale) {
          thr.markers.push_back({f.scale, sr.series.points[i].throughput, analysis::finding_kind_name(f.kind), false});
          eff.markers.push_back({f.scale, sr.metrics[i].efficiency, analysis::finding_kind_name(f.kind), false});
        }
    }
  }
  h += fmt::format("<h2>Scaling</h2>\n{}\n{}{}\n", svg::render(thr), devices ? svg::render(eff) + "\n" : "", svg::render(per));

  // Power, clock and heat, for scans whose points modelled them (docs/power.md).
  const std::string power =
      row_plot(m, a, "Average device power", "W", [](const analysis::RunReport& r) { return r.power.modeled; },
               [](const analysis::RunReport& r) { return r.power.avg_device.value(); }) +
      row_plot(m, a, "Average compute clock", "MHz", [](const analysis::RunReport& r) { return r.power.modeled; },
               [](const analysis::RunReport& r) { return r.power.avg_clock_mhz; }) +
      row_plot(m, a, "Peak device temperature", "degrees C", [](const analysis::RunReport& r) { return r.thermal.modeled; },
               [](const analysis::RunReport& r) { return r.thermal.peak_temp.value(); });
  if (!power.empty()) h += "<h2>Power, clock and temperature</h2>\n" + power;

  h += plane_html(a.plane);
  h += "<h2>Findings</h2>\n<ul>\n";
  if (a.findings.empty()) h += "<li>No knee, threshold or crossover found.</li>\n";
  for (const auto& f : a.findings)
    h += fmt::format("<li><span class=\"kind\">{}</span> {}.<br><span class=\"why\">Why: {}.</span></li>\n",
                     escape(analysis::finding_kind_name(f.kind)), escape(f.what), escape(f.why));
  h += "</ul>\n";

  // The tables report.md has, series by series, each with its inflection verdict.
  h += "<h2>Series</h2>\n";
  for (const auto& sr : a.series) {
    h += fmt::format("<h3>{}</h3>\n<p class=\"verdict\"><b>Inflection:</b> {}.</p>\n", escape(sr.series.name), escape(sr.verdict));
    h += sr.series.points.empty() ? "<p>No simulated point.</p>\n" : html(detail::series_table(a, sr));
  }

  // Step-time breakdown: one stacked bar per simulated point, grouped by series; in seconds, and
  // as shares of each point's own step so a short step's bars read beside a long one's.
  bool stragglers = false;
  for (const auto& sr : a.series)
    for (const auto& p : sr.series.points) stragglers = stragglers || p.breakdown.stragglers.has_value();
  svg::StackedBars bars{"Step-time breakdown per simulated point", "seconds", detail::component_names(stragglers), {}, false};
  for (const auto& sr : a.series)
    for (std::size_t i = 0; i < sr.series.points.size(); ++i) {
      svg::Bar b;
      b.label = fmt::format("{} @{}", sr.series.name, analysis::format_scale(sr.series.points[i].scale));
      for (const auto& [name, v] : analysis::breakdown_components(sr.series.points[i].breakdown)) b.parts.push_back(v);
      bars.bars.push_back(std::move(b));
    }
  svg::StackedBars shares = bars;
  shares.title = "Step-time breakdown as shares of each point's step";
  shares.y_label = "share of the step";
  shares.shares = true;
  h += fmt::format("<h2>Where the step goes</h2>\n{}\n{}\n", svg::render(bars), svg::render(shares));

  h += "<h2>All points</h2>\n" + html(detail::points_table(m, rows));
  h += "<p>Rendered by inflect from scan.json and results.jsonl (<code>inflect report DIR</code> re-renders).</p>\n";
  return h + "</body></html>\n";
}

}  // namespace inflect::scan
