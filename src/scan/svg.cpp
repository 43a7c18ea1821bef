#include "inflect/scan/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace inflect::scan::svg {

namespace {

constexpr double kWidth = 940, kHeight = 380;
constexpr double kLeft = 78, kTop = 36, kBottom = 52;  // margins; the legend takes the right one
constexpr double kLegendText = 290;  // the widest a legend line may be before it wraps
constexpr double kFont = 12, kSmall = 10, kTitle = 14;
constexpr double kGap = 6;  // the least space between two tick labels

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

// The indices of the labels to draw, centred at `at` (increasing) with half-extents `half` along
// the axis: every k-th from the first, for the smallest k at which no two kept labels come closer
// than kGap. A crowded axis loses labels (its grid lines stay), never legibility.
std::vector<std::size_t> thin(const std::vector<double>& at, const std::vector<double>& half) {
  for (std::size_t k = 1;; ++k) {
    std::vector<std::size_t> keep;
    bool fits = true;
    for (std::size_t i = 0; i < at.size(); i += k) {
      if (!keep.empty() && at[i] - half[i] < at[keep.back()] + half[keep.back()] + kGap) fits = false;
      keep.push_back(i);
    }
    if (fits || keep.size() <= 1) return keep;
  }
}

// Greedy word wrap of `text` into lines no wider than `max_px` at `font` (a word wider than a line
// is cut by characters), so legend entries stay inside the viewBox.
std::vector<std::string> wrap(const std::string& text, double max_px, double font) {
  std::vector<std::string> lines;
  std::string line, word;
  auto flush_word = [&] {
    while (!word.empty()) {
      const std::string joined = line.empty() ? word : line + ' ' + word;
      if (text_width(joined, font) <= max_px) {
        line = joined;
        word.clear();
      } else if (!line.empty()) {
        lines.push_back(line);
        line.clear();
      } else {  // one word longer than a line: cut it
        std::size_t n = word.size();
        while (n > 1 && text_width(word.substr(0, n), font) > max_px) --n;
        while (n > 1 && (static_cast<unsigned char>(word[n]) & 0xC0) == 0x80) --n;  // not inside a UTF-8 character
        lines.push_back(word.substr(0, n));
        word.erase(0, n);
      }
    }
  };
  for (char c : text) {
    if (c == ' ') flush_word();
    else word += c;
  }
  flush_word();
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

// An SVG under construction that records the box of every text it draws.
struct Canvas {
  std::string s;
  std::vector<TextBox> texts;

  // anchor: "start", "middle" or "end"; the box spans 0.8 em above the baseline to 0.25 em below.
  void text(double x, double y, double font, const char* anchor, const std::string& t, const char* role,
            const std::string& attrs = "") {
    const double w = text_width(t, font);
    const std::string a(anchor);
    const double x0 = a == "end" ? x - w : a == "middle" ? x - w / 2 : x;
    s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" font-size="{:g}"{}{}>{}</text>)~", x, y, font,
                     a == "start" ? "" : fmt::format(R"~( text-anchor="{}")~", a), attrs, escape(t));
    texts.push_back({x0, y - 0.8 * font, x0 + w, y + 0.25 * font, role, t});
  }
  // Text turned by `degrees` about its start (x, y); its box is the rotated box's bounding box.
  void rotated(double x, double y, double degrees, double font, const char* anchor, const std::string& t, const char* role) {
    const double w = text_width(t, font), rad = degrees * 3.14159265358979 / 180;
    const double c = std::cos(rad), sn = std::sin(rad);
    const std::string a(anchor);
    const double start = a == "middle" ? -w / 2 : 0;
    s += fmt::format(R"~(<text transform="translate({:.1f} {:.1f}) rotate({:g})" font-size="{:g}"{}>{}</text>)~", x, y,
                     degrees, font, a == "start" ? "" : fmt::format(R"~( text-anchor="{}")~", a), escape(t));
    double x0 = std::numeric_limits<double>::max(), y0 = x0, x1 = -x0, y1 = -x0;
    for (double u : {start, start + w})
      for (double v : {-0.8 * font, 0.25 * font}) {  // corners in text coordinates, turned and moved
        x0 = std::min(x0, x + u * c - v * sn);
        x1 = std::max(x1, x + u * c - v * sn);
        y0 = std::min(y0, y + u * sn + v * c);
        y1 = std::max(y1, y + u * sn + v * c);
      }
    texts.push_back({x0, y0, x1, y1, role, t});
  }
  // The finished SVG: the viewBox is known only now (legends and labels may have grown it).
  std::string finish(double width, double height, Layout* layout) {
    if (layout) *layout = Layout{width, height, std::move(texts)};
    return fmt::format(R"~(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {:g} {:g}" width="100%" font-family="sans-serif" font-size="{:g}">)~",
                       width, height, kFont) +
           fmt::format(R"~(<rect width="{:g}" height="{:g}" fill="white"/>)~", width, height) + s + "</svg>";
  }
};

