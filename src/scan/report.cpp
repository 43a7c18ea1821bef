#include "inflect/scan/report.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>

#include "inflect/core/error.hpp"
#include "inflect/scan/svg.hpp"

namespace inflect::scan {

namespace {

std::string gib(double bytes) { return fmt::format("{:.1f}", bytes / 1073741824.0); }
// The row's peak memory per device, blank when unknown (a point that did not run, a trace without it).
std::string peak_gib(const ScanRow& r) {
  return r.has_report && r.report.memory.known ? gib(r.report.memory.peak.value()) : "";
}
// A figure of a row that ran, formatted; blank when the row did not run or the figure is unknown
// (a trace without tokens per step). Times `scale` first (100 for a percentage; 1 leaves it exact).
std::string figure(bool ok, const std::optional<double>& v, std::string_view spec, double scale = 1) {
  return ok && v ? fmt::vformat(spec, fmt::make_format_args(scale * *v)) : "";
}
std::string pct(double f) { return fmt::format("{:.0f}%", 100 * f); }

// Markdown table cells must not contain a bare '|'.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

struct Counts {
  int ok = 0, does_not_fit = 0, invalid = 0, failed = 0;
};
Counts count(const std::vector<ScanRow>& rows) {
  Counts c;
  for (const auto& r : rows) {
    switch (r.status) {
      case RowStatus::ok: ++c.ok; break;
      case RowStatus::does_not_fit: ++c.does_not_fit; break;
      case RowStatus::invalid: ++c.invalid; break;
      case RowStatus::failed: ++c.failed; break;
    }
  }
  return c;
}

std::string headline(const ScanMeta& m, const std::vector<ScanRow>& rows) {
  const auto c = count(rows);
  std::string s = fmt::format("{} of {} points: {} simulated, {} do not fit in memory, {} invalid plans, {} failed. "
                              "Scale axis: {}; fidelity: {}.",
                              rows.size(), m.points, c.ok, c.does_not_fit, c.invalid, c.failed,
                              m.scale == "devices" ? "devices (GPUs)" : m.scale, m.fidelity);
  if (static_cast<int>(rows.size()) < m.points)
    s += fmt::format(" {} points have no row yet (an interrupted scan, or one shard): `inflect scan --resume` or "
                     "`inflect merge` completes it.",
                     m.points - static_cast<int>(rows.size()));
  return s;
}

// The legend of the breakdown bars: the components of a breakdown that has the straggler row
// when one of the points has it (device variability, docs/variability.md), else the plain ones.
std::vector<std::string> component_names(bool stragglers) {
  analysis::Breakdown b;
  if (stragglers) b.stragglers = core::Seconds(0);
  std::vector<std::string> n;
  for (const auto& [name, v] : analysis::breakdown_components(b)) n.push_back(name);
  return n;
}

std::string values_text(const ScanRow& r) {
  std::string s;
  for (const auto& [k, v] : r.values) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
  return s;
}

}  // namespace

std::string findings_text(const ScanAnalysis& a) {
  if (a.findings.empty()) return "no findings: every series scales without a knee, and no two series cross\n";
  std::string s;
  for (const auto& f : a.findings)
    s += fmt::format("[{}] {}\n    why: {}\n", analysis::finding_kind_name(f.kind), f.what, f.why);
  return s;
}

std::string report_markdown(const ScanMeta& m, const std::vector<ScanRow>& rows, const ScanAnalysis& a) {
  std::string s = fmt::format("# Scan: {}\n\n{}\n\n", m.name, headline(m, rows));
  s += "## Findings\n\n";
  if (a.findings.empty()) s += "No knee, threshold or crossover found.\n";
  for (const auto& f : a.findings)
    s += fmt::format("- **{}** {}.  \n  Why: {}.\n", analysis::finding_kind_name(f.kind), cell(f.what), cell(f.why));
  s += "\n## Series\n";
  for (const auto& sr : a.series) {
    s += fmt::format("\n### {}\n\n", sr.series.name);
    if (sr.series.points.empty()) {
      s += "No simulated point.\n";
      continue;
    }
    s += fmt::format("| {} | tokens/s | tokens/s per device | efficiency | gain per doubling | step s | MFU | peak GiB | plan |\n",
                     a.unit);
    s += "|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    const auto& met = sr.metrics;
    for (std::size_t i = 0; i < sr.series.points.size(); ++i) {
      const auto& p = sr.series.points[i];
      const auto& r = *sr.rows[i];
      s += fmt::format("| {} | {:.4g} | {:.4g} | {} | {} | {:.4g} | {} | {} | {} |\n", analysis::format_scale(p.scale),
                       p.throughput, met[i].per_device, pct(met[i].efficiency), i == 0 ? "" : pct(met[i].doubling_gain),
                       p.step_time.value(), figure(true, r.report.mfu, "{:.1f}%", 100), peak_gib(r), cell(r.report.plan));
    }
  }
  s += "\n## All points\n\n| # | family | values | status | devices | step s | tokens/s | MFU | peak GiB | avg W | peak W (100 ms) | "
       "peak C | throttled | limiter | plan | reason |\n";
  s += "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n";
  for (const auto& r : rows) {
    const bool ok = r.status == RowStatus::ok;
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.index,
                     cell(r.family), cell(values_text(r)), status_name(r.status), r.report.devices,
                     figure(ok, r.report.step_time.value(), "{:.4g}"), figure(ok, r.report.tokens_per_s, "{:.4g}"),
                     figure(ok, r.report.mfu, "{:.1f}%", 100), peak_gib(r),
                     figure(ok, r.report.power.avg_device.value(), "{:.0f}"), figure(ok, r.report.power.peak_avg_device.value(), "{:.0f}"),
                     figure(ok, r.report.thermal.peak_temp.value(), "{:.1f}"), figure(ok, r.report.thermal.throttled_fraction, "{:.1f}%", 100),
                     ok ? r.report.thermal.limiter : "", cell(r.report.plan), cell(r.reason));
  }
  return s;
}

