#include "inflect/scan/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace inflect::scan::svg {

namespace {

constexpr double kWidth = 940, kHeight = 380;
constexpr double kLeft = 78, kRight = 330, kTop = 36, kBottom = 52;  // margins; legend on the right

// Tick values 1, 2, 5 x 10^k covering [lo, hi] with about `n` ticks.
std::vector<double> nice_ticks(double lo, double hi, int n) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / n;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
  return t;
}

std::string tick_label(double v) {
  const double a = std::fabs(v);
  if (a >= 1e9) return fmt::format("{:g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e4) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

}  // namespace

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string colour(std::size_t i) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return palette[i % 10];
}

std::string render(const LinePlot& p) {
  double xmin = std::numeric_limits<double>::max(), xmax = std::numeric_limits<double>::lowest();
  double ymax = 0;
  for (const auto& l : p.lines)
    for (const auto& [x, y] : l.points) {
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
    }
  std::string s = fmt::format(R"~(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif" font-size="12">)~",
                              kWidth, kHeight, kWidth, kHeight);
  s += fmt::format(R"~(<rect width="{}" height="{}" fill="white"/>)~", kWidth, kHeight);
  s += fmt::format(R"~(<text x="{}" y="20" font-size="14" font-weight="bold">{}</text>)~", kLeft, escape(p.title));
  if (xmin > xmax) return s + R"~(<text x="100" y="120">no simulated points</text></svg>)~";
  const bool logx = p.log2_x && xmin > 0;
  auto fx = [&](double x) { return logx ? std::log2(x) : x; };
  double lo = fx(xmin), hi = fx(xmax);
  if (hi <= lo) {
    lo -= 1;
    hi += 1;
  }
  const double pad = (hi - lo) * 0.04;
  lo -= pad;
  hi += pad;
  const double ytop = ymax > 0 ? ymax * 1.08 : 1;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (fx(x) - lo) / (hi - lo) * w; };
  auto py = [&](double y) { return kTop + h - y / ytop * h; };

  // Axes and grid.
  s += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)~", kLeft, kTop, w, h);
  for (double t : nice_ticks(0, ytop, 5)) {
    if (t > ytop) continue;
    s += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)~", kLeft, py(t), kLeft + w, py(t));
    s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)~", kLeft - 6, py(t) + 4, tick_label(t));
  }
  std::vector<double> xt;
  if (logx) {
    for (double e = std::ceil(fx(xmin)); e <= std::floor(fx(xmax)) + 1e-9; e += 1) xt.push_back(std::exp2(e));
    if (xt.size() > 12) {
      std::vector<double> thin;
      for (std::size_t i = 0; i < xt.size(); i += 2) thin.push_back(xt[i]);
      xt = thin;
    }
  } else {
    xt = nice_ticks(xmin, xmax, 6);
  }
  for (double t : xt) {
    s += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)~", px(t), kTop, px(t), kTop + h);
    s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)~", px(t), kTop + h + 16, tick_label(t));
  }
  s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)~", kLeft + w / 2, kHeight - 12, escape(p.x_label));
  s += fmt::format(R"~(<text transform="translate(16 {:.1f}) rotate(-90)" text-anchor="middle">{}</text>)~", kTop + h / 2, escape(p.y_label));

  // Lines, points and the legend.
  for (std::size_t i = 0; i < p.lines.size(); ++i) {
    const auto& l = p.lines[i];
    std::string pts;
    for (const auto& [x, y] : l.points) pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    s += fmt::format(R"~(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>)~", pts, colour(i));
    for (const auto& [x, y] : l.points)
      s += fmt::format(R"~(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"/>)~", px(x), py(y), colour(i));
    const double ly = kTop + 14 + 18 * static_cast<double>(i);
    s += fmt::format(R"~(<rect x="{:.1f}" y="{:.1f}" width="14" height="4" fill="{}"/>)~", kWidth - kRight + 12, ly - 4, colour(i));
    s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}">{}</text>)~", kWidth - kRight + 32, ly, escape(l.name));
  }
  // Labels of vertical markers (crossovers) sit in rows at the top of the plot: each goes into the
  // first row where it does not overlap a label already there (about 5.5 px per character at
  // font-size 10), so crossovers at nearby scales stay readable.
  std::vector<std::vector<std::pair<double, double>>> rows;  // per row: occupied [x0, x1]
  auto row_for = [&](double x0, double x1) {
    for (std::size_t r = 0; r < rows.size(); ++r) {
      bool free = true;
      for (const auto& [a, b] : rows[r]) free = free && (x1 < a || x0 > b);
      if (free) {
        rows[r].emplace_back(x0, x1);
        return r;
      }
    }
    rows.push_back({{x0, x1}});
    return rows.size() - 1;
  };
  for (const auto& m : p.markers) {
    if (m.vertical_line) {
      s += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#555" stroke-dasharray="5,4"/>)~",
                       px(m.x), kTop, px(m.x), kTop + h);
      const double x0 = px(m.x) + 3, x1 = x0 + 5.5 * static_cast<double>(m.label.size());
      const double y = kTop + 12 + 12 * static_cast<double>(row_for(x0, x1));
      s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" font-size="10" fill="#555">{}</text>)~", x0, y, escape(m.label));
    } else {
      s += fmt::format(R"~(<circle cx="{:.1f}" cy="{:.1f}" r="8" fill="none" stroke="black" stroke-width="1.5"/>)~", px(m.x), py(m.y));
      s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" font-size="10">{}</text>)~", px(m.x) + 10, py(m.y) + 14, escape(m.label));
    }
  }
  return s + "</svg>";
}

