#pragma once
// Plots as inline SVG text, so report.html is one self-contained file (no scripts, no fetches).
// Deliberately small: line plots with markers and stacked bars, which is all a scan report draws.
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
};

std::string render(const LinePlot& p);
std::string render(const StackedBars& p);

/// Escapes &, <, >, " for text inside SVG or HTML.
std::string escape(const std::string& s);

/// The colour of series / component i (a fixed palette, repeated).
std::string colour(std::size_t i);

}  // namespace inflect::scan::svg
