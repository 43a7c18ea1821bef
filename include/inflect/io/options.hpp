#pragma once
// The experiment file's option table: every key declared once (after SimGrid's typed config flags
// and ns-3's attributes), with its type, unit, default, allowed values and description. The
// experiment loader reads keys through it (so unknown-key suggestions list exactly these), and
// `inflect validate` and docs/experiment.md print it.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace inflect::io {

/// What a key holds, and so how the loader reads it.
enum class OptionType : unsigned char {
  section,  // a map of further keys (`parallel:`)
  map,      // a map read by another parser (`model:`) or free-form (`validation:`)
  string,
  path,     // a file path, resolved against the experiment's directory, then the project root
  integer,  // checked against [min, max]
  number,   // a real number, checked against [min, max]
  boolean,
  size,     // bytes: a number or "80MB", "1GiB"
  choice,   // one of `allowed`
  list,     // a list whose items are each one of `allowed`
};

/// How a key that is left out gets its value.
enum class DefaultKind : unsigned char {
  value,     // `default_value`, parsed exactly as if the user had written it
  derived,   // computed from other keys; `default_value` says how (for the docs)
  required,  // no default: leaving it out is an error
  none,      // optional, and absence means "not used" (e.g. workload.trace)
};

/// One key of the experiment file.
struct OptionSpec {
  std::string_view key;  // full dotted path: "parallel.tp"
  OptionType type = OptionType::string;
  std::string_view unit;  // "sequences", "tokens", "bytes", "devices"; empty if none
  DefaultKind default_kind = DefaultKind::none;
  std::string_view default_value;  // YAML text of the default, or how it is derived
  std::string_view description;
  std::vector<std::string> allowed;  // choice / list: the values accepted
  std::int64_t min = std::numeric_limits<std::int64_t>::min();  // integer and number only
  std::int64_t max = std::numeric_limits<std::int64_t>::max();  // integer and number only

  /// "parallel" for "parallel.tp"; "" for top-level keys.
  std::string_view parent() const;
  /// "tp" for "parallel.tp".
  std::string_view leaf() const;
};

/// Every key of the experiment file, sections before their children, in documentation order.
/// Built once; thread-safe.
const std::vector<OptionSpec>& experiment_options();

/// The option with full dotted path `key`, or nullptr.
const OptionSpec* find_option(std::string_view key);

/// The option with full dotted path `key`; a missing key is a bug (core::Error internal).
const OptionSpec& option(std::string_view key);

/// The options directly under `section` ("" = top level), in table order.
std::vector<const OptionSpec*> options_under(std::string_view section);

/// "integer", "size", "one of: 1f1b, gpipe", ... as the docs and `validate` print it.
std::string describe_type(const OptionSpec& o);

/// The table as Markdown (key | type | unit | default | description), as docs/experiment.md holds.
std::string options_markdown();

}  // namespace inflect::io
