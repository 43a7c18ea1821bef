#pragma once
// One row per scan point, as results.jsonl and results.csv hold it (docs/scans.md lists the
// fields). Rows carry no wall-clock figures, so a scan's result files are byte-identical whatever
// the number of jobs or the order points finished in.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inflect/analysis/inflection.hpp"
#include "inflect/analysis/run_report.hpp"

namespace inflect::scan {

/// ok: simulated. does_not_fit: memory exceeds the device (not simulated; reason names the
/// largest consumers). invalid: the plan is impossible (does not divide, unknown device, ...).
/// failed: the simulator itself failed (a bug; the reason says where).
enum class RowStatus { ok, does_not_fit, invalid, failed };
std::string status_name(RowStatus s);

struct ScanRow {
  int index = 0;
  std::string key;
  std::string inputs;  // ScanPoint::inputs of the point it ran; "" in results written before it existed
  std::string family;
  std::vector<std::pair<std::string, std::string>> values;  // (axis path, value label)
  RowStatus status = RowStatus::ok;
  std::string reason;

  /// The point's report, when it ran (ok, does_not_fit): has_report. A point that did not run
  /// (invalid, failed) keeps here only what is known of it, its devices and nodes (when its
  /// topology could be read); its row's figures are then null. The row's figures are this
  /// report's, written through the field table (io/report_fields.hpp) under the names rows have
  /// always used (aliases such as breakdown.exposed_dp_s).
  analysis::RunReport report;
  bool has_report = false;
};

/// Builds the row of a point that ran (ok or does_not_fit) from its report.
ScanRow row_from_report(const analysis::RunReport& r);

/// One results.jsonl line (no trailing newline).
std::string row_to_jsonl(const ScanRow& r);
/// Parses a results.jsonl line; nullopt for a line that is not a whole row (an interrupted write).
std::optional<ScanRow> row_from_jsonl(const std::string& line);

/// The results.csv header for a scan whose axes are `axis_paths`, and one row.
std::string csv_header(const std::vector<std::string>& axis_paths);
std::string row_to_csv(const ScanRow& r);

/// Sorts rows by point index (the order every results file and report uses).
void sort_by_index(std::vector<ScanRow>& rows);

/// Reads results.jsonl, skipping lines that are not whole rows; for each key the last whole row
/// wins. Sorted by index.
std::vector<ScanRow> read_rows(const std::string& jsonl_path);
/// Writes results.jsonl and results.csv for `rows`, which must be sorted by index, atomically
/// (temp + rename).
void write_results(const std::string& dir, const std::vector<std::string>& axis_paths, const std::vector<ScanRow>& rows);

}  // namespace inflect::scan

namespace inflect::scan {

/// scan.json: what `inflect report` and `inflect merge` need to re-render a scan from its rows
/// (the axes, the families, the analysis options, how many points the scan has).
struct ScanMeta {
  std::string name;
  std::string file;
  std::vector<std::string> axis_paths;
  std::vector<std::string> plans;
  std::string scale = "devices";
  analysis::InflectionOptions inflection;
  int points = 0;  // in the whole scan (all shards)
  std::string fidelity;
  /// A fingerprint of the scan file's text (core::content_hash): shards merge only when theirs
  /// agree; "" in folders written before it existed.
  std::string inputs;
  /// The scan file's keys as parsed, flattened: (dotted path, value as flow YAML), in file order;
  /// what merge names when two folders' `inputs` differ. Empty in folders written before it existed.
  std::vector<std::pair<std::string, std::string>> keys;
};

/// The first key whose value differs between two scans' `keys` ("training.seq_len: 2048 in the
/// first, 4096 in the second"), or "" when they agree (or either is empty).
std::string first_differing_key(const ScanMeta& a, const ScanMeta& b);

void write_meta(const std::string& dir, const ScanMeta& m);
/// Throws core::Error(io) when missing, (input) when malformed.
ScanMeta read_meta(const std::string& dir);

}  // namespace inflect::scan
