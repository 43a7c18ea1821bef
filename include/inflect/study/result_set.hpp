#pragma once
// One side of a comparison (`inflect compare BASE NEW`, a study against its baselines): the points
// of a report.json, of a scan's result folder, or of a study's result folder, each keyed by what
// it varies so that two sides can be matched point by point (docs/studies.md).
#include <string>
#include <vector>

#include "inflect/analysis/run_report.hpp"

namespace inflect::study {

/// What a path held.
enum class SetKind { report, scan, study };
std::string_view set_kind_name(SetKind k);

/// One point: a run's report, or a scan row (a point of a study's scan case is one too).
struct ResultPoint {
  /// What identifies the point on both sides: "" for a lone report; the scan row's key
  /// ("plan=tp8+pp8;cluster.nodes=16"); in a study, the case name, then " [row key]" for a scan's
  /// row.
  std::string key;
  /// "ok" (simulated), "does_not_fit", "invalid" or "failed" (scan::status_name's words).
  std::string status;
  bool has_report = false;
  analysis::RunReport report;  // the figures; meaningful when has_report
  std::string reason;          // why a point did not run, when it did not
};

struct ResultSet {
  std::string path;
  SetKind kind = SetKind::report;
  std::vector<ResultPoint> points;  // keys unique, in the order the source lists them
};

/// Reads BASE or NEW: a report.json file (or a folder holding one, as `inflect run --out` writes),
/// a scan's result folder (results.jsonl, scan.json) or a study's (study.json and a folder per
/// case). Anything else is an input error that says what was expected.
ResultSet load_result_set(const std::string& path);

/// The file name a study's result folder is recognised by.
inline constexpr std::string_view kStudyIndex = "study.json";

}  // namespace inflect::study
