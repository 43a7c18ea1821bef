#include "inflect/scan/report.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>

#include "inflect/core/error.hpp"
#include "inflect/scan/plane.hpp"
#include "scan/report_tables.hpp"

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

std::string markdown(const detail::Table& t) {
  std::string s = "|", rule = "|";
  for (std::size_t c = 0; c < t.head.size(); ++c) {
    s += fmt::format(" {} |", cell(t.head[c]));
    rule += t.left[c] ? "---|" : "---:|";
  }
  s += "\n" + rule + "\n";
  for (const auto& row : t.rows) {
    s += "|";
    for (const auto& v : row) s += fmt::format(" {} |", cell(v));
    s += "\n";
  }
  return s;
}

}  // namespace

namespace detail {

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

std::vector<std::string> component_names(bool stragglers) {
  analysis::Breakdown b;
  if (stragglers) b.stragglers = core::Seconds(0);
  std::vector<std::string> n;
  for (const auto& [name, v] : analysis::breakdown_components(b)) n.push_back(name);
  return n;
}

Table series_table(const ScanAnalysis& a, const SeriesRows& sr) {
  Table t{{a.unit, a.throughput_unit, a.throughput_unit + " per device", "efficiency", "gain per doubling", "step s", "MFU", "peak GiB", "plan"},
          {false, false, false, false, false, false, false, false, true},
          {}};
  const auto& met = sr.metrics;
  for (std::size_t i = 0; i < sr.series.points.size(); ++i) {
    const auto& p = sr.series.points[i];
    const auto& r = *sr.rows[i];
    t.rows.push_back({analysis::format_scale(p.scale), fmt::format("{:.4g}", p.throughput), fmt::format("{:.4g}", met[i].per_device),
                      pct(met[i].efficiency), i == 0 ? "" : pct(met[i].doubling_gain), fmt::format("{:.4g}", p.step_time.value()),
                      figure(true, r.report.mfu, "{:.1f}%", 100), peak_gib(r), r.report.plan});
  }
  return t;
}

Table points_table(const ScanMeta& m, const std::vector<ScanRow>& rows) {
  Table t{{"#", "family"}, {false, true}, {}};
  for (const auto& p : m.axis_paths) {
    t.head.push_back(p);
    t.left.push_back(true);
  }
  for (const char* h : {"status", "devices", "step s", "tokens/s", "MFU", "peak GiB", "avg W", "peak W (100 ms)", "peak C",
                        "throttled", "limiter", "plan", "reason"}) {
    const std::string_view v(h);
    t.head.emplace_back(h);
    t.left.push_back(v == "status" || v == "limiter" || v == "plan" || v == "reason");
  }
  for (const auto& r : rows) {
    const bool ok = r.status == RowStatus::ok;
    std::vector<std::string> c{fmt::format("{}", r.index), r.family};
    for (const auto& [k, v] : r.values) c.push_back(v);
    for (std::string v : {status_name(r.status), fmt::format("{}", r.report.devices), figure(ok, r.report.step_time.value(), "{:.4g}"),
                          figure(ok, r.report.tokens_per_s, "{:.4g}"), figure(ok, r.report.mfu, "{:.1f}%", 100), peak_gib(r),
                          figure(ok, r.report.power.avg_device.value(), "{:.0f}"),
                          figure(ok, r.report.power.peak_avg_device.value(), "{:.0f}"),
                          figure(ok, r.report.thermal.peak_temp.value(), "{:.1f}"),
                          figure(ok, r.report.thermal.throttled_fraction, "{:.1f}%", 100), ok ? r.report.thermal.limiter : "",
                          r.report.plan, r.reason})
      c.push_back(std::move(v));
    t.rows.push_back(std::move(c));
  }
  return t;
}

}  // namespace detail

std::string findings_text(const ScanAnalysis& a) {
  if (a.findings.empty()) return "no findings: every series scales without a knee, and no two series cross\n";
  std::string s;
  for (const auto& f : a.findings)
    s += fmt::format("[{}] {}\n    why: {}\n", analysis::finding_kind_name(f.kind), f.what, f.why);
  return s;
}

std::string report_markdown(const ScanMeta& m, const std::vector<ScanRow>& rows, const ScanAnalysis& a) {
  std::string s = fmt::format("# Scan: {}\n\n{}\n\n", m.name, detail::headline(m, rows));
  s += "## Findings\n\n";
  if (a.findings.empty()) s += "No knee, threshold or crossover found.\n";
  for (const auto& f : a.findings)
    s += fmt::format("- **{}** {}.  \n  Why: {}.\n", analysis::finding_kind_name(f.kind), cell(f.what), cell(f.why));
  s += plane_markdown(a.plane);
  s += "\n## Series\n";
  for (const auto& sr : a.series) {
    s += fmt::format("\n### {}\n\n**Inflection:** {}.\n\n", sr.series.name, cell(sr.verdict));
    if (sr.series.points.empty()) {
      s += "No simulated point.\n";
      continue;
    }
    s += markdown(detail::series_table(a, sr));
  }
  s += "\n## All points\n\n" + markdown(detail::points_table(m, rows));
  return s;
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
  return findings_text(a) + plane_text(a.plane);
}

}  // namespace inflect::scan
