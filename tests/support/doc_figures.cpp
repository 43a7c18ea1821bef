// doc_figures: every figure a doc quotes from a bundled run is read from that run's golden output
// (tests/golden/<case>/), so the docs say what the current code computes (issue 21, "Trust").
//
//   doc_figures ROOT            check: every span in docs/*.md and README.md equals its figure
//   doc_figures ROOT --update   rewrite every span from the goldens (scripts/update-doc-figures)
//   doc_figures ROOT --list     print every registered figure as the goldens give it
//
// A span in Markdown (on one line; HTML comments, so nothing shows when rendered):
//   <!-- fig search-405b-best-step -->5.685 s<!-- /fig -->
// The registry, docs/figures.yaml, says where each named figure comes from (its header documents
// the keys). The check fails, naming file:line, the figure and both texts, when a span differs from
// its figure, names a figure the registry lacks, or when a registered figure is used by no span;
// a figure that cannot be read (no such case, file, row or JSON path) fails naming the figure.
// The goldens are the source because the golden tests already fail when an output changes without
// its golden being re-pinned: a figure read from them is the current run's.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr const char* kOpen = "<!-- fig ";
constexpr const char* kOpenEnd = " -->";
constexpr const char* kClose = "<!-- /fig -->";

/// One value read from one golden file.
struct Source {
  std::string case_name;
  std::string file;
  std::string rows;                                      // .json: a JSON pointer to an array whose elements are rows
  std::vector<std::pair<std::string, std::string>> row;  // the one row (of .jsonl, or of `rows`) whose fields have these values
  std::string path;                                      // JSON pointer into the document or the row
  std::string match;                                     // text files: a regex whose first group is the figure
  std::optional<double> constant;                        // a ratio's measured or published side, typed in
};

struct Figure {
  std::string name;
  int line = 0;  // in docs/figures.yaml
  Source num;
  std::optional<Source> den;  // a ratio: num / den
  std::string aggregate;      // "min" or "max" over every row `row` selects; empty: exactly one row
  double times = 1, minus = 0, scale = 1;
  std::string format = "{}";
  bool thousands = false;
};

/// A figure's value before formatting: a number, or a string (a plan label, a limiter).
using Value = std::variant<double, std::string>;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

[[noreturn]] void fail_at(const Figure& f, const std::string& what) {
  throw std::runtime_error("docs/figures.yaml:" + std::to_string(f.line) + ": figure " + f.name + ": " + what);
}

std::string scalar(const YAML::Node& n, const std::string& key, const std::string& figure) {
  if (!n.IsScalar()) throw std::runtime_error("figure " + figure + ": `" + key + "` must be a scalar");
  return n.as<std::string>();
}

/// Reads a source's keys from `n`, each defaulting to `base`'s (a ratio's parts inherit the
/// figure's case and file).
Source read_source(const YAML::Node& n, const Source& base, const std::string& figure) {
  Source s = base;
  for (const auto& kv : n) {
    const std::string key = kv.first.as<std::string>();
    if (key == "case") {
      s.case_name = scalar(kv.second, key, figure);
    } else if (key == "file") {
      s.file = scalar(kv.second, key, figure);
    } else if (key == "path") {
      s.path = scalar(kv.second, key, figure);
    } else if (key == "rows") {
      s.rows = scalar(kv.second, key, figure);
    } else if (key == "match") {
      s.match = scalar(kv.second, key, figure);
    } else if (key == "row") {
      if (!kv.second.IsMap()) throw std::runtime_error("figure " + figure + ": `row` must map fields to values");
      s.row.clear();
      for (const auto& r : kv.second) s.row.emplace_back(r.first.as<std::string>(), scalar(r.second, "row", figure));
    }
  }
  return s;
}

