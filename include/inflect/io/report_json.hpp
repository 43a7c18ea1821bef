#pragma once
// report.json and the human-readable summary of one run. Every figure is written from the field
// table (io/report_fields.hpp), which also serves the scan's rows and search.json.
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>

#include "inflect/analysis/run_report.hpp"

namespace inflect::io {

/// report.json (keys documented in docs/report.md); deterministic: same report, same bytes. With
/// `include_volatile` false, simulator.timing is left out (for byte-identical comparisons).
std::string report_to_json(const analysis::RunReport& r, bool include_volatile = true);
/// The same as a JSON value, for outputs that embed it (scan rows, search.json).
nlohmann::ordered_json report_json(const analysis::RunReport& r, bool include_volatile = true);
/// The inverse of report_json: every figure it holds set back (derived ones are recomputed when
/// written again, so report_json(report_from_json(j)) == j).
analysis::RunReport report_from_json(const nlohmann::ordered_json& j);

/// Writes the figures `names` (field keys or aliases, io/report_fields.hpp) of `r` into `out` at
/// those names' paths, in that order: how an output lays out its own selection of the table.
/// Without `measured` (a scan point that did not run) only the identity fields have values and
/// every figure is null.
void write_fields(nlohmann::ordered_json& out, const analysis::RunReport& r, std::span<const std::string_view> names,
                  bool measured = true);
/// Sets the identity fields among `names` from `in` (laid out as write_fields writes them).
void read_identity_fields(const nlohmann::ordered_json& in, analysis::RunReport& r, std::span<const std::string_view> names);

/// The summary `inflect run` prints: step time, tokens/s, TFLOP/s per GPU, MFU, memory and fit,
/// the step-time breakdown.
std::string format_summary(const analysis::RunReport& r);

}  // namespace inflect::io
