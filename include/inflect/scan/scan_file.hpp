#pragma once
// A scan file: an experiment (the `inflect run` shape) plus the keys that turn it into many points
// (docs/scans.md):
//
//   sweep:        {dotted.path: [values...], ...}   axes over any experiment key
//   sweep_mode:   grid | zip                          all combinations (default) or element-wise
//   where:        ["parallel.tp <= 8", ...]           filters on a point's keys; all must hold
//   plans:        {name: {tp: 2, dp: auto, ...}}      plan families: parallel keys per family
//   analysis:     {scale, knee_sensitivity, knee_x, min_doubling_gain, efficiency_floor}
//
// Points are built as YAML documents (the file re-read, then the family's and the axes' values
// set), so every point goes through the same experiment loader, and its errors point at the line
// of the scan file that the offending value came from.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "inflect/analysis/inflection.hpp"
#include "inflect/io/device_catalog.hpp"
#include "inflect/io/profile_loader.hpp"

namespace inflect::scan {

struct SweepAxis {
  std::string path;                 // "cluster.nodes"
  std::vector<std::string> labels;  // each value as written (scalars) or as flow YAML
};

/// One filter: `lhs op rhs`, where lhs is a dotted path or `plan` (the family name) and rhs a
/// number, a word or a dotted path.
struct WhereClause {
  std::string text;
  std::string lhs, op, rhs;
};

struct PlanFamily {
  std::string name;
};

struct AnalysisSpec {
  /// The scale axis of the curves: "devices" (nodes x devices per node), or a swept numeric path.
  std::string scale = "devices";
  analysis::InflectionOptions inflection;
};

struct ScanSpec {
  std::string name;
  std::string file;      // as given
  std::string base_dir;  // where relative paths inside it resolve first
  std::string text;      // the file's text (points re-read it)
  std::vector<SweepAxis> axes;
  bool zip = false;
  std::vector<WhereClause> where;
  std::vector<PlanFamily> plans;  // empty: one implicit family, the experiment's own plan
  AnalysisSpec analysis;
  io::DeviceCatalog catalog;  // the devices points may name (the embedded ones unless --catalog added some)
  /// A calibrated profile (`--profile`) put on every point; a point on another topology is invalid.
  std::optional<io::Profile> profile;
};

/// One point of the scan: its family, the value of each axis, and its experiment document.
struct ScanPoint {
  int index = 0;        // position in expansion order (the order results are written in)
  std::string family;   // "" when the scan has no `plans:`
  std::vector<std::pair<std::string, std::string>> values;  // (axis path, value label)
  std::string key;      // identity for resume and merge: family and values, stable text
  std::vector<std::size_t> combo;  // each axis's value index (what point_document builds from)
  /// A fingerprint of the point's document as written out (core::content_hash): a row of an earlier run is
  /// this point's only when its inputs match too, so --resume re-runs a point whose experiment
  /// changed (the base's keys, a family's) and merge refuses shards that ran different ones.
  std::string inputs;
};

/// The most points a scan may expand to before its where: filters unless the user raises it
/// (`inflect scan --max-points`); past it a scan is refused before anything is expanded.
inline constexpr int kDefaultMaxPoints = 10000;

/// Reads and checks a scan file: axes name experiment keys that exist, axes of a zip have equal
/// lengths, where clauses parse, families set only parallel keys (or dotted paths), analysis
/// options are in range. Throws core::Error(input|io) with file, line and key.
ScanSpec load_scan(const std::string& path);
/// Same from text; `name` stands in for the file name in messages.
ScanSpec parse_scan(const std::string& text, const std::string& name, const std::string& base_dir);

/// Every point, families outermost, then the axes (grid: the first axis outermost), minus those a
/// where clause rejects. Points are not loaded: a point that is impossible is found when it runs.
std::vector<ScanPoint> expand_points(const ScanSpec& s);
/// The experiment document point `p` of `s` runs (built again from the scan's text: points do not
/// hold their documents, so a scan's memory does not grow with points x file size).
YAML::Node point_document(const ScanSpec& s, const ScanPoint& p);
/// How many points the scan has before its where: filters (families x the grid, or x the zipped
/// length): what a budget is checked against before anything is expanded or run.
double points_before_filters(const ScanSpec& s);

}  // namespace inflect::scan