// The right margin: as wide as the legend needs (swatch, 12 px either side, its widest name up to
// kLegendText, then wrapped), so short names leave the plot more of the width.
double right_margin(const std::vector<std::string>& names) {
  double widest = 60;
  for (const auto& n : names) widest = std::max(widest, std::min(text_width(n, kFont), kLegendText));
  return 12 + 20 + widest + 12;
}

// A legend in the right margin from x to `right`: a swatch and the name per entry, wrapped to fit;
// returns the y below its last line.
double legend(Canvas& cv, double x, double right, const std::vector<std::string>& names, bool squares) {
  double y = kTop + 14;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (squares) cv.s += fmt::format(R"~(<rect x="{:.1f}" y="{:.1f}" width="12" height="12" fill="{}"/>)~", x, y - 10, colour(i));
    else cv.s += fmt::format(R"~(<rect x="{:.1f}" y="{:.1f}" width="14" height="4" fill="{}"/>)~", x, y - 4, colour(i));
    const double tx = x + (squares ? 18 : 20);
    for (const auto& line : wrap(names[i], right - 8 - tx, kFont)) {
      cv.text(tx, y, kFont, "start", line, "legend");
      y += 15;
    }
    y += 3;
  }
  return y;
}

// The y axis: grid lines and labels from 0 to ytop over [kTop, kTop + h], thinned when crowded.
void y_axis(Canvas& cv, double ytop, double h, double right, bool percent) {
  std::vector<double> ticks, at, half;
  for (double t : nice_ticks(0, ytop, 5))
    if (t <= ytop * (1 + 1e-9)) {
      ticks.push_back(t);
      at.push_back(-(kTop + h - t / ytop * h));  // increasing along the list
      half.push_back(0.55 * kFont);
    }
  for (std::size_t i : thin(at, half)) {
    const double y = -at[i];
    cv.s += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)~", kLeft, y, right, y);
    cv.text(kLeft - 6, y + 4, kFont, "end", percent ? fmt::format("{:.0f}%", 100 * ticks[i]) : tick_label(ticks[i]), "y-tick");
  }
}

}  // namespace

double text_width(const std::string& text, double font_size) {
  std::size_t chars = 0;
  for (char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8 code points
  return 0.62 * font_size * static_cast<double>(chars);
}

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

std::string render(const LinePlot& p, Layout* layout) {
  double xmin = std::numeric_limits<double>::max(), xmax = std::numeric_limits<double>::lowest();
  double ymax = 0;
  for (const auto& l : p.lines)
    for (const auto& [x, y] : l.points) {
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
    }
  Canvas cv;
  cv.text(kLeft, 20, kTitle, "start", p.title, "title", R"~( font-weight="bold")~");
  if (xmin > xmax) {
    cv.text(100, 120, kFont, "start", "no simulated points", "axis");
    return cv.finish(kWidth, kHeight, layout);
  }
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
  std::vector<std::string> names;
  for (const auto& l : p.lines) names.push_back(l.name);
  const double right = right_margin(names);
  const double w = kWidth - kLeft - right, h = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (fx(x) - lo) / (hi - lo) * w; };
  auto py = [&](double y) { return kTop + h - y / ytop * h; };

  // Axes and grid; x tick labels thinned by their estimated widths.
  cv.s += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)~", kLeft, kTop, w, h);
  y_axis(cv, ytop, h, kLeft + w, false);
  std::vector<double> xt;
  if (logx) {
    for (double e = std::ceil(fx(xmin)); e <= std::floor(fx(xmax)) + 1e-9; e += 1) xt.push_back(std::exp2(e));
  } else {
    xt = nice_ticks(xmin, xmax, 6);
  }
  std::vector<double> at, half;
  for (double t : xt) {
    cv.s += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)~", px(t), kTop, px(t), kTop + h);
    at.push_back(px(t));
    half.push_back(text_width(tick_label(t), kFont) / 2);
  }
  for (std::size_t i : thin(at, half)) cv.text(at[i], kTop + h + 16, kFont, "middle", tick_label(xt[i]), "x-tick");
  cv.text(kLeft + w / 2, kHeight - 12, kFont, "middle", p.x_label, "axis");
  cv.rotated(16, kTop + h / 2, -90, kFont, "middle", p.y_label, "axis");

  // Lines and points.
  for (std::size_t i = 0; i < p.lines.size(); ++i) {
    const auto& l = p.lines[i];
    std::string pts;
    for (const auto& [x, y] : l.points) pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    cv.s += fmt::format(R"~(<polyline points="{}" fill="none" stroke="{}" stroke-width="2"/>)~", pts, colour(i));
    for (const auto& [x, y] : l.points)
      cv.s += fmt::format(R"~(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}"/>)~", px(x), py(y), colour(i));
  }
  const double legend_end = legend(cv, kWidth - right + 12, kWidth, names, false);
  // Labels of vertical markers (crossovers) sit in rows at the top of the plot: each goes into the
  // first row where it does not overlap a label already there, right of its line, or left of it
  // when it would run past the plot's edge (into the legend), so crossovers at nearby scales stay
  // readable.
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
  // Where a label of width `tw` starts beside x: right of it, or left when it would leave the plot.
  auto beside = [&](double x, double offset, double tw) {
    double x0 = x + offset;
    if (x0 + tw > kLeft + w) x0 = x - offset - tw;
    return std::max(x0, kLeft + 2);
  };
  for (const auto& m : p.markers) {
    const double tw = text_width(m.label, kSmall);
    if (m.vertical_line) {
      cv.s += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#555" stroke-dasharray="5,4"/>)~",
                          px(m.x), kTop, px(m.x), kTop + h);
      const double x0 = beside(px(m.x), 3, tw);
      const double y = kTop + 12 + 12 * static_cast<double>(row_for(x0, x0 + tw));
      cv.text(x0, y, kSmall, "start", m.label, "marker", R"~( fill="#555")~");
    } else {
      cv.s += fmt::format(R"~(<circle cx="{:.1f}" cy="{:.1f}" r="8" fill="none" stroke="black" stroke-width="1.5"/>)~", px(m.x), py(m.y));
      cv.text(beside(px(m.x), 10, tw), std::min(py(m.y) + 14, kTop + h - 4), kSmall, "start", m.label, "marker");
    }
  }
  return cv.finish(kWidth, std::max(kHeight, legend_end + 8), layout);
}