std::vector<Figure> read_registry(const fs::path& file) {
  const YAML::Node root = YAML::LoadFile(file.string());
  const YAML::Node figs = root["figures"];
  if (!figs || !figs.IsMap()) throw std::runtime_error(file.string() + ": no `figures:` map");
  static const std::set<std::string> kSourceKeys = {"case", "file", "rows", "row", "path", "match"};
  static const std::set<std::string> kKeys = {"case", "file", "rows", "row", "path", "match", "ratio",
                                              "times", "minus", "scale", "format", "thousands", "aggregate"};
  std::vector<Figure> out;
  std::set<std::string> seen;
  for (const auto& kv : figs) {
    Figure f;
    f.name = kv.first.as<std::string>();
    f.line = kv.first.Mark().line + 1;
    if (!seen.insert(f.name).second) fail_at(f, "named twice");
    const YAML::Node& n = kv.second;
    if (!n.IsMap()) fail_at(f, "must be a map of keys");
    for (const auto& k : n)
      if (!kKeys.count(k.first.as<std::string>())) fail_at(f, "unknown key `" + k.first.as<std::string>() + "`");
    const Source base = read_source(n, Source{}, f.name);
    if (n["ratio"]) {
      const YAML::Node r = n["ratio"];
      if (!r.IsMap() || !r["num"] || !r["den"] || r.size() != 2) fail_at(f, "`ratio` needs `num` and `den` (and nothing else)");
      for (const char* part : {"num", "den"})
        for (const auto& k : r[part].IsMap() ? r[part] : YAML::Node(YAML::NodeType::Map))
          if (!kSourceKeys.count(k.first.as<std::string>()))
            fail_at(f, std::string("ratio ") + part + ": unknown key `" + k.first.as<std::string>() + "`");
      f.num = read_source(r["num"], base, f.name);
      if (r["den"].IsScalar()) {
        f.den = Source{};
        f.den->constant = r["den"].as<double>();
      } else {
        f.den = read_source(r["den"], base, f.name);
      }
    } else {
      f.num = base;
    }
    if (n["times"]) f.times = n["times"].as<double>();
    if (n["minus"]) f.minus = n["minus"].as<double>();
    if (n["scale"]) f.scale = n["scale"].as<double>();
    if (n["format"]) f.format = n["format"].as<std::string>();
    if (n["thousands"]) f.thousands = n["thousands"].as<bool>();
    if (n["aggregate"]) {
      f.aggregate = n["aggregate"].as<std::string>();
      if (f.aggregate != "min" && f.aggregate != "max") fail_at(f, "`aggregate` is min or max");
      if (f.den) fail_at(f, "`aggregate` takes one source, not a ratio");
    }
    for (const Source* s : {&f.num, f.den ? &*f.den : nullptr}) {
      if (!s || s->constant) continue;
      if (s->case_name.empty() || s->file.empty()) fail_at(f, "needs `case` and `file`");
      if (s->path.empty() == s->match.empty()) fail_at(f, "needs one of `path` (JSON) or `match` (text)");
      if (!s->match.empty() && (!s->row.empty() || !s->rows.empty())) fail_at(f, "`match` reads a whole text file: no `row` or `rows`");
    }
    out.push_back(f);
  }
  return out;
}

/// The golden files, each read once.
class Goldens {
 public:
  explicit Goldens(fs::path dir) : dir_(std::move(dir)) {}

  Value read(const Figure& f, const Source& s) {
    if (s.constant) return *s.constant;
    const fs::path p = dir_ / s.case_name / s.file;
    if (!fs::exists(dir_ / s.case_name)) fail_at(f, "no golden case " + s.case_name + " under tests/golden");
    if (!fs::exists(p)) fail_at(f, "no file " + s.file + " in tests/golden/" + s.case_name);
    const std::string where = "tests/golden/" + s.case_name + "/" + s.file;
    if (!s.match.empty()) {
      const std::string& text = text_of(p);
      std::smatch m;
      const std::regex re(s.match);
      if (!std::regex_search(text, m, re) || m.size() < 2) fail_at(f, "`" + s.match + "` matches nothing in " + where);
      return m[1].str();
    }
    // The rows a selector picks from: a .jsonl file's lines, or the array at `rows` of a .json.
    std::vector<const Json*> rows;
    const Json* doc = nullptr;
    if (p.extension() == ".jsonl") {
      for (const Json& r : rows_of(p)) rows.push_back(&r);
    } else {
      doc = &json_of(p);
      if (!s.rows.empty()) {
        const Json::json_pointer at(s.rows);
        if (!doc->contains(at) || !doc->at(at).is_array()) fail_at(f, "no array " + s.rows + " in " + where);
        for (const Json& r : doc->at(at)) rows.push_back(&r);
      }
    }
    if (doc == nullptr || !s.rows.empty()) {
      if (s.row.empty()) fail_at(f, where + (doc ? " `rows`" : " has one document per row:") + " needs `row` to select one");
      std::vector<const Json*> hits;
      for (const Json* r : rows)
        if (row_matches(*r, s.row)) hits.push_back(r);
      if (!f.aggregate.empty() && !hits.empty()) return aggregate(f, hits, s.path, where);
      if (hits.size() != 1) fail_at(f, "`row` selects " + std::to_string(hits.size()) + " rows of " + where + " (one wanted)");
      doc = hits[0];
    } else if (!s.row.empty()) {
      fail_at(f, "`row` applies to .jsonl files, or to a .json file's `rows`");
    }
    const Json::json_pointer ptr(s.path);
    if (!doc->contains(ptr)) fail_at(f, "no " + s.path + " in " + where);
    const Json& v = doc->at(ptr);
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
    fail_at(f, s.path + " in " + where + " is " + v.type_name() + ", not a number or string");
  }

