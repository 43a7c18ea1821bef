#pragma once
// Two sides compared point by point (`inflect compare BASE NEW`, docs/studies.md): points matched
// by key (what they vary), per-metric deltas, and the verdict: a point fails when a metric crosses
// a threshold, when it is on one side only, or when its status changed (fits -> does not fit).
#include <optional>
#include <string>
#include <vector>

#include "inflect/study/result_set.hpp"
#include "inflect/study/thresholds.hpp"

namespace inflect::study {

/// The figures every comparison shows, in this order; a threshold on another metric adds it.
const std::vector<std::string>& default_metrics();

struct CompareOptions {
  std::vector<Threshold> thresholds;
  /// Shown in this order; empty = default_metrics() (the thresholds' metrics are added either way).
  std::vector<std::string> metrics;
};

struct MetricDelta {
  std::string metric;
  std::optional<double> base, now;  // null: unknown on that side (did not run, not modeled)
  std::optional<double> relative;   // (now - base) / |base| when both are known and base != 0
  std::vector<std::string> crossed;  // the thresholds it crossed, as written
  std::vector<std::string> why;      // for each, one sentence with both values and the change
  bool failed() const { return !crossed.empty(); }
};

struct PointComparison {
  std::string key;
  const ResultPoint* base = nullptr;  // null: only on the new side
  const ResultPoint* now = nullptr;   // null: only on the base side
  std::vector<MetricDelta> metrics;   // empty unless both sides have the point
  /// Presence and status: "in the base only", "status changed: ok -> does_not_fit".
  std::vector<std::string> status_failures;
  /// Why the point fails, one sentence each: its status failures, then each metric's crossed
  /// thresholds (MetricDelta::why) in metric order; empty when it passes.
  std::vector<std::string> failures() const;
  bool failed() const;
};

struct Comparison {
  std::string base_path, now_path;
  std::vector<std::string> metrics;       // the metrics compared, in column order
  std::vector<Threshold> thresholds;
  std::vector<PointComparison> points;    // base's order, then points only the new side has
  /// Inputs that differ between matched points other than by what the points vary (provenance):
  /// one line per difference with the number of points it touches. Warnings, not failures.
  std::vector<std::string> warnings;
  int failed_points() const;
  bool failed() const { return failed_points() > 0; }
};

/// Compares; `base` and `now` must outlive the result (points point into them).
Comparison compare(const ResultSet& base, const ResultSet& now, const CompareOptions& options = {});

/// A metric's value in a report: nullopt when unknown (null in report.json) or not a number.
std::optional<double> metric_value(const analysis::RunReport& r, const std::string& metric);

}  // namespace inflect::study