std::string render(const StackedBars& p, Layout* layout) {
  const double per_bar = 26;
  const double right = right_margin(p.components);
  const double width = std::max(kWidth, kLeft + right + per_bar * static_cast<double>(p.bars.size()));
  const double w = width - kLeft - right, h = kHeight - kTop - kBottom;
  std::vector<double> totals;
  double ymax = 0;
  for (const auto& b : p.bars) {
    double t = 0;
    for (double v : b.parts) t += std::max(0.0, v);
    totals.push_back(t);
    ymax = std::max(ymax, t);
  }
  const double ytop = p.shares ? 1 : ymax > 0 ? ymax * 1.05 : 1;
  auto py = [&](double y) { return kTop + h - y / ytop * h; };
  Canvas cv;
  cv.text(kLeft, 20, kTitle, "start", p.title, "title", R"~( font-weight="bold")~");
  cv.s += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)~", kLeft, kTop, w, h);
  y_axis(cv, ytop, h, kLeft + w, p.shares);
  cv.rotated(16, kTop + h / 2, -90, kFont, "middle", p.y_label, "axis");
  const double slot = p.bars.empty() ? w : w / static_cast<double>(p.bars.size());
  double bottom = kHeight;
  for (std::size_t i = 0; i < p.bars.size(); ++i) {
    const auto& b = p.bars[i];
    const double x = kLeft + slot * static_cast<double>(i) + slot * 0.15;
    const double scale = p.shares ? (totals[i] > 0 ? 1 / totals[i] : 0) : 1;
    double acc = 0;
    for (std::size_t c = 0; c < b.parts.size(); ++c) {
      const double v = std::max(0.0, b.parts[c]) * scale;
      if (v <= 0) continue;
      const std::string name = escape(c < p.components.size() ? p.components[c] : "");
      const std::string tip = p.shares ? fmt::format("{:.1f}% of the step ({:.4g} s)", 100 * v, v * totals[i])
                                       : fmt::format("{:.4g} s", v);
      cv.s += fmt::format(R"~(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{}: {}: {}</title></rect>)~",
                          x, py(acc + v), slot * 0.7, py(acc) - py(acc + v), colour(c), escape(b.label), name, tip);
      acc += v;
    }
    // Labels turned 60 degrees: 26 px apart along the axis they stand 22 px apart across their
    // direction, more than a line of 10 px text; the viewBox grows below to hold the longest.
    cv.rotated(x + slot * 0.35, kTop + h + 10, 60, kSmall, "start", b.label, "bar");
    bottom = std::max(bottom, cv.texts.back().y1 + 8);
  }
  const double legend_end = legend(cv, width - right + 12, width, p.components, true);
  return cv.finish(width, std::max(bottom, legend_end + 8), layout);
}

}  // namespace inflect::scan::svg
