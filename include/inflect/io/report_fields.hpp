#pragma once
// The one table of a run's reported figures. Each field says where the figure sits in report.json
// (its key), its unit there, what it means, when it is known (null otherwise), how it is read from
// an analysis::RunReport (and set back, for reading report.json), and the other names scan rows and
// search.json give the same figure (aliases, kept because scripts read them). report.json, the
// scan's results.jsonl and results.csv rows and search.json's estimates are all written from it,
// and docs/report.md's key table is generated from it (tests/io/test_report_fields.cpp compares).
//
// Units: RunReport carries unit types (core/units.hpp); the table is where they become the plain
// numbers of the outputs, in SI base units, except where a field's unit says otherwise (TFLOP/s,
// MHz, the scan CSV's GiB).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "inflect/analysis/run_report.hpp"

namespace inflect::io {

/// When a figure is known (it is null otherwise), or when its key is written at all.
enum class Known {
  always,                // written; a number that could not be computed (NaN, infinite) is null
  when_simulated,        // null when the plan was not simulated (its memory does not fit)
  when_memory_known,     // null when the memory figures are unknown (a trace without them)
  when_power_modeled,    // null when power was not modeled
  when_thermal_modeled,  // null when temperature was not modeled
  key_if_not_simulated,  // the key is there only when the plan was not simulated
  key_if_not_empty,      // the key is there only when it has something to say (a text, or a figure that is set)
  key_if_variability,    // the key is there only with cluster.variability (docs/variability.md)
  key_if_diloco,         // the key is there only with training.diloco (docs/low-communication.md)
  key_if_volatile,       // wall-clock: the key is there only when volatile figures are asked for
};

/// memory.parts: (name, value) pairs in order.
using NamedNumbers = std::vector<std::pair<std::string, double>>;
/// A figure as the outputs write it: null, a flag, a count, a number in the field's unit, a text,
/// named numbers (memory.parts), records of named numbers (steps) or texts (warnings).
using FieldValue = std::variant<std::monostate, bool, std::int64_t, double, std::string, NamedNumbers, std::vector<NamedNumbers>,
                                std::vector<std::string>>;

/// Another name of a figure in one of the outputs.
struct FieldAlias {
  FieldAlias(std::string_view name_, std::string_view where_, std::string_view unit_ = {}, double divisor_ = 1)
      : name(name_), where(where_), unit(unit_), divisor(divisor_) {}
  std::string_view name;   // its path there ("breakdown.exposed_dp_s")
  std::string_view where;  // which outputs use it ("results.jsonl")
  std::string_view unit;   // when it differs from the field's ("GiB"); then
  double divisor = 1;      // the alias's value is the field's divided by this
};

struct ReportField {
  std::string_view key;  // path in report.json, dot-separated; for a derived scan figure, its name
  std::string_view unit; // "" for texts and flags
  std::string_view doc;
  Known known = Known::always;
  /// Describes the run rather than measures it (its name, cluster, plan): known once the
  /// experiment loaded, even for a scan point that did not run.
  bool identity = false;
  /// False for a figure only the scan's rows carry (derived from report figures).
  bool in_report = true;
  std::vector<FieldAlias> aliases;
  std::function<FieldValue(const analysis::RunReport&)> get;
  /// Sets the figure from its value in report.json; empty for figures derived from others.
  std::function<void(analysis::RunReport&, const FieldValue&)> set;
};

/// Each entry of report.json's `steps`, likewise.
struct StepField {
  std::string_view key;
  std::string_view unit;
  std::string_view doc;
  std::function<double(const analysis::StepRecord&)> get;
  std::function<void(analysis::StepRecord&, double)> set;
};

/// Every field, in report.json's order (derived scan figures last).
const std::vector<ReportField>& report_fields();
const std::vector<StepField>& step_fields();

/// A name resolved: the field, and the alias it was named by (null for the key itself).
struct FieldName {
  const ReportField* field = nullptr;
  const FieldAlias* alias = nullptr;
};
/// The field a key or alias names; field null when none does.
FieldName find_field(std::string_view name);
/// find_field, for names an output's code spells: throws core::Error(internal) when none matches.
FieldName field_named(std::string_view name);

/// Whether the field is known in `r` under its rule (key_if_* rules: whether the key is written;
/// key_if_volatile is always true here, the writer decides).
bool field_known(const ReportField& f, const analysis::RunReport& r);
/// The figure as an output writes it: null when unknown under its rule or not finite; in the
/// alias's unit when named by one. Without `measured` (a scan point that did not run) only the
/// identity fields have values and every figure is null.
FieldValue field_value(const FieldName& name, const analysis::RunReport& r, bool measured = true);

/// docs/report.md's key tables (report.json's keys, then the keys of each `steps` entry), as
/// Markdown generated from the table; a test keeps the page equal to it.
std::string report_keys_markdown();

}  // namespace inflect::io