std::string render(const StackedBars& p) {
  const double per_bar = 26;
  const double width = std::max(kWidth, kLeft + kRight + per_bar * static_cast<double>(p.bars.size()));
  const double height = kHeight + 90;  // room for rotated labels
  const double w = width - kLeft - kRight, h = kHeight - kTop - kBottom;
  double ymax = 0;
  for (const auto& b : p.bars) {
    double t = 0;
    for (double v : b.parts) t += std::max(0.0, v);
    ymax = std::max(ymax, t);
  }
  const double ytop = ymax > 0 ? ymax * 1.05 : 1;
  auto py = [&](double y) { return kTop + h - y / ytop * h; };
  std::string s = fmt::format(R"~(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif" font-size="12">)~",
                              width, height, width, height);
  s += fmt::format(R"~(<rect width="{}" height="{}" fill="white"/>)~", width, height);
  s += fmt::format(R"~(<text x="{}" y="20" font-size="14" font-weight="bold">{}</text>)~", kLeft, escape(p.title));
  s += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)~", kLeft, kTop, w, h);
  for (double t : nice_ticks(0, ytop, 5)) {
    if (t > ytop) continue;
    s += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)~", kLeft, py(t), kLeft + w, py(t));
    s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)~", kLeft - 6, py(t) + 4, tick_label(t));
  }
  s += fmt::format(R"~(<text transform="translate(16 {:.1f}) rotate(-90)" text-anchor="middle">{}</text>)~", kTop + h / 2, escape(p.y_label));
  const double slot = p.bars.empty() ? w : w / static_cast<double>(p.bars.size());
  for (std::size_t i = 0; i < p.bars.size(); ++i) {
    const auto& b = p.bars[i];
    const double x = kLeft + slot * static_cast<double>(i) + slot * 0.15;
    double acc = 0;
    for (std::size_t c = 0; c < b.parts.size(); ++c) {
      const double v = std::max(0.0, b.parts[c]);
      if (v <= 0) continue;
      s += fmt::format(R"~(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{}: {}: {:.4g} s</title></rect>)~",
                       x, py(acc + v), slot * 0.7, py(acc) - py(acc + v), colour(c), escape(b.label),
                       escape(c < p.components.size() ? p.components[c] : ""), v);
      acc += v;
    }
    const double lx = x + slot * 0.35;
    s += fmt::format(R"~(<text transform="translate({:.1f} {:.1f}) rotate(60)" font-size="10">{}</text>)~", lx, kTop + h + 10, escape(b.label));
  }
  for (std::size_t c = 0; c < p.components.size(); ++c) {
    const double ly = kTop + 14 + 18 * static_cast<double>(c);
    s += fmt::format(R"~(<rect x="{:.1f}" y="{:.1f}" width="12" height="12" fill="{}"/>)~", width - kRight + 12, ly - 10, colour(c));
    s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}">{}</text>)~", width - kRight + 30, ly, escape(p.components[c]));
  }
  return s + "</svg>";
}

}  // namespace inflect::scan::svg