 private:
  /// The least or greatest number at `path` over the selected rows.
  static Value aggregate(const Figure& f, const std::vector<const Json*>& rows, const std::string& path, const std::string& where) {
    const Json::json_pointer ptr(path);
    std::optional<double> best;
    for (const Json* r : rows) {
      if (!r->contains(ptr) || !r->at(ptr).is_number()) fail_at(f, "a selected row of " + where + " has no number at " + path);
      const double x = r->at(ptr).get<double>();
      if (!best || (f.aggregate == "min" ? x < *best : x > *best)) best = x;
    }
    return *best;
  }

  static bool row_matches(const Json& row, const std::vector<std::pair<std::string, std::string>>& want) {
    for (const auto& [field, value] : want) {
      const Json::json_pointer ptr(field.front() == '/' ? field : "/" + field);
      if (!row.contains(ptr)) return false;
      const Json& v = row.at(ptr);
      if (v.is_string() ? v.get<std::string>() != value : v.dump() != value) return false;
    }
    return true;
  }

  const std::string& text_of(const fs::path& p) {
    auto it = text_.find(p.string());
    if (it == text_.end()) it = text_.emplace(p.string(), read_text(p)).first;
    return it->second;
  }
  const Json& json_of(const fs::path& p) {
    auto it = json_.find(p.string());
    if (it == json_.end()) it = json_.emplace(p.string(), Json::parse(text_of(p))).first;
    return it->second;
  }
  const std::vector<Json>& rows_of(const fs::path& p) {
    auto it = rows_.find(p.string());
    if (it == rows_.end()) {
      std::vector<Json> rows;
      std::istringstream in(text_of(p));
      for (std::string line; std::getline(in, line);)
        if (!line.empty()) rows.push_back(Json::parse(line));
      it = rows_.emplace(p.string(), std::move(rows)).first;
    }
    return it->second;
  }

  fs::path dir_;
  std::map<std::string, std::string> text_;
  std::map<std::string, Json> json_;
  std::map<std::string, std::vector<Json>> rows_;
};

double as_number(const Figure& f, const Value& v) {
  if (const double* d = std::get_if<double>(&v)) return *d;
  std::string s = std::get<std::string>(v);
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());  // 1,024 as the reports write it
  try {
    std::size_t used = 0;
    const double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (const std::exception&) {
  }
  fail_at(f, "\"" + std::get<std::string>(v) + "\" is not a number, and the figure computes with it");
}

/// Commas in the first run of digits (10272 -> 10,272), as the docs write counts.
std::string with_thousands(std::string s) {
  const std::size_t b = s.find_first_of("0123456789");
  if (b == std::string::npos) return s;
  std::size_t e = s.find_first_not_of("0123456789", b);
  if (e == std::string::npos) e = s.size();
  std::string out = s.substr(0, b);
  for (std::size_t i = b; i < e; ++i) {
    out.push_back(s[i]);
    if (i + 1 < e && (e - i - 1) % 3 == 0) out.push_back(',');
  }
  return out + s.substr(e);
}

/// The figure's text: (num [/ den] x times - minus) x scale, formatted.
std::string render(const Figure& f, Goldens& g) {
  Value v = g.read(f, f.num);
  const bool arithmetic = f.den || f.times != 1 || f.minus != 0 || f.scale != 1;
  if (arithmetic) {
    double x = as_number(f, v);
    if (f.den) x /= as_number(f, g.read(f, *f.den));
    v = (x * f.times - f.minus) * f.scale;
  }
  std::string text;
  try {
    text = std::visit([&](const auto& x) { return fmt::format(fmt::runtime(f.format), x); }, v);
  } catch (const fmt::format_error& e) {
    fail_at(f, "format `" + f.format + "`: " + e.what());
  }
  return f.thousands ? with_thousands(text) : text;
}

/// Where a figure is read, for messages: tests/golden/<case>/<file> <path or match>.
std::string source_of(const Figure& f) {
  const Source& s = f.num;
  std::string where = "tests/golden/" + s.case_name + "/" + s.file;
  for (const auto& [field, value] : s.row) where += " [" + field + "=" + value + "]";
  where += " " + (s.path.empty() ? "match " + s.match : s.path);
  return f.den ? where + " (a ratio)" : where;
}

struct Span {
  std::string name;
  std::size_t begin, end;  // the value's place in the line
};

