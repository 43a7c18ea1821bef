#pragma once
// Plots as inline SVG text, so report.html is one self-contained file (no scripts, no fetches).
// Deliberately small: line plots with markers and stacked bars, which is all a scan report draws.
//
// Every plot scales to the page's width (viewBox, width 100%), and its text is laid out here, not
// left to the browser: each label's box is estimated from its length (text_width), tick labels
// that would collide are thinned, legend entries wrap, and the viewBox grows to hold what is
// drawn, so labels neither overlap nor clip. `Layout` hands those boxes to tests.
#include <string>
#include <utility>
#include <vector>

namespace inflect::scan::svg {

struct Line {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), sorted by x
};

struct Marker {
  double x = 0, y = 0;
  std::string label;
  bool vertical_line = false;  // a crossover: a dashed vertical line at x instead of a ring
};

struct LinePlot {
  std::string title, x_label, y_label;
  bool log2_x = true;
  std::vector<Line> lines;
  std::vector<Marker> markers;
};

struct Bar {
  std::string label;
  std::vector<double> parts;  // one per component, stacked bottom-up
};

struct StackedBars {
  std::string title, y_label;
  std::vector<std::string> components;
  std::vector<Bar> bars;
  /// Each bar drawn as shares of its own total (100% high, ticks in percent), so bars of very
  /// different totals (a 2,048-GPU step beside a 128-GPU one) can be read side by side.
  bool shares = false;
};

/// A drawn text's box in viewBox units (axis-aligned; a rotated label's bounding box), and what
/// it is: "title", "x-tick", "y-tick", "axis", "legend", "marker" or "bar".
struct TextBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::string role, text;
};
struct Layout {
  double width = 0, height = 0;  // the viewBox
  std::vector<TextBox> texts;
};

std::string render(const LinePlot& p, Layout* layout = nullptr);
std::string render(const StackedBars& p, Layout* layout = nullptr);

/// The estimated width of `text` in sans-serif at `font_size` px: 0.62 em a character, a little
/// more than DejaVu Sans' and Arial's average, so estimates err wide.
double text_width(const std::string& text, double font_size);

/// Escapes &, <, >, " for text inside SVG or HTML.
std::string escape(const std::string& s);

/// The colour of series / component i (a fixed palette, repeated).
std::string colour(std::size_t i);

}  // namespace inflect::scan::svg