std::string report_html(const ScanMeta& m, const std::vector<ScanRow>& rows, const ScanAnalysis& a) {
  using svg::escape;
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += fmt::format("<title>inflect scan: {}</title>", escape(m.name));
  h += "<style>body{font-family:sans-serif;margin:24px;max-width:1200px;color:#222}table{border-collapse:collapse;"
       "font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td.l,th.l{text-align:left}"
       "li{margin:6px 0}.why{color:#555}.kind{font-weight:bold}svg{margin:8px 0;display:block}</style></head><body>\n";
  h += fmt::format("<h1>Scan: {}</h1>\n<p>{}</p>\n", escape(m.name), escape(headline(m, rows)));

  // Throughput and efficiency against scale, knees ringed, crossovers as dashed lines.
  svg::LinePlot thr{"Throughput", a.unit, "tokens/s", m.scale == "devices" || m.inflection.knee_log_scale, {}, {}};
  svg::LinePlot eff{"Scaling efficiency against linear (from each series' smallest point)", a.unit, "efficiency", thr.log2_x, {}, {}};
  svg::LinePlot per{"Throughput per device", a.unit, "tokens/s per device", thr.log2_x, {}, {}};
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
  h += fmt::format("<h2>Scaling</h2>\n{}\n{}\n{}\n", svg::render(thr), svg::render(eff), svg::render(per));

  h += "<h2>Findings</h2>\n<ul>\n";
  if (a.findings.empty()) h += "<li>No knee, threshold or crossover found.</li>\n";
  for (const auto& f : a.findings)
    h += fmt::format("<li><span class=\"kind\">{}</span> {}.<br><span class=\"why\">Why: {}.</span></li>\n",
                     escape(analysis::finding_kind_name(f.kind)), escape(f.what), escape(f.why));
  h += "</ul>\n";

  // Step-time breakdown: one stacked bar per simulated point, grouped by series.
  bool stragglers = false;
  for (const auto& sr : a.series)
    for (const auto& p : sr.series.points) stragglers = stragglers || p.breakdown.stragglers.has_value();
  svg::StackedBars bars{"Step-time breakdown per simulated point", "seconds", component_names(stragglers), {}};
  for (const auto& sr : a.series)
    for (std::size_t i = 0; i < sr.series.points.size(); ++i) {
      svg::Bar b;
      b.label = fmt::format("{} @{}", sr.series.name, analysis::format_scale(sr.series.points[i].scale));
      for (const auto& [name, v] : analysis::breakdown_components(sr.series.points[i].breakdown)) b.parts.push_back(v);
      bars.bars.push_back(std::move(b));
    }
  h += fmt::format("<h2>Where the step goes</h2>\n{}\n", svg::render(bars));

  h += "<h2>All points</h2>\n<table><tr><th>#</th><th class=\"l\">family</th>";
  for (const auto& p : m.axis_paths) h += fmt::format("<th class=\"l\">{}</th>", escape(p));
  h += "<th class=\"l\">status</th><th>devices</th><th>step s</th><th>tokens/s</th><th>MFU</th><th>peak GiB</th>"
       "<th>avg W</th><th>peak W (100 ms)</th><th>peak C</th><th>throttled</th><th class=\"l\">limiter</th>"
       "<th class=\"l\">plan</th><th class=\"l\">reason</th></tr>\n";
  for (const auto& r : rows) {
    const bool ok = r.status == RowStatus::ok;
    h += fmt::format("<tr><td>{}</td><td class=\"l\">{}</td>", r.index, escape(r.family));
    for (const auto& [k, v] : r.values) h += fmt::format("<td class=\"l\">{}</td>", escape(v));
    h += fmt::format("<td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>", status_name(r.status),
                     r.report.devices, figure(ok, r.report.step_time.value(), "{:.4g}"), figure(ok, r.report.tokens_per_s, "{:.4g}"),
                     figure(ok, r.report.mfu, "{:.1f}%", 100), peak_gib(r));
    h += fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td>",
                     figure(ok, r.report.power.avg_device.value(), "{:.0f}"), figure(ok, r.report.power.peak_avg_device.value(), "{:.0f}"),
                     figure(ok, r.report.thermal.peak_temp.value(), "{:.1f}"), figure(ok, r.report.thermal.throttled_fraction, "{:.1f}%", 100),
                     ok ? escape(r.report.thermal.limiter) : "");
    h += fmt::format("<td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n", escape(r.report.plan), escape(r.reason));
  }
  h += "</table>\n<p>Rendered by inflect from scan.json and results.jsonl (<code>inflect report DIR</code> re-renders).</p>\n";
  return h + "</body></html>\n";
}

std::string write_reports(const std::string& dir) {
  const auto meta = read_meta(dir);
  const auto rows = read_rows((std::filesystem::path(dir) / "results.jsonl").string());
  const auto a = analyze(meta, rows);
  auto write = [&](const char* name, const std::string& text) {
    const auto path = (std::filesystem::path(dir) / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw core::Error(core::ErrorKind::io, fmt::format("cannot write '{}'", path));
    out << text;
  };
  write("report.md", report_markdown(meta, rows, a));
  write("report.html", report_html(meta, rows, a));
  return findings_text(a);
}

}  // namespace inflect::scan
