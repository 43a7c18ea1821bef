#include "inflect/io/yaml_reader.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "inflect/core/strings.hpp"
#include "inflect/core/units_parse.hpp"
#include "inflect/io/provenance.hpp"

namespace inflect::io {

using core::Error;
using core::ErrorKind;

Node::Node(YAML::Node node, std::shared_ptr<const std::string> file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

core::SourceLocation Node::where() const {
  core::SourceLocation loc;
  loc.file = *file_;
  // A node looked up under a key that is not there has no mark (yaml-cpp throws for it): the
  // error then carries the file and key path only.
  YAML::Mark m = YAML::Mark::null_mark();
  try {
    m = node_.Mark();
  } catch (const YAML::Exception&) {
  }
  if (m.line >= 0) {
    loc.line = m.line + 1;
    loc.column = m.column + 1;
  }
  loc.key_path = path_;
  return loc;
}

void Node::fail(const std::string& message) const { throw Error(ErrorKind::input, message, where()); }

namespace {
std::string describe(const YAML::Node& n) {
  if (n.IsScalar()) return fmt::format("'{}'", n.Scalar());
  if (n.IsMap()) return "a map";
  if (n.IsSequence()) return "a list";
  return "nothing";
}
}  // namespace

std::string Node::as_string() const {
  if (!node_.IsScalar()) fail(fmt::format("expected a string, got {}", describe(node_)));
  return node_.Scalar();
}

std::int64_t Node::as_int() const {
  if (!node_.IsScalar()) fail(fmt::format("expected an integer, got {}", describe(node_)));
  const std::string& s = node_.Scalar();
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size()) fail(fmt::format("expected an integer, got '{}'", s));
  return v;
}

std::int64_t Node::as_int(std::int64_t lo, std::int64_t hi) const {
  std::int64_t v = as_int();
  if (v < lo || v > hi) fail(fmt::format("{} is out of range; allowed: {} to {}", v, lo, hi));
  return v;
}

double Node::as_double() const {
  if (!node_.IsScalar()) fail(fmt::format("expected a number, got {}", describe(node_)));
  const std::string& s = node_.Scalar();
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !(v == v)) fail(fmt::format("expected a number, got '{}'", s));
  return v;
}

bool Node::as_bool() const {
  if (!node_.IsScalar()) fail(fmt::format("expected true or false, got {}", describe(node_)));
  const std::string& s = node_.Scalar();
  if (s == "true" || s == "True" || s == "yes") return true;
  if (s == "false" || s == "False" || s == "no") return false;
  fail(fmt::format("expected true or false, got '{}'", s));
}

namespace {
// `what` and `example` name the quantity ("a bandwidth", "400Gb/s or 50GB/s"); `units` lists what the
// parser accepts. A bare number gets its own message: it is the likeliest mistake (400 meant Gb/s).
template <class Q, class Parse>
Q parse_quantity(const Node& n, Parse parse, const char* what, const char* example, const char* units) {
  if (!n.raw().IsScalar()) n.fail(fmt::format("expected {} (e.g. {}), got {}", what, example, describe(n.raw())));
  const std::string& s = n.raw().Scalar();
  if (core::is_bare_number(s))
    n.fail(fmt::format("'{}' has no unit: expected {} with its unit, e.g. {} (units: {})", s, what, example, units));
  auto v = parse(s);
  if (!v) n.fail(fmt::format("'{}' is not {} (e.g. {}; units: {})", s, what, example, units));
  return *v;
}
}  // namespace

core::Bytes Node::as_bytes() const {
  return parse_quantity<core::Bytes>(*this, core::parse_bytes, "a size", "80GiB or 141GB", "B with a k, M, G, T or Ki, Mi, Gi, Ti prefix");
}
core::Bandwidth Node::as_bandwidth() const {
  return parse_quantity<core::Bandwidth>(*this, core::parse_bandwidth, "a bandwidth", "400Gb/s or 50GB/s",
                                         "B/s, b/s or bps with a k, M, G or T prefix");
}
core::Seconds Node::as_duration() const {
  return parse_quantity<core::Seconds>(*this, core::parse_duration, "a time", "600ns or 0.6us", "s, ms, us, ns, ps");
}
core::Watts Node::as_watts() const {
  return parse_quantity<core::Watts>(*this, core::parse_watts, "a power", "700W or 0.7kW", "W with a k or M prefix");
}
core::Meters Node::as_length() const {
  return parse_quantity<core::Meters>(*this, core::parse_length, "a distance", "1000km or 800m", "m, km, mi");
}
core::FlopRate Node::as_flop_rate() const {
  return parse_quantity<core::FlopRate>(*this, core::parse_flop_rate, "a FLOP rate", "989TFLOP/s", "FLOP/s or FLOPS with a G, T or P prefix");
}

