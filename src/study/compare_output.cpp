#include "inflect/study/compare_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace inflect::study {

namespace {

std::string value(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : std::string("null"); }

// A metric's change in a few characters: "=" unchanged, "+1.23%", "null->4.5" when one side is
// unknown, "" when both are.
std::string change(const MetricDelta& d) {
  if (!d.base && !d.now) return "";
  if (!d.base || !d.now) return fmt::format("{}->{}", value(d.base), value(d.now));
  if (*d.base == *d.now) return "=";
  if (d.relative) return fmt::format("{:+.2f}%", 100 * *d.relative);
  return fmt::format("{}->{}", value(d.base), value(d.now));
}

bool changed(const PointComparison& p) {
  if (p.failed() || !p.base || !p.now || p.base->status != p.now->status) return true;
  return std::any_of(p.metrics.begin(), p.metrics.end(), [](const MetricDelta& d) {
    return d.base.has_value() != d.now.has_value() || (d.base && *d.base != *d.now);
  });
}

std::string point_name(const PointComparison& p) { return p.key.empty() ? std::string("(report)") : p.key; }

std::string status_text(const PointComparison& p) {
  if (!p.base) return fmt::format("new: {}", p.now->status);
  if (!p.now) return fmt::format("gone: {}", p.base->status);
  return p.base->status == p.now->status ? p.now->status : fmt::format("{}->{}", p.base->status, p.now->status);
}

std::string headline(const Comparison& c) {
  int only = 0;
  for (const auto& p : c.points) only += (!p.base || !p.now) ? 1 : 0;
  const int matched = static_cast<int>(c.points.size()) - only;
  std::string thresholds;
  for (const auto& t : c.thresholds) thresholds += (thresholds.empty() ? "" : ", ") + t.text;
  return fmt::format("{} point{} matched, {} on one side only; {} fail{}", matched, matched == 1 ? "" : "s", only,
                     c.failed_points(), thresholds.empty() ? " (no thresholds: only presence and status are checked)"
                                                           : fmt::format(" (thresholds: {})", thresholds));
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t') out += ' ';
        else out += ch;
    }
  }
  return out;
}

std::string md_cell(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}

}  // namespace

std::string comparison_text(const Comparison& c, bool all) {
  std::string out = fmt::format("compare {} -> {}: {}\n", c.base_path, c.now_path, headline(c));
  std::size_t width = 5;
  for (const auto& p : c.points) width = std::max(width, point_name(p).size());
  width = std::min<std::size_t>(width, 72);
  std::vector<std::size_t> cols;
  out += fmt::format("\n{:<{}}  {:<14}", "point", width, "status");
  for (const auto& m : c.metrics) {
    cols.push_back(std::max<std::size_t>(m.size(), 10));
    out += fmt::format("  {:>{}}", m, cols.back());
  }
  out += "\n";
  int unchanged = 0;
  for (const auto& p : c.points) {
    if (!all && !changed(p)) {
      ++unchanged;
      continue;
    }
    std::string name = point_name(p);
    if (name.size() > width) name = "..." + name.substr(name.size() - width + 3);
    out += fmt::format("{:<{}}  {:<14}", name, width, status_text(p));
    for (std::size_t i = 0; i < c.metrics.size(); ++i)
      out += fmt::format("  {:>{}}", i < p.metrics.size() ? change(p.metrics[i]) : std::string(), cols[i]);
    out += p.failed() ? "  FAIL\n" : "\n";
  }
  if (unchanged > 0) out += fmt::format("({} point{} unchanged in every metric; --all lists them)\n", unchanged, unchanged == 1 ? "" : "s");
  if (c.failed()) {
    out += "\nfailures:\n";
    for (const auto& p : c.points)
      for (const auto& f : p.failures()) out += fmt::format("  {}: {}\n", point_name(p), f);
  }
  if (!c.warnings.empty()) {
    out += "\nwarning: the sides' inputs differ beyond what the points vary:\n";
    for (const auto& w : c.warnings) out += fmt::format("  {}\n", w);
  }
  return out;
}

std::string comparison_markdown(const Comparison& c, const std::string& title) {
  std::string out = fmt::format("### {}: {}\n\n", md_cell(title), c.failed() ? "**FAIL**" : "pass");
  out += fmt::format("`{}` → `{}`: {}.\n\n", c.base_path, c.now_path, headline(c));
  if (c.failed()) {
    out += "| point | why it fails |\n|---|---|\n";
    for (const auto& p : c.points)
      for (const auto& f : p.failures()) out += fmt::format("| {} | {} |\n", md_cell(point_name(p)), md_cell(f));
    out += "\n";
  }
  if (!c.warnings.empty()) {
    out += "Inputs differ beyond what the points vary:\n\n";
    for (const auto& w : c.warnings) out += fmt::format("- {}\n", md_cell(w));
    out += "\n";
  }
  std::string table = "| point | status |";
  for (const auto& m : c.metrics) table += fmt::format(" {} |", m);
  table += "\n|---|---|";
  for (std::size_t i = 0; i < c.metrics.size(); ++i) table += "---:|";
  table += "\n";
  for (const auto& p : c.points) {
    table += fmt::format("| {}{} | {} |", p.failed() ? "❌ " : "", md_cell(point_name(p)), status_text(p));
    for (std::size_t i = 0; i < c.metrics.size(); ++i) {
      if (i >= p.metrics.size()) {
        table += " |";
        continue;
      }
      const auto& d = p.metrics[i];
      table += fmt::format(" {} {} |", value(d.now), d.base && d.now && *d.base == *d.now ? "" : fmt::format("({})", change(d)));
    }
    table += "\n";
  }
  // Long tables fold so that the verdict and the failures stay on the first screen of a PR comment.
  if (c.points.size() > 12)
    out += fmt::format("<details><summary>Every point ({})</summary>\n\n{}\n</details>\n", c.points.size(), table);
  else
    out += table;
  return out;
}

std::string comparison_junit(const Comparison& c, const std::string& suite) {
  std::string cases;
  int tests = 0, failures = 0;
  auto testcase = [&](const std::string& classname, const std::string& name, const std::vector<std::string>& why,
                      const std::string& type) {
    ++tests;
    cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(classname), xml_escape(name));
    if (why.empty()) {
      cases += "/>\n";
      return;
    }
    ++failures;
    std::string text;
    for (const auto& w : why) text += (text.empty() ? "" : "\n") + w;
    cases += fmt::format(">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n", type, xml_escape(why.front()),
                         xml_escape(text));
  };
  for (const auto& p : c.points) {
    const std::string cls = point_name(p);
    testcase(cls, "presence and status", p.status_failures, "status");
    for (const auto& d : p.metrics) testcase(cls, d.metric, d.why, "threshold");
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n", xml_escape(suite), tests, failures);
  out += fmt::format("  <testsuite name=\"{}: {} -> {}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                     xml_escape(suite), xml_escape(c.base_path), xml_escape(c.now_path), tests, failures);
  out += cases;
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace inflect::study
