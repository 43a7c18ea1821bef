#pragma once
// The reports people look at: report.md (terminals, pull requests) and report.html (one
// self-contained file with SVG plots), both rendered from scan.json and the rows alone, so
// `inflect report DIR` re-renders a finished, interrupted or merged scan.
#include <string>
#include <vector>

#include "inflect/scan/results.hpp"
#include "inflect/scan/scan_analysis.hpp"

namespace inflect::scan {

std::string report_markdown(const ScanMeta& m, const std::vector<ScanRow>& rows, const ScanAnalysis& a);
std::string report_html(const ScanMeta& m, const std::vector<ScanRow>& rows, const ScanAnalysis& a);

/// The findings as plain lines for the terminal (what `inflect scan` prints at the end).
std::string findings_text(const ScanAnalysis& a);

/// Reads DIR/scan.json and DIR/results.jsonl, writes DIR/report.md and DIR/report.html; returns
/// the analysis' findings text.
std::string write_reports(const std::string& dir);

}  // namespace inflect::scan
