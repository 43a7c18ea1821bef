#pragma once
// Which plan family wins where: for a scan of several plan families (placements, say) over other
// axes (a WAN's bandwidth and length), the family with the highest throughput at each combination
// of the other axes' values, and why (the breakdown component that differs most from the
// runner-up). Throughput here is toward a target: a DiLoCo plan's tokens/s count over its
// token_multiplier. Two axes make a plane: report.html draws it as a grid coloured by the winner.
#include <map>
#include <string>
#include <vector>

#include "inflect/scan/results.hpp"

namespace inflect::scan {

struct PlaneCell {
  std::vector<std::string> values;  // the other axes' value labels, in axis order
  std::string winner;               // empty when no family ran at this combination
  double throughput = 0;            // the winner's (tokens/s, or steps/s for traces without tokens)
  std::string runner_up;            // empty when only one family ran
  double margin = 0;                // winner / runner-up - 1
  std::string why;                  // "exposed dp communication: 0.52 s against 12.9 s"
  std::vector<std::string> order;   // every family that ran, fastest first
};

struct Plane {
  std::vector<std::string> axes;                 // the swept axes besides the family
  std::vector<std::vector<std::string>> labels;  // each axis' value labels, in first-seen order
  std::vector<PlaneCell> cells;                  // one per combination, in point order
  std::map<std::string, int> wins;               // family -> cells won
  bool empty() const { return cells.empty(); }
};

/// The winners of a scan with two or more plan families; empty otherwise. `step_rate`: the scan's
/// throughput is steps/s (no point knows its tokens; ScanAnalysis::throughput_unit), else tokens/s.
Plane winners(const ScanMeta& m, const std::vector<ScanRow>& rows, bool step_rate);

/// The winners as Markdown (a section with a table; two axes: a grid) and as HTML (a grid coloured
/// by winner for two axes, else a table); "" when the plane is empty.
std::string plane_markdown(const Plane& p);
std::string plane_html(const Plane& p);
/// One line per family for the terminal: "dp-across-sites wins 12 of 16 points".
std::string plane_text(const Plane& p);

}  // namespace inflect::scan