/// Whether `at` lies inside `inline code` (after an odd number of backticks): a comment there is
/// shown as written, so it is an example of the syntax, not a span.
bool in_code(const std::string& line, std::size_t at) {
  return std::count(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(at), '`') % 2 == 1;
}

/// The spans of one line (outside code); throws on a malformed one.
std::vector<Span> spans_of(const std::string& line, const std::string& where) {
  std::vector<Span> out;
  for (std::size_t at = line.find(kOpen); at != std::string::npos; at = line.find(kOpen, at)) {
    if (in_code(line, at)) {
      ++at;
      continue;
    }
    const std::size_t name_at = at + std::string(kOpen).size();
    const std::size_t name_end = line.find(kOpenEnd, name_at);
    if (name_end == std::string::npos) throw std::runtime_error(where + ": `" + kOpen + "` without its `-->`");
    const std::size_t value_at = name_end + std::string(kOpenEnd).size();
    const std::size_t close = line.find(kClose, value_at);
    const std::size_t next = line.find(kOpen, value_at);
    if (close == std::string::npos || (next != std::string::npos && next < close))
      throw std::runtime_error(where + ": figure span without its `" + kClose + "` on the same line");
    out.push_back({line.substr(name_at, name_end - name_at), value_at, close});
    at = close;
  }
  return out;
}

int run(const fs::path& root, bool update, bool list) {
  const std::vector<Figure> figures = read_registry(root / "docs/figures.yaml");
  Goldens goldens(root / "tests/golden");
  std::map<std::string, std::string> text;  // figure name -> its text from the goldens
  std::map<std::string, std::string> source;
  for (const Figure& f : figures) {
    text[f.name] = render(f, goldens);
    source[f.name] = source_of(f);
  }
  if (list) {
    for (const Figure& f : figures) std::cout << f.name << "\t" << text[f.name] << "\n";
    return 0;
  }

  std::vector<fs::path> docs;
  for (const auto& e : fs::directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") docs.push_back(e.path());
  std::sort(docs.begin(), docs.end());
  docs.push_back(root / "README.md");

  int drift = 0, errors = 0;
  std::set<std::string> used;
  for (const fs::path& doc : docs) {
    const std::string rel = fs::relative(doc, root).string();
    std::istringstream in(read_text(doc));
    std::string out, line;
    int n = 0, rewritten = 0;
    bool fenced = false;  // inside a ``` block, where nothing is a span
    while (std::getline(in, line)) {
      ++n;
      const std::string where = rel + ":" + std::to_string(n);
      if (line.find_first_not_of(" ") != std::string::npos && line.compare(line.find_first_not_of(" "), 3, "```") == 0) fenced = !fenced;
      std::vector<Span> spans = fenced ? std::vector<Span>{} : spans_of(line, where);
      // Right to left, so a rewrite does not move the spans still to do.
      for (auto s = spans.rbegin(); s != spans.rend(); ++s) {
        used.insert(s->name);
        const auto want = text.find(s->name);
        if (want == text.end()) {
          std::cerr << where << ": figure " << s->name << " is not in docs/figures.yaml\n";
          ++errors;
          continue;
        }
        const std::string have = line.substr(s->begin, s->end - s->begin);
        if (have == want->second) continue;
        if (update) {
          line.replace(s->begin, s->end - s->begin, want->second);
          ++rewritten;
        } else {
          std::cerr << where << ": figure " << s->name << " says \"" << have << "\"; the goldens give \"" << want->second
                    << "\" (" << source[s->name] << ")\n";
          ++drift;
        }
      }
      out += line + "\n";
    }
    if (rewritten) {
      std::ofstream(doc, std::ios::binary) << out;
      std::cout << rel << ": " << rewritten << " figure(s) rewritten from the goldens\n";
    }
  }
  for (const Figure& f : figures)
    if (!used.count(f.name)) {
      std::cerr << "docs/figures.yaml:" << f.line << ": figure " << f.name << " is quoted by no doc (remove it, or quote it)\n";
      ++errors;
    }
  if (drift)
    std::cerr << drift << " figure(s) differ from the goldens: scripts/update-doc-figures rewrites them "
              << "(scripts/update-goldens runs it after re-pinning), and say in the commit why they moved\n";
  if (!drift && !errors) std::cout << figures.size() << " figures, " << used.size() << " used, all as the goldens say\n";
  return drift || errors ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> a(argv + 1, argv + argc);
    if (a.size() == 1 || (a.size() == 2 && (a[1] == "--update" || a[1] == "--list")))
      return run(a[0], a.size() == 2 && a[1] == "--update", a.size() == 2 && a[1] == "--list");
    std::cerr << "usage: doc_figures ROOT [--update | --list]\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "doc_figures: " << e.what() << "\n";
    return 2;
  }
}
