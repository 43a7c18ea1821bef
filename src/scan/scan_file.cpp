#include "inflect/scan/scan_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "inflect/core/content_hash.hpp"
#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/io/options.hpp"
#include "inflect/io/yaml_reader.hpp"

namespace inflect::scan {

namespace {

using core::Error;
using core::ErrorKind;
using io::Node;

// Keys a scan file adds to an experiment; everything else is the experiment.
const std::array<std::string, 5> kScanKeys = {"sweep", "sweep_mode", "where", "plans", "analysis"};

constexpr int kMaxPoints = 100000;

// Plan-degree keys that a `mesh` replaces (a family that sets one form drops the other from the
// base, so a family can switch between the short form and the mesh form).
const std::array<std::string, 6> kDegreeKeys = {"tp", "pp", "dp", "cp", "ep", "order"};

// Whether setting `a` drops `b` from the base document (and so the two cannot both be set by one
// point): parallel.mesh and a plan-degree key replace each other.
bool replaces(const std::string& a, const std::string& b) {
  const auto degree = [](const std::string& p) {
    for (const auto& d : kDegreeKeys)
      if (p == "parallel." + d) return true;
    return false;
  };
  return (a == "parallel.mesh" && degree(b)) || (degree(a) && b == "parallel.mesh");
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : path) {
    if (c == '.') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// A path segment may index a list (`cluster.wan[0].bandwidth`: the first WAN link's bandwidth).
struct Segment {
  std::string key;
  long index = -1;  // -1: a map key only
};
Segment parse_segment(const std::string& seg) {
  Segment out{seg, -1};
  const auto open = seg.find('[');
  if (open == std::string::npos || seg.back() != ']') return out;
  const std::string digits = seg.substr(open + 1, seg.size() - open - 2);
  long v = 0;
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty()) return out;
  out.key = seg.substr(0, open);
  out.index = v;
  return out;
}
/// `c[seg]`, or the entry `index` of the list c[key]; undefined where there is none.
YAML::Node child(const YAML::Node& c, const std::string& seg) {
  const Segment sg = parse_segment(seg);
  if (sg.index < 0) return c[seg];
  const YAML::Node list = c[sg.key];
  if (!list.IsSequence() || sg.index >= static_cast<long>(list.size())) return YAML::Node(YAML::NodeType::Undefined);
  return list[static_cast<std::size_t>(sg.index)];
}

std::vector<std::string> leaf_option_keys() {
  std::vector<std::string> keys;
  for (const auto& o : io::experiment_options())
    if (o.type != io::OptionType::section) keys.emplace_back(o.key);
  return keys;
}

// A dotted path is an experiment key, or lies under a free-form map key (model.hidden).
void check_path(const Node& at, const std::string& path) {
  for (const auto& seg : split_path(path))
    if (seg.empty()) at.fail(fmt::format("'{}' is not a dotted key path", path));
  if (const auto* o = io::find_option(path)) {
    if (o->type == io::OptionType::section)
      at.fail(fmt::format("'{}' is a section; name one of its keys (e.g. {}.{})", path, path,
                          io::options_under(path).empty() ? "key" : std::string(io::options_under(path)[0]->leaf())));
    return;
  }
  const auto segs = split_path(path);
  std::string prefix;
  for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
    const Segment sg = parse_segment(segs[i]);
    prefix += (i ? "." : "") + sg.key;
    const auto* o = io::find_option(prefix);
    if (o && o->type == io::OptionType::map) return;
    if (o && o->type == io::OptionType::list && sg.index >= 0) return;  // a key of one entry of a list of maps
  }
  const std::string hint = core::closest_match(path, leaf_option_keys());
  at.fail(fmt::format("unknown experiment key '{}'{}", path, hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
}

// A point sets a dotted path by descending through maps; a value on the way that is a scalar or a
// list (`cluster: g` under a sweep of cluster.topology) cannot hold the next key. Said at the key
// that sets the path, in the scan file, rather than as a YAML library exception while expanding.
void check_settable(const Node& root, const Node& at, const std::string& path, const char* who) {
  const auto segs = split_path(path);
  YAML::Node cur = YAML::Clone(root.raw());
  std::string prefix;
  for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
    prefix += (i ? "." : "") + segs[i];
    const YAML::Node& c = cur;
    YAML::Node next = child(c, segs[i]);
    if (parse_segment(segs[i]).index >= 0 && !next.IsDefined())
      at.fail(fmt::format("{} {}: this file has no entry '{}' to set", who, path, prefix));
    if (!next.IsDefined() || next.IsNull()) return;  // created as a map when the point is built
    if (!next.IsMap())
      at.fail(fmt::format("{} {}: '{}' is {} in this file, not a map, so it cannot hold '{}'", who, path, prefix,
                          next.IsScalar() ? fmt::format("'{}'", next.Scalar()) : std::string("a list"), segs[i + 1]));
    cur.reset(next);
  }
}

std::string label_of(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

WhereClause parse_where(const Node& n) {
  WhereClause w;
  w.text = n.as_string();
  static const std::array<std::string, 6> ops = {"<=", ">=", "==", "!=", "<", ">"};
  std::size_t pos = std::string::npos;
  for (const auto& op : ops) {
    const auto p = w.text.find(op);
    if (p != std::string::npos) {
      pos = p;
      w.op = op;
      break;
    }
  }
  if (pos == std::string::npos) n.fail(fmt::format("where '{}': expected 'key OP value' with OP one of <=, >=, ==, !=, <, >", w.text));
  auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  w.lhs = trim(w.text.substr(0, pos));
  w.rhs = trim(w.text.substr(pos + w.op.size()));
  if (w.lhs.empty() || w.rhs.empty()) n.fail(fmt::format("where '{}': both sides of {} must be given", w.text, w.op));
  if (w.lhs != "plan") check_path(n, w.lhs);
  return w;
}

double parse_fraction(const Node& n, double lo, double hi, const std::string& what) {
  const double v = n.as_double();
  if (!(v > lo && v <= hi)) n.fail(fmt::format("{} must be in ({:g}, {:g}], got {:g}", what, lo, hi, v));
  return v;
}

AnalysisSpec parse_analysis(const Node& n, const std::vector<SweepAxis>& axes) {
  AnalysisSpec a;
  io::MapReader r(n);
  if (auto s = r.optional("scale")) {
    a.scale = s->as_string();
    if (a.scale != "devices") {
      bool swept = false;
      for (const auto& ax : axes) swept = swept || ax.path == a.scale;
      if (!swept) s->fail(fmt::format("scale '{}' must be 'devices' or one of the swept keys", a.scale));
    }
  }
  if (auto s = r.optional("knee_sensitivity")) a.inflection.knee_sensitivity = parse_fraction(*s, 0, 100, "knee_sensitivity");
  if (auto s = r.optional("knee_x")) a.inflection.knee_log_scale = s->as_choice({"log", "linear"}) == "log";
  if (auto s = r.optional("min_doubling_gain")) a.inflection.min_doubling_gain = parse_fraction(*s, -1, 1, "min_doubling_gain");
  if (auto s = r.optional("efficiency_floor")) a.inflection.efficiency_floor = parse_fraction(*s, 0, 1, "efficiency_floor");
  r.finish();
  return a;
}

// ---- building a point's document ----

YAML::Node walk(YAML::Node root, const std::vector<std::string>& segs, std::size_t depth, bool create) {
  YAML::Node cur;
  cur.reset(root);
  for (std::size_t i = 0; i < depth; ++i) {
    if (!cur.IsMap()) {
      if (!create) return YAML::Node(YAML::NodeType::Undefined);
      cur = YAML::Node(YAML::NodeType::Map);
    }
    if (parse_segment(segs[i]).index >= 0) {  // an entry of a list: never created
      const YAML::Node& c = cur;
      YAML::Node entry = child(c, segs[i]);
      if (!entry.IsDefined()) {
        if (!create) return entry;
        throw Error(ErrorKind::input, fmt::format("there is no entry '{}' to set ({})", segs[i], core::join(segs, ".")));
      }
      cur.reset(entry);
      continue;
    }
    YAML::Node next = cur[segs[i]];
    if (create && next.IsDefined() && !next.IsNull() && !next.IsMap())
      throw Error(ErrorKind::input, fmt::format("'{}' is not a map, so it cannot hold '{}' (setting {})", segs[i],
                                                segs[i + 1], core::join(segs, ".")));
    if (!next.IsDefined() || next.IsNull()) {
      if (!create) return YAML::Node(YAML::NodeType::Undefined);
      cur[segs[i]] = YAML::Node(YAML::NodeType::Map);
      next.reset(cur[segs[i]]);
    }
    cur.reset(next);
  }
  return cur;
}

void set_path(YAML::Node root, const std::string& path, const YAML::Node& value) {
  const auto segs = split_path(path);
  YAML::Node parent = walk(root, segs, segs.size() - 1, true);
  parent[segs.back()] = value;
}

void erase_path(YAML::Node root, const std::string& path) {
  const auto segs = split_path(path);
  YAML::Node parent = walk(root, segs, segs.size() - 1, false);
  if (parent.IsMap()) parent.remove(segs.back());
}

std::optional<std::string> lookup(const YAML::Node& root, const std::string& path) {
  const auto segs = split_path(path);
  YAML::Node cur;
  cur.reset(root);
  for (const auto& s : segs) {
    if (!cur.IsMap()) return std::nullopt;
    const YAML::Node& c = cur;
    YAML::Node next = child(c, s);
    if (!next.IsDefined() || next.IsNull()) return std::nullopt;
    cur.reset(next);
  }
  return label_of(cur);
}

std::optional<double> as_number(const std::string& s) {
  double v = 0;
  const auto* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

// The value a where clause compares: the point's own key, else the key's fixed default.
std::string where_value(const ScanSpec& s, const YAML::Node& doc, const std::string& family, const std::string& term,
                        bool is_lhs) {
  if (term == "plan" && is_lhs) return family;
  if (auto v = lookup(doc, term)) return *v;
  if (const auto* o = io::find_option(term)) {
    if (o->default_kind == io::DefaultKind::value) return std::string(o->default_value);
    throw Error(ErrorKind::input,
                fmt::format("'{}' is not set in this point and its default is {} ({}), so it cannot be filtered "
                            "on; set it in the scan",
                            term, o->default_kind == io::DefaultKind::derived ? "derived" : "not fixed", o->default_value),
                {s.file, 0, 0, "where"});
  }
  if (!is_lhs) return term;  // a plain word on the right-hand side
  throw Error(ErrorKind::input, fmt::format("'{}' is not set in this point", term), {s.file, 0, 0, "where"});
}

bool holds(const ScanSpec& s, const WhereClause& w, const YAML::Node& doc, const std::string& family) {
  const std::string a = where_value(s, doc, family, w.lhs, true);
  const bool rhs_is_path = w.rhs.find('.') != std::string::npos && !as_number(w.rhs);
  const std::string b = rhs_is_path ? where_value(s, doc, family, w.rhs, false) : w.rhs;
  const auto x = as_number(a), y = as_number(b);
  if (x && y) {
    if (w.op == "<=") return *x <= *y;
    if (w.op == ">=") return *x >= *y;
    if (w.op == "==") return *x == *y;
    if (w.op == "!=") return *x != *y;
    if (w.op == "<") return *x < *y;
    return *x > *y;
  }
  if (w.op == "==") return a == b;
  if (w.op == "!=") return a != b;
  throw Error(ErrorKind::input, fmt::format("where '{}': {} compares numbers, but '{}' vs '{}'", w.text, w.op, a, b),
              {s.file, 0, 0, "where"});
}

}  // namespace

ScanSpec parse_scan(const std::string& text, const std::string& name, const std::string& base_dir) {
  ScanSpec s;
  s.file = name;
  s.base_dir = base_dir;
  s.text = text;
  const Node root = io::load_yaml_string(text, name);
  io::MapReader r(root);
  for (const auto* o : io::options_under("")) (void)r.optional(std::string(o->key));
  s.name = std::filesystem::path(name).stem().string();
  if (auto n = r.optional("name")) s.name = n->as_string();

  auto sweep = r.optional("sweep");
  if (!sweep) root.fail("a scan needs `sweep:` (axes by dotted key path) or `plans:`; with neither, use `inflect run`");
  {
    if (!sweep->is_map()) sweep->fail("expected a map of dotted key paths to lists of values");
    for (const auto& kv : sweep->raw()) {
      if (!kv.first.IsScalar()) sweep->fail("every key must be a dotted key path");
      SweepAxis ax;
      ax.path = kv.first.as<std::string>();
      const Node values = sweep->child(ax.path);
      check_path(values, ax.path);
      check_settable(root, values, ax.path, "sweep");
      if (!values.is_sequence() || values.raw().size() == 0)
        values.fail(fmt::format("sweep {}: expected a non-empty list of values", ax.path));
      for (const auto& other : s.axes)
        if (replaces(ax.path, other.path))
          values.fail(fmt::format("sweep {}: also sweeping {}; a mesh sets every degree and the order, so sweep one form", ax.path,
                                  other.path));
      std::set<std::string> seen;
      for (const auto& v : values.items()) {
        ax.labels.push_back(label_of(v.raw()));
        if (!seen.insert(ax.labels.back()).second) v.fail(fmt::format("sweep {}: value '{}' appears twice", ax.path, ax.labels.back()));
      }
      s.axes.push_back(std::move(ax));
    }
  }
  if (auto m = r.optional("sweep_mode")) {
    s.zip = m->as_choice({"grid", "zip"}) == "zip";
    if (s.zip)
      for (const auto& ax : s.axes)
        if (ax.labels.size() != s.axes[0].labels.size())
          m->fail(fmt::format("sweep_mode zip: every axis needs the same number of values ({} has {}, {} has {})",
                              s.axes[0].path, s.axes[0].labels.size(), ax.path, ax.labels.size()));
  }
  if (auto w = r.optional("where")) {
    if (!w->is_sequence()) w->fail("expected a list of 'key OP value' strings");
    for (const auto& item : w->items()) s.where.push_back(parse_where(item));
  }
  if (auto p = r.optional("plans")) {
    if (!p->is_map() || p->raw().size() == 0) p->fail("expected a map of family names to parallel keys");
    for (const auto& kv : p->raw()) {
      if (!kv.first.IsScalar()) p->fail("every family needs a name");
      PlanFamily f;
      f.name = kv.first.as<std::string>();
      const Node fam = p->child(f.name);
      if (!fam.is_map()) fam.fail(fmt::format("plan family '{}': expected a map of parallel keys (tp: 2, dp: auto, ...)", f.name));
      for (const auto& fk : fam.raw()) {
        if (!fk.first.IsScalar()) fam.fail(fmt::format("plan family '{}': every key must be a parallel key", f.name));
        const std::string key = fk.first.as<std::string>();
        const std::string path = key.find('.') == std::string::npos ? fmt::format("parallel.{}", key) : key;
        const Node v = fam.child(key);
        check_path(v, path);
        check_settable(root, v, path, fmt::format("plan family '{}' sets", f.name).c_str());
        for (const auto& ax : s.axes) {
          if (ax.path == path)
            v.fail(fmt::format("plan family '{}' sets {}, which is also swept; a point must get each key from one place",
                               f.name, path));
          if (replaces(ax.path, path))
            v.fail(fmt::format("plan family '{}' sets {}, which the swept {} replaces (a mesh sets every degree and the "
                               "order); sweep one form",
                               f.name, path, ax.path));
        }
        if (v.is_scalar() && v.raw().Scalar() == "auto" && path != "parallel.dp")
          v.fail(fmt::format("'auto' derives a degree from the device count; only dp can be auto (got {})", path));
      }
      s.plans.push_back(std::move(f));
    }
  }
  if (auto a = r.optional("analysis")) s.analysis = parse_analysis(*a, s.axes);
  r.finish();
  // A bound on the expansion, so a typo (or a fuzzer) cannot ask for billions of points.
  const double points = points_before_filters(s);
  if (points > kMaxPoints)
    sweep->fail(fmt::format("the scan has {:.0f} points before filtering; at most {} are allowed (split it into "
                            "several scans, or zip axes)",
                            points, kMaxPoints));
  return s;
}

double points_before_filters(const ScanSpec& s) {
  double points = static_cast<double>(std::max<std::size_t>(1, s.plans.size()));
  if (s.zip) {
    if (!s.axes.empty()) points *= static_cast<double>(s.axes[0].labels.size());
  } else {
    for (const auto& ax : s.axes) points *= static_cast<double>(ax.labels.size());
  }
  return points;
}

ScanSpec load_scan(const std::string& path) {
  const std::string text = io::read_text_file(path, "scan file");
  const auto dir = std::filesystem::path(path).parent_path().string();
  return parse_scan(text, path, dir.empty() ? "." : dir);
}

namespace {
std::vector<ScanPoint> expand(const ScanSpec& s);
std::optional<YAML::Node> build_document(const ScanSpec& s, const std::string& family, const std::vector<std::size_t>& combo);
}  // namespace

// Every failure while building points is an input error in the scan file: one parse_scan did not
// foresee, or a YAML library exception, never escapes as an internal error.
std::vector<ScanPoint> expand_points(const ScanSpec& s) {
  try {
    return expand(s);
  } catch (const Error& e) {
    if (!e.where().file.empty()) throw;
    throw Error(e.kind(), e.message(), {s.file, 0, 0, "sweep"});
  } catch (const YAML::Exception& e) {
    throw Error(ErrorKind::input, fmt::format("cannot build a scan point: {}", e.msg),
                {s.file, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.line >= 0 ? e.mark.column + 1 : 0, "sweep"});
  }
}

namespace {
std::vector<ScanPoint> expand(const ScanSpec& s) {
  std::vector<std::vector<std::size_t>> combos;
  if (s.zip) {
    for (std::size_t i = 0; i < s.axes[0].labels.size(); ++i) combos.emplace_back(s.axes.size(), i);
  } else {
    combos.emplace_back();
    for (const auto& ax : s.axes) {
      std::vector<std::vector<std::size_t>> next;
      for (const auto& c : combos)
        for (std::size_t i = 0; i < ax.labels.size(); ++i) {
          next.push_back(c);
          next.back().push_back(i);
        }
      combos = std::move(next);
    }
  }
  std::vector<std::string> families;
  for (const auto& f : s.plans) families.push_back(f.name);
  if (families.empty()) families.emplace_back();

  // Each point's document is built, fingerprinted and dropped: points hold only what identifies
  // them, and the runner builds a document again when it runs the point (point_document). Holding
  // every point's document at once cost points x the file's size (a 5 MB scan of 12 points took
  // 8 GB).
  std::vector<ScanPoint> out;
  for (const auto& family : families) {
    for (const auto& combo : combos) {
      const auto doc = build_document(s, family, combo);
      if (!doc) continue;  // a where: clause rejects it
      ScanPoint p;
      p.family = family;
      p.combo = combo;
      for (std::size_t a = 0; a < s.axes.size(); ++a) p.values.emplace_back(s.axes[a].path, s.axes[a].labels[combo[a]]);
      p.key = family.empty() ? "" : fmt::format("plan={}", family);
      for (const auto& [path, label] : p.values) p.key += fmt::format("{}{}={}", p.key.empty() ? "" : ";", path, label);
      p.index = static_cast<int>(out.size());
      YAML::Node named = *doc;
      named["name"] = fmt::format("{}[{}]", s.name, p.index);
      p.inputs = core::content_hash(YAML::Dump(named));
      out.push_back(std::move(p));
    }
  }
  return out;
}

// The experiment document of one point (family, axis values), or nullopt when a where: clause
// rejects it; without its name (expand numbers the points that are kept).
std::optional<YAML::Node> build_document(const ScanSpec& s, const std::string& family, const std::vector<std::size_t>& combo) {
  // Re-read the file so each point's values keep the line they were written on.
  YAML::Node doc = YAML::Load(s.text);
  const YAML::Node sweep = doc["sweep"];  // kept alive after the key is removed
  YAML::Node plans = doc["plans"];
  for (const auto& k : kScanKeys) doc.remove(k);
  if (!family.empty()) {
    const YAML::Node fam = plans[family];
    bool sets_mesh = false, sets_degree = false;
    for (const auto& kv : fam) {
      const auto key = kv.first.as<std::string>();
      sets_mesh = sets_mesh || key == "mesh";
      for (const auto& d : kDegreeKeys) sets_degree = sets_degree || key == d;
    }
    if (sets_mesh)
      for (const auto& d : kDegreeKeys) erase_path(doc, fmt::format("parallel.{}", d));
    if (sets_degree) erase_path(doc, "parallel.mesh");
    for (const auto& kv : fam) {
      const auto key = kv.first.as<std::string>();
      const std::string path = key.find('.') == std::string::npos ? fmt::format("parallel.{}", key) : key;
      if (kv.second.IsScalar() && kv.second.Scalar() == "auto") erase_path(doc, path);
      else set_path(doc, path, kv.second);
    }
  }
  // An axis over parallel.mesh (a placement order, docs/placements.md) drops the base's degree
  // keys, and an axis over a degree drops the base's mesh, as a family does.
  for (const auto& ax : s.axes) {
    if (ax.path == "parallel.mesh")
      for (const auto& d : kDegreeKeys) erase_path(doc, fmt::format("parallel.{}", d));
    else if (replaces(ax.path, "parallel.mesh"))
      erase_path(doc, "parallel.mesh");
  }
  for (std::size_t a = 0; a < s.axes.size(); ++a) set_path(doc, s.axes[a].path, sweep[s.axes[a].path][combo[a]]);
  for (const auto& w : s.where)
    if (!holds(s, w, doc, family)) return std::nullopt;
  return doc;
}
}  // namespace

YAML::Node point_document(const ScanSpec& s, const ScanPoint& p) {
  try {
    auto doc = build_document(s, p.family, p.combo);
    core::check_invariant(doc.has_value(), "point_document: a kept point's where: clauses no longer hold");
    (*doc)["name"] = fmt::format("{}[{}]", s.name, p.index);
    return *doc;
  } catch (const YAML::Exception& e) {
    throw Error(ErrorKind::input, fmt::format("cannot build a scan point: {}", e.msg), {s.file, 0, 0, "sweep"});
  }
}

}  // namespace inflect::scan