std::string Node::as_choice(const std::vector<std::string>& allowed) const {
  std::string s = as_string();
  for (const auto& a : allowed)
    if (a == s) return s;
  std::string hint = core::closest_match(s, allowed);
  fail(fmt::format("'{}' is not allowed{}; allowed: {}", s, hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint),
                   core::join(allowed)));
}

std::vector<Node> Node::items() const {
  if (!node_.IsSequence()) fail(fmt::format("expected a list, got {}", describe(node_)));
  std::vector<Node> out;
  for (std::size_t i = 0; i < node_.size(); ++i)
    out.emplace_back(node_[i], file_, fmt::format("{}[{}]", path_, i));
  return out;
}

Node Node::child(const std::string& key) const {
  return Node(node_[key], file_, path_.empty() ? key : path_ + "." + key);
}

MapReader::MapReader(const Node& map) : map_(map) {
  if (!map.is_map()) map.fail(fmt::format("expected a map of keys, got {}", describe(map.raw())));
}

// The one rule for empty values: `key:` with nothing after it (or `~`, `null`) is a missing value,
// never a value. has() says absent; required() says "missing"; optional() refuses it rather than
// returning "absent", because an override or setting the user wrote out and left empty would
// otherwise be silently replaced by a preset's value or a default.
bool MapReader::has(const std::string& key) const {
  const YAML::Node n = map_.raw()[key];
  return n.IsDefined() && !n.IsNull();
}

bool MapReader::written_empty(const std::string& key) const {
  const YAML::Node n = map_.raw()[key];
  return n.IsDefined() && n.IsNull();
}

namespace {
// The key itself, for messages about its value: an empty value has no position of its own (its
// mark is wherever the next token starts).
Node key_node(const Node& map, const std::string& key) {
  for (auto it = map.raw().begin(); it != map.raw().end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key)
      return Node(it->first, std::make_shared<const std::string>(map.file()), map.path().empty() ? key : map.path() + "." + key);
  return map.child(key);
}
}  // namespace

void MapReader::fail_empty(const std::string& key, bool required) const {
  key_node(map_, key).fail(required ? fmt::format("missing required key '{}': written with no value (an empty value is a "
                                                  "missing value)", key)
                                    : fmt::format("'{}' has no value; give one or remove the key (an empty value is a "
                                                  "missing value)", key));
}

Node MapReader::required(const std::string& key) {
  asked_.push_back(key);
  if (written_empty(key)) fail_empty(key, true);
  if (!has(key)) map_.fail(fmt::format("missing required key '{}'", key));
  return map_.child(key);
}

std::optional<Node> MapReader::optional(const std::string& key) {
  asked_.push_back(key);
  if (written_empty(key)) fail_empty(key);
  if (!has(key)) return std::nullopt;
  return map_.child(key);
}

void MapReader::finish() const {
  for (auto it = map_.raw().begin(); it != map_.raw().end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
    bool known = false;
    for (const auto& a : asked_) known = known || a == key;
    if (known) continue;
    Node at(it->first, std::make_shared<const std::string>(map_.file()),
            map_.path().empty() ? key : map_.path() + "." + key);
    std::string hint = core::closest_match(key, asked_);
    at.fail(fmt::format("unknown key '{}'{}; allowed here: {}", key,
                        hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), core::join(asked_)));
  }
}

namespace {
// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlongs, no surrogates,
// nothing past U+10FFFF), or 0.
std::size_t utf8_sequence(const std::string& text, std::size_t i) {
  const auto b = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  const unsigned c = b(i);
  const auto cont = [&](std::size_t k) { return (b(k) & 0xC0u) == 0x80u; };
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned d = b(i + 1);
    if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F)) return 0;
    return cont(i + 1) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned d = b(i + 1);
    if ((c == 0xF0 && d < 0x90) || (c == 0xF4 && d > 0x8F)) return 0;
    return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

