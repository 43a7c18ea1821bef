#pragma once
// Strict YAML reading with precise errors: every value knows its file, line, column and key path,
// and every map is read through a MapReader that rejects keys nobody asked for ("did you mean").
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "inflect/core/error.hpp"
#include "inflect/core/units.hpp"

namespace inflect::io {

/// A YAML node with where it came from.
class Node {
 public:
  Node(YAML::Node node, std::shared_ptr<const std::string> file, std::string path);

  const YAML::Node& raw() const { return node_; }
  const std::string& path() const { return path_; }  // e.g. "parallel.tp", "links[2].a"
  const std::string& file() const { return *file_; }
  core::SourceLocation where() const;
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return node_.IsNull(); }

  /// Throws core::Error(input) located at this node.
  [[noreturn]] void fail(const std::string& message) const;

  std::string as_string() const;
  std::int64_t as_int() const;
  /// as_int() but also checks lo <= v <= hi, naming the range in the message.
  std::int64_t as_int(std::int64_t lo, std::int64_t hi) const;
  double as_double() const;
  bool as_bool() const;
  /// Quantities accept a number (SI base unit) or a string with a unit: "80GiB", "900GB/s",
  /// "400Gbps", "1.5us", "700W", "989TFLOP/s".
  core::Bytes as_bytes() const;
  core::Bandwidth as_bandwidth() const;
  core::Seconds as_duration() const;
  core::Watts as_watts() const;
  core::Meters as_length() const;
  core::FlopRate as_flop_rate() const;
  /// One of `allowed`, else an error listing them (with a did-you-mean).
  std::string as_choice(const std::vector<std::string>& allowed) const;
  std::vector<Node> items() const;  // elements of a sequence (fails if not a sequence)
  Node child(const std::string& key) const;  // for MapReader

 private:
  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
};

/// Reads a map strictly: finish() throws on any key not asked for by required()/optional().
class MapReader {
 public:
  explicit MapReader(const Node& map);  // fails if the node is not a map
  Node required(const std::string& key);
  std::optional<Node> optional(const std::string& key);
  /// Present with a value: `key:` written empty (or ~, null) is a missing value, so has() is false.
  bool has(const std::string& key) const;
  /// Written with no value; required() and optional() refuse it via fail_empty().
  bool written_empty(const std::string& key) const;
  /// "'key' has no value" (or "missing required key 'key'"), at the key.
  [[noreturn]] void fail_empty(const std::string& key, bool required = false) const;
  /// Unknown keys are errors: "unknown key 'schedul' (did you mean 'schedule'?); allowed: ...".
  void finish() const;
  const Node& node() const { return map_; }

 private:
  Node map_;
  std::vector<std::string> asked_;
};

/// Returns fn(); an error it throws without a location (a check in the hw layer, a catalog lookup)
/// is rethrown at `at`, the key whose value led to it, keeping its kind, so that the user sees the
/// file and line that caused it. Errors that already have a location pass through.
template <class Fn>
auto located(const Node& at, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const core::Error& e) {
    if (!e.where().file.empty()) throw;
    throw core::Error(e.kind(), e.message(), at.where());
  }
}

/// A whole file as text; a missing or unreadable file is ErrorKind::io naming `what` ("scan file").
/// The read is recorded for the report's provenance under the role `what` (io/provenance.hpp).
std::string read_text_file(const std::string& path, const std::string& what = "file");
/// Writes `text` to `path` (replacing it); a file that cannot be written is ErrorKind::io naming it.
void write_text_file(const std::string& path, const std::string& text);
/// Creates `dir` and its parents if missing; failure is ErrorKind::io naming it.
void make_directories(const std::string& dir);
/// Loads a YAML file; a missing file is ErrorKind::io, a syntax error ErrorKind::input with line.
Node load_yaml_file(const std::string& path, const std::string& what = "file");
/// The largest YAML input accepted (8 MiB): past it load_yaml_string refuses before parsing.
inline constexpr std::size_t kMaxYamlBytes = std::size_t{8} << 20;
/// Parses YAML text; `name` stands in for the file name in messages. Text over kMaxYamlBytes is an
/// input error.
Node load_yaml_string(const std::string& text, const std::string& name);

}  // namespace inflect::io
