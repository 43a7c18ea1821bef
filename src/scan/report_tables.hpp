#pragma once
// What report.md and report.html both show, built once as plain cells so the two cannot drift
// apart: the headline, the table of each series and the table of every point. report.cpp writes
// them as Markdown, report_html.cpp as HTML.
#include <string>
#include <vector>

#include "inflect/scan/results.hpp"
#include "inflect/scan/scan_analysis.hpp"

namespace inflect::scan::detail {

struct Table {
  std::vector<std::string> head;
  std::vector<bool> left;  // per column: text (left-aligned) rather than a figure
  std::vector<std::vector<std::string>> rows;
};

/// "16 of 16 points: 16 simulated, ... Scale axis: devices (GPUs); fidelity: symmetric."
std::string headline(const ScanMeta& m, const std::vector<ScanRow>& rows);
/// A series' points: scale, tokens/s, per device, efficiency, gain per doubling, step, MFU, peak memory, plan.
Table series_table(const ScanAnalysis& a, const SeriesRows& sr);
/// Every point with its status and reason, one column per axis.
Table points_table(const ScanMeta& m, const std::vector<ScanRow>& rows);
/// The legend of the breakdown bars: with the straggler row when a point has it (device
/// variability, docs/variability.md), else the plain components.
std::vector<std::string> component_names(bool stragglers);

}  // namespace inflect::scan::detail
