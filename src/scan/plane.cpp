#include "inflect/scan/plane.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inflect/analysis/inflection.hpp"
#include "inflect/scan/svg.hpp"

namespace inflect::scan {

namespace {

// Progress toward a target per second: the scan's throughput (tokens/s; steps/s when no point
// knows its tokens, `step_rate`, as the curves take it; 0 for a row whose tokens are unknown among
// rows that know theirs), over a DiLoCo plan's user-given token multiplier (how many more tokens
// it needs for the same loss), so that families compare on time to target, not on raw tokens.
double throughput_of(const ScanRow& r, bool step_rate) {
  const double step = r.report.step_time.value();
  const double per_s = step_rate ? (step > 0 ? 1.0 / step : 0) : r.report.tokens_per_s.value_or(0);
  return r.report.diloco.modeled && r.report.diloco.token_multiplier > 0 ? per_s / r.report.diloco.token_multiplier : per_s;
}

/// The component of the step the two rows differ in most, as "what: a s against b s".
std::string why(const ScanRow& win, const ScanRow& lose) {
  const auto [a, b] = analysis::paired_breakdown_components(win.report.breakdown, lose.report.breakdown);
  std::string name;
  double best = -1, wa = 0, wb = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = std::abs(a[i].second - b[i].second);
    if (d > best) {
      best = d;
      name = a[i].first;
      wa = a[i].second;
      wb = b[i].second;
    }
  }
  return fmt::format("{}: {:.3g} s against {:.3g} s", name, wa, wb);
}

}  // namespace

Plane winners(const ScanMeta& m, const std::vector<ScanRow>& rows, bool step_rate) {
  Plane p;
  if (m.plans.size() < 2) return p;
  p.axes = m.axis_paths;
  p.labels.resize(p.axes.size());
  std::map<std::vector<std::string>, std::size_t> cell_of;
  std::vector<std::vector<const ScanRow*>> members;
  for (const auto& r : rows) {
    std::vector<std::string> vals;
    for (std::size_t a = 0; a < p.axes.size(); ++a) {
      std::string v;
      for (const auto& [k, label] : r.values)
        if (k == p.axes[a]) v = label;
      auto& known = p.labels[a];
      if (std::find(known.begin(), known.end(), v) == known.end()) known.push_back(v);
      vals.push_back(v);
    }
    auto [it, fresh] = cell_of.emplace(vals, p.cells.size());
    if (fresh) {
      p.cells.push_back({vals, "", 0, "", 0, "", {}});
      members.emplace_back();
    }
    if (r.status == RowStatus::ok) members[it->second].push_back(&r);
  }
  for (std::size_t c = 0; c < p.cells.size(); ++c) {
    auto& ms = members[c];
    // Highest throughput first; ties to the family listed first (point order).
    std::stable_sort(ms.begin(), ms.end(), [step_rate](const ScanRow* x, const ScanRow* y) { return throughput_of(*x, step_rate) > throughput_of(*y, step_rate); });
    if (ms.empty()) continue;
    PlaneCell& cell = p.cells[c];
    for (const ScanRow* r : ms) cell.order.push_back(r->family);
    cell.winner = ms[0]->family;
    cell.throughput = throughput_of(*ms[0], step_rate);
    ++p.wins[cell.winner];
    if (ms.size() > 1 && throughput_of(*ms[1], step_rate) > 0) {
      cell.runner_up = ms[1]->family;
      cell.margin = cell.throughput / throughput_of(*ms[1], step_rate) - 1;
      cell.why = why(*ms[0], *ms[1]);
    }
  }
  return p;
}

std::string plane_text(const Plane& p) {
  if (p.empty()) return "";
  std::string s;
  for (const auto& [family, n] : p.wins) s += fmt::format("[wins] {} is fastest at {} of {} points\n", family, n, p.cells.size());
  return s;
}

std::string plane_markdown(const Plane& p) {
  if (p.empty()) return "";
  std::string s = "\n## Which plan wins where\n\n";
  for (const auto& [family, n] : p.wins) s += fmt::format("- **{}** is fastest at {} of {} points.\n", family, n, p.cells.size());
  s += "\n|";
  for (const auto& a : p.axes) s += fmt::format(" {} |", a);
  s += " fastest | by | over | why | all, fastest first |\n|";
  for (std::size_t i = 0; i < p.axes.size() + 1; ++i) s += "---|";
  s += "---:|---|---|---|\n";
  for (const auto& c : p.cells) {
    s += "|";
    for (const auto& v : c.values) s += fmt::format(" {} |", v);
    if (c.winner.empty()) {
      s += " none ran | | | | |\n";
      continue;
    }
    std::string order;
    for (const auto& f : c.order) order += (order.empty() ? "" : " > ") + f;
    s += fmt::format(" {} | {} | {} | {} | {} |\n", c.winner, c.runner_up.empty() ? "" : fmt::format("{:.1f}%", 100 * c.margin),
                     c.runner_up, c.why, order);
  }
  return s;
}

std::string plane_html(const Plane& p) {
  if (p.empty()) return "";
  // Each winner in the plots' palette (svg::colour), as a light tint so the text stays legible.
  std::map<std::string, std::string> colour;
  for (const auto& c : p.cells)
    if (!c.winner.empty() && !colour.count(c.winner)) colour[c.winner] = svg::colour(colour.size()) + "40";
  std::string h = "<h2>Which plan wins where</h2>\n<p>";
  for (const auto& [family, n] : p.wins)
    h += fmt::format("<span style=\"background:{};padding:2px 6px\">{}</span> fastest at {} of {} points. ", colour[family],
                     svg::escape(family), n, p.cells.size());
  h += "</p>\n";
  auto cell_html = [&](const PlaneCell& c) {
    if (c.winner.empty()) return std::string("<td>none ran</td>");
    return fmt::format("<td style=\"background:{};text-align:center\" title=\"{}\"><b>{}</b><br>{}</td>", colour[c.winner],
                       svg::escape(c.why), svg::escape(c.winner),
                       c.runner_up.empty() ? "" : fmt::format("+{:.1f}% over {}", 100 * c.margin, svg::escape(c.runner_up)));
  };
  if (p.axes.size() == 2) {
    // The plane: the first axis across, the second down, each in the scan's order.
    h += fmt::format("<table><tr><th class=\"l\">{} \\ {}</th>", svg::escape(p.axes[1]), svg::escape(p.axes[0]));
    for (const auto& x : p.labels[0]) h += fmt::format("<th>{}</th>", svg::escape(x));
    h += "</tr>\n";
    for (const auto& y : p.labels[1]) {
      h += fmt::format("<tr><th class=\"l\">{}</th>", svg::escape(y));
      for (const auto& x : p.labels[0]) {
        const auto it = std::find_if(p.cells.begin(), p.cells.end(),
                                     [&](const PlaneCell& c) { return c.values[0] == x && c.values[1] == y; });
        h += it == p.cells.end() ? "<td></td>" : cell_html(*it);
      }
      h += "</tr>\n";
    }
    return h + "</table>\n";
  }
  h += "<table><tr>";
  for (const auto& a : p.axes) h += fmt::format("<th class=\"l\">{}</th>", svg::escape(a));
  h += "<th>fastest</th></tr>\n";
  for (const auto& c : p.cells) {
    h += "<tr>";
    for (const auto& v : c.values) h += fmt::format("<td class=\"l\">{}</td>", svg::escape(v));
    h += cell_html(c) + "</tr>\n";
  }
  return h + "</table>\n";
}

}  // namespace inflect::scan
