#pragma once
// From a scan's rows to curves and findings: each plan family (and each value of every other swept
// axis) becomes a series along the scale axis; analysis/inflection finds where each series bends
// and where two series that differ in one respect cross.
#include <string>
#include <vector>

#include "inflect/analysis/inflection.hpp"
#include "inflect/scan/plane.hpp"
#include "inflect/scan/results.hpp"

namespace inflect::scan {

struct SeriesRows {
  analysis::Series series;
  std::vector<const ScanRow*> rows;     // the row of each point of series.points
  std::vector<analysis::ScalingMetrics> metrics;  // scaling_metrics(series), once for every report
  std::vector<std::string> identity;    // family, then each non-scale axis value
  std::string verdict;  // analysis::inflection_verdict: knee (where, why) or no knee, in one sentence
};

struct ScanAnalysis {
  std::string unit;  // "GPUs", or the scale axis' path
  /// The throughput's: tokens/s, or steps/s when no simulated point knows its tokens (a replayed
  /// trace that does not say them): its curve is then the step rate.
  std::string throughput_unit = "tokens/s";
  std::vector<SeriesRows> series;
  std::vector<analysis::Finding> findings;  // per series (in series order), then crossovers
  Plane plane;  // which plan family wins where (plane.hpp); empty with fewer than two families
};

/// The scale of a row: its devices, or the numeric value of the scale axis; 0 when unknown.
double row_scale(const ScanMeta& m, const ScanRow& r);

/// Series and findings of a scan. Rows must outlive the result.
ScanAnalysis analyze(const ScanMeta& m, const std::vector<ScanRow>& rows);

}  // namespace inflect::scan
