#pragma once
// report.json and the human-readable summary of one run.
#include <string>

#include "inflect/analysis/run_report.hpp"

namespace inflect::io {

/// report.json (keys documented in docs/report.md); deterministic: same report, same bytes. With
/// `include_volatile` false, simulator.wall_s is left out (for byte-identical comparisons).
std::string report_to_json(const analysis::RunReport& r, bool include_volatile = true);
/// The summary `inflect run` prints: step time, tokens/s, TFLOP/s per GPU, MFU, memory and fit,
/// the step-time breakdown.
std::string format_summary(const analysis::RunReport& r);

}  // namespace inflect::io
