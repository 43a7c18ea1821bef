#pragma once
// When a change between two runs is a regression: `--fail-on METRIC:CHANGE` on the command line
// or a `fail_on:` map in a YAML file (docs/studies.md). METRIC is any figure of report.json by its
// key or a scan row's alias (io/report_fields.hpp); CHANGE is how far it may move:
//   step_time_s:+2%        fails when the new value is more than 2% above the base
//   tokens_per_s:-1%       fails when it is more than 1% below
//   mfu:1%  (or ±1%, +-1%) fails when it moves more than 1% either way
//   memory.peak_bytes:+0   fails on any increase (an absolute amount, in the metric's own unit)
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inflect/io/yaml_reader.hpp"

namespace inflect::study {

enum class Direction { increase, decrease, either };

struct Threshold {
  std::string metric;  // the name as given (a report.json key or an alias)
  Direction direction = Direction::either;
  double amount = 0;     // >= 0: a fraction when `relative`, else in the metric's unit
  bool relative = true;  // written with '%'
  std::string text;      // as written, for messages
};

/// Parses one `METRIC:CHANGE`; `where` names its origin for the error ("--fail-on", a file:line).
/// An unknown metric, a metric that is not a number, or a malformed change is a core::Error(input)
/// that says what is accepted.
Threshold parse_threshold(std::string_view text, std::string_view where = "--fail-on");
/// A YAML file's `fail_on:` map (metric: change) or list of "metric:change" strings; the file may
/// hold only that key (a thresholds file) or be a study file (the caller passes the node).
std::vector<Threshold> read_thresholds(const io::Node& fail_on);
std::vector<Threshold> load_thresholds_file(const std::string& path);

/// Whether moving from `base` to `now` crosses `t`. A relative threshold on a base of 0 treats
/// any move in its direction as crossing it.
bool crosses(const Threshold& t, double base, double now);

/// (now - base) / |base|; nullopt when base is 0 (and now is not).
std::optional<double> relative_change(double base, double now);

}  // namespace inflect::study