// Every input file is UTF-8: a name or path with stray bytes would otherwise reach the JSON report
// (which must be UTF-8) and fail there as an internal error, far from the line that has it.
void check_utf8(const std::string& text, const std::string& name) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0)
      throw Error(ErrorKind::input,
                  fmt::format("not valid UTF-8 (byte 0x{:02X}); save the file as UTF-8", static_cast<unsigned char>(text[i])),
                  core::SourceLocation{name, line, column, ""});
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += n;
  }
}

// YAML::Load reads the first document only, so a second would be silently ignored; it is refused.
// Found from the text, not with YAML::LoadAll, which (yaml-cpp 0.7) never returns on some inputs
// (a stray ',' after a top-level flow list: fuzz/corpus/experiment_yaml/loadall_hang.yaml). A line
// starting "---" or "..." at column 0 is always a document marker (YAML 1.2 §9.1), so: content,
// then a "---", or content after a "...", is a second document.
void check_one_document(const std::string& text, const std::string& name) {
  bool content = false, ended = false;
  int line = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view l(text.data() + at, end - at);
    at = end + 1;
    ++line;
    const auto marker = [&](std::string_view m) {
      return l.substr(0, 3) == m && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    };
    const std::size_t first = l.find_first_not_of(" \t\r");
    const bool blank = first == std::string_view::npos || l[first] == '#';
    if (marker("---") ? content || ended : !blank && !marker("...") && ended && l[0] != '%')
      throw Error(ErrorKind::input, "a second YAML document; a file holds one document", core::SourceLocation{name, line, 1, ""});
    if (marker("...")) ended = true;
    else if (marker("---")) content = true;  // a marker that begins the one document
    else if (!blank && l[0] != '%') content = true;
  }
}
}  // namespace

Node load_yaml_string(const std::string& text, const std::string& name) {
  // yaml-cpp holds about 150 bytes of memory per byte of input (a 50 MB experiment took 7.6 GB):
  // the largest file inflect ships is under 100 KB, so a YAML input past kMaxYamlBytes is refused
  // before it is parsed, saying so, rather than taking the machine's memory.
  if (text.size() > kMaxYamlBytes)
    throw Error(ErrorKind::input, fmt::format("{}: {:.1f} MiB of YAML, over the {} MiB an input file may have (inflect's "
                                              "largest is under 0.1 MiB; parsing takes ~150 bytes of memory per byte)",
                                              name, static_cast<double>(text.size()) / (1 << 20), kMaxYamlBytes >> 20));
  check_utf8(text, name);
  auto file = std::make_shared<const std::string>(name);
  try {
    check_one_document(text, name);
    return Node(YAML::Load(text), file, "");
  } catch (const YAML::Exception& e) {
    core::SourceLocation loc;
    loc.file = name;
    if (e.mark.line >= 0) {
      loc.line = e.mark.line + 1;
      loc.column = e.mark.column + 1;
    }
    throw Error(ErrorKind::input, fmt::format("YAML syntax error: {}", e.msg), loc);
  }
}

std::string read_text_file(const std::string& path, const std::string& what) {
  // A FIFO would block for ever and a directory reads as empty ("empty document"): only a regular
  // file (or a link to one) is read.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(st))
    throw Error(ErrorKind::io, fmt::format("{} '{}' is a directory; expected a file", what, path));
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw Error(ErrorKind::io, fmt::format("{} '{}' is not a regular file (a pipe, socket or device); expected a file",
                                           what, path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, fmt::format("cannot open {} '{}': no such file or not readable", what, path));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  note_input(what, path, text);  // the report's provenance (io/provenance.hpp)
  return text;
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(ErrorKind::io, fmt::format("cannot write '{}'", path));
  out << text;
  if (!out) throw Error(ErrorKind::io, fmt::format("cannot write '{}'", path));
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::io, fmt::format("cannot create directory '{}': {}", dir, ec.message()));
}

Node load_yaml_file(const std::string& path, const std::string& what) { return load_yaml_string(read_text_file(path, what), path); }

}  // namespace inflect::io
