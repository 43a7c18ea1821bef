#include "inflect/io/experiment_loader.hpp"

#include <fmt/format.h>

#include <sstream>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/core/units_parse.hpp"
#include "inflect/io/device_catalog.hpp"
#include "inflect/io/model_loader.hpp"
#include "inflect/io/options.hpp"
#include "inflect/io/topology_loader.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/plan/validate.hpp"
#include "io/diloco_loader.hpp"
#include "io/sites_loader.hpp"

namespace inflect::io {

namespace fs = std::filesystem;
using core::Error;
using core::ErrorKind;

// ---- project root -------------------------------------------------------------------------------

namespace {
std::mutex& root_mutex() {
  static std::mutex m;
  return m;
}
std::optional<std::string>& root_override() {
  static std::optional<std::string> r;
  return r;
}
}  // namespace

std::string project_root() {
  {
    std::lock_guard lock(root_mutex());
    if (root_override()) return *root_override();
  }
  if (const char* env = std::getenv("INFLECT_ROOT"); env != nullptr && *env != '\0') return env;
#ifdef INFLECT_SOURCE_DIR
  return INFLECT_SOURCE_DIR;
#else
  return {};
#endif
}

void set_project_root(std::string dir) {
  std::lock_guard lock(root_mutex());
  root_override() = std::move(dir);
}

std::vector<std::string> search_paths(const std::string& p, const std::string& base_dir) {
  fs::path path(p);
  if (path.is_absolute()) return {path.lexically_normal().string()};
  std::vector<std::string> out;
  auto add = [&](const fs::path& c) {
    std::string s = c.lexically_normal().string();
    for (const auto& o : out)
      if (o == s) return;
    out.push_back(std::move(s));
  };
  add(fs::path(base_dir.empty() ? "." : base_dir) / path);
  add(path);
  if (std::string root = project_root(); !root.empty()) add(fs::path(root) / path);
  return out;
}

std::optional<std::string> find_input_file(const std::string& p, const std::string& base_dir) {
  for (const auto& c : search_paths(p, base_dir)) {
    std::error_code ec;  // a path the OS rejects (too long, bad bytes) is simply not there
    if (fs::is_regular_file(c, ec)) return c;
  }
  return std::nullopt;
}

// ---- reading keys through the option table ------------------------------------------------------

namespace {

/// The keys of one document that were present, by full dotted path, so checks that involve
/// several keys can point at the one the user wrote (or the nearest section they did write).
class Seen {
 public:
  explicit Seen(const Node& root) : root_(root) {}

  /// Reads the map `node` as section `section`: asks the option table's keys only, so an unknown
  /// key fails with a suggestion drawn from the table.
  void read_section(const Node& node, std::string_view section) {
    MapReader r(node);
    reject_duplicates(node);
    for (const OptionSpec* o : options_under(section)) {
      const std::string leaf(o->leaf());
      if (r.written_empty(leaf)) r.fail_empty(leaf, o->default_kind == DefaultKind::required);
      if (auto v = r.optional(leaf)) nodes_.emplace(std::string(o->key), *v);
    }
    r.finish();
  }

  std::optional<Node> get(std::string_view key) const {
    auto it = nodes_.find(std::string(key));
    if (it == nodes_.end()) return std::nullopt;
    return it->second;
  }
  bool has(std::string_view key) const { return nodes_.count(std::string(key)) > 0; }

  /// The node of a key without a default; absent (or written empty) is "missing required key" at
  /// the nearest written section.
  Node require(std::string_view key) const {
    if (auto n = get(key)) return *n;
    std::string_view leaf = option(key).leaf();
    at(key).fail(fmt::format("missing required key '{}'", leaf));
  }

  /// The node of `key`, else of its nearest written ancestor, else the document: where an error
  /// about a defaulted key points.
  const Node& at(std::string_view key) const {
    std::string k(key);
    while (!k.empty()) {
      auto it = nodes_.find(k);
      if (it != nodes_.end()) return it->second;
      auto dot = k.rfind('.');
      k = dot == std::string::npos ? std::string() : k.substr(0, dot);
    }
    return root_;
  }

  /// The value node of `key`: the user's, or the table's default text parsed as YAML, so a default
  /// goes through exactly the checks a written value would.
  Node value(std::string_view key) const {
    if (auto n = get(key)) return *n;
    const OptionSpec& o = option(key);
    core::check_invariant(o.default_kind == DefaultKind::value, "value() is only used for keys with a default");
    return Node(YAML::Load(std::string(o.default_value)), std::make_shared<const std::string>(root_.file()),
                std::string(key));
  }

  /// The value node of a key a training framework governs: the user's, else the framework's
  /// (plan/framework.cpp), else the table's default; a framework's value goes through the same checks.
  Node framework_value(std::string_view key, plan::Framework f) const {
    if (auto n = get(key)) return *n;
    if (auto v = plan::framework_default(f, key))
      return Node(YAML::Load(std::string(*v)), std::make_shared<const std::string>(root_.file()),
                  fmt::format("{} (the {} default)", key, plan::framework_name(f)));
    return value(key);
  }

  const Node& root() const { return root_; }

 private:
  // YAML lets a key repeat and lookups then see only one of the values: the other would be
  // silently ignored, so a repeat is an error.
  static void reject_duplicates(const Node& map) {
    std::map<std::string, int> lines;
    for (auto it = map.raw().begin(); it != map.raw().end(); ++it) {
      if (!it->first.IsScalar()) continue;  // MapReader::finish reports non-scalar keys as unknown
      const std::string& key = it->first.Scalar();
      const int line = it->first.Mark().line + 1;
      auto [prev, inserted] = lines.emplace(key, line);
      if (inserted) continue;
      Node at(it->first, std::make_shared<const std::string>(map.file()),
              map.path().empty() ? key : map.path() + "." + key);
      at.fail(fmt::format("duplicate key '{}' (first given on line {}); give each key once", key, prev->second));
    }
  }


  Node root_;
  std::map<std::string, Node> nodes_;
};

std::int64_t read_int(const Node& n, const OptionSpec& o) { return n.as_int(o.min, o.max); }

double read_number(const Node& n, const OptionSpec& o) {
  const double v = n.as_double();
  if (!(v >= static_cast<double>(o.min) && v <= static_cast<double>(o.max)))
    n.fail(fmt::format("{} is out of range; allowed: a number in [{}, {}]", v, o.min, o.max));
  return v;
}

std::string resolve(const Node& n, const std::string& base_dir, const char* what, bool directory_too = false) {
  std::string p = n.as_string();
  if (p.empty()) n.fail(fmt::format("empty path; expected the {} file", what));
  if (auto found = find_input_file(p, base_dir)) return *found;
  if (directory_too)
    for (const auto& c : search_paths(p, base_dir)) {
      std::error_code ec;
      if (fs::is_directory(c, ec)) return c;
    }
  throw Error(ErrorKind::io,
              fmt::format("{} file '{}' not found; looked in: {}", what, p, core::join(search_paths(p, base_dir))),
              n.where());
}

std::string file_stem(const std::string& file) {
  std::string stem = fs::path(file).stem().string();
  return stem.empty() ? file : stem;
}

plan::Dim parse_dim(const std::string& s) {
  if (s == "tp") return plan::Dim::tp;
  if (s == "cp") return plan::Dim::cp;
  if (s == "pp") return plan::Dim::pp;
  return plan::Dim::dp;
}

plan::ThermalVariation read_thermal_variation(const Node& node, const plan::ClusterSpec& c) {
  plan::ThermalVariation v;
  MapReader r(node);
  const int devices = c.devices();
  if (auto n = r.optional("spread")) {
    v.spread = n->as_double();
    if (!(v.spread >= 0 && v.spread < 1)) n->fail(fmt::format("{} is out of range; allowed: a fraction in [0, 1)", v.spread));
  }
  if (auto n = r.optional("seed")) v.seed = static_cast<std::uint64_t>(n->as_int(0, std::int64_t{1} << 62));
  if (auto list = r.optional("hot")) {
    if (!list->is_sequence()) list->fail("must be a list of {local_rank: K, resistance_scale: X} or {device: D, ...}");
    for (const Node& item : list->items()) {
      MapReader ir(item);
      plan::ThermalVariation::Hot h;
      auto dev = ir.optional("device");
      auto local = ir.optional("local_rank");
      if (dev.has_value() == local.has_value()) item.fail("give exactly one of device (a global id) and local_rank (every node)");
      if (dev) h.device = static_cast<int>(dev->as_int(0, devices - 1));
      if (local) h.local_rank = static_cast<int>(local->as_int(0, c.topology.devices_per_node - 1));
      Node scale = ir.required("resistance_scale");
      h.resistance_scale = scale.as_double();
      if (!(h.resistance_scale > 0 && h.resistance_scale <= 10))
        scale.fail(fmt::format("{} is out of range; allowed: a factor in (0, 10]", h.resistance_scale));
      ir.finish();
      v.hot.push_back(h);
    }
  }
  if (auto list = r.optional("nodes")) {
    if (!list->is_sequence()) list->fail("must be a list of {node: N, inlet_c: C}");
    for (const Node& item : list->items()) {
      MapReader ir(item);
      plan::ThermalVariation::NodeInlet n;
      n.node = static_cast<int>(ir.required("node").as_int(0, c.nodes - 1));
      n.inlet_c = read_number(ir.required("inlet_c"), option("cluster.inlet_c"));  // the same bounds
      ir.finish();
      for (const auto& other : v.node_inlets)
        if (other.node == n.node) item.fail(fmt::format("node {} is listed twice", n.node));
      v.node_inlets.push_back(n);
    }
  }
  r.finish();
  return v;
}

// cluster.variability (docs/variability.md): every key optional, each 0 (off) unless given.
plan::SpeedVariability read_speed_variability(const Node& node, const plan::ClusterSpec& c) {
  plan::SpeedVariability v;
  if (!node.is_map())
    node.fail("must be a map: {gpu_speed_spread: F, kernel_jitter: F, seed: N, slow: [{device: D, time_factor: X}, ...]}");
  MapReader r(node);
  // A spread is a standard deviation of ln(time factor): 0.5 already puts a device 2.7x slow at
  // two standard deviations, far past any published spread (docs/variability.md).
  auto spread = [](const Node& n) {
    const double x = n.as_double();
    if (!(x >= 0 && x <= 0.5)) n.fail(fmt::format("{} is out of range; allowed: a standard deviation in [0, 0.5]", x));
    return x;
  };
  if (auto n = r.optional("gpu_speed_spread")) v.gpu_speed_spread = spread(*n);
  if (auto n = r.optional("kernel_jitter")) v.kernel_jitter = spread(*n);
  if (auto n = r.optional("seed")) v.seed = static_cast<std::uint64_t>(n->as_int(0, std::int64_t{1} << 62));
  if (auto list = r.optional("slow")) {
    if (!list->is_sequence()) list->fail("must be a list of {device: D, time_factor: X} or {local_rank: K, time_factor: X}");
    for (const Node& item : list->items()) {
      MapReader ir(item);
      plan::SpeedVariability::Slow s;
      auto dev = ir.optional("device");
      auto local = ir.optional("local_rank");
      if (dev.has_value() == local.has_value()) item.fail("give exactly one of device (a global id) and local_rank (every node)");
      if (dev) s.device = static_cast<int>(dev->as_int(0, c.devices() - 1));
      if (local) s.local_rank = static_cast<int>(local->as_int(0, c.topology.devices_per_node - 1));
      Node factor = ir.required("time_factor");
      s.time_factor = factor.as_double();
      if (!(s.time_factor > 0 && s.time_factor <= 10))
        factor.fail(fmt::format("{} is out of range; allowed: a factor on kernel time in (0, 10]", s.time_factor));
      ir.finish();
      v.slow.push_back(s);
    }
  }
  r.finish();
  return v;
}

void read_cluster(const Seen& seen, const std::string& base_dir, const DeviceCatalog& catalog, plan::Experiment& e) {
  const auto sites = seen.get("cluster.sites");
  const auto wan = seen.get("cluster.wan");
  if (wan && !sites) wan->fail("cluster.wan joins sites; give cluster.sites too");
  const auto given_topology = seen.get("cluster.topology");
  if (!given_topology && !sites) (void)seen.require("cluster.topology");
  if (given_topology) e.cluster.topology = load_topology(resolve(*given_topology, base_dir, "topology"));
  if (sites) {
    const std::int64_t total = read_sites(
        *sites, wan, [&](const Node& n) { return resolve(n, base_dir, "topology"); }, given_topology.has_value(),
        e.cluster.topology);
    if (auto n = seen.get("cluster.nodes"); n && read_int(*n, option("cluster.nodes")) != total)
      n->fail(fmt::format("the sites hold {} nodes; leave cluster.nodes out or give {}", total, total));
    if (total > option("cluster.nodes").max)
      sites->fail(fmt::format("the sites hold {} nodes; at most {} are supported", total, option("cluster.nodes").max));
    e.cluster.nodes = static_cast<int>(total);
    // The sites and links as the network will build them (every site reached, routes short
    // enough): said here, at the key, so `inflect validate` says it too.
    try {
      (void)net::Topology(e.cluster.topology, e.cluster.nodes);
    } catch (const Error& err) {
      const std::string& key = err.where().key_path;
      if (key.starts_with("wan") && wan) wan->fail(err.message());
      if (key.starts_with("sites")) sites->fail(err.message());
      throw;
    }
  } else {
    e.cluster.nodes = static_cast<int>(read_int(seen.value("cluster.nodes"), option("cluster.nodes")));
  }
  const Node topo_node = given_topology ? *given_topology : sites->items().front().child("topology");
  const auto& topo = e.cluster.topology;
  if (topo.devices_per_node <= 0)
    topo_node.fail(fmt::format("topology '{}' has {} devices per node; expected at least 1", topo.name,
                               topo.devices_per_node));

  // The cluster's device: cluster.device_file's, else cluster.device's, else the topology's (which
  // may name the device file's device, or one added with --catalog).
  std::optional<hw::DeviceSpec> from_file;
  if (auto file = seen.get("cluster.device_file"))
    from_file = load_device_file(resolve(*file, base_dir, "device"), catalog);
  if (auto dev = seen.get("cluster.device")) {
    std::string name = dev->as_string();
    if (from_file && name != from_file->name)
      dev->fail(fmt::format("'{}' is not the device of cluster.device_file ({}: '{}'); give one of them, or the same "
                            "name in both",
                            name, from_file->file, from_file->name));
    if (!from_file) e.cluster.device = located(*dev, [&] { return catalog.find(name); });
  } else if (!from_file) {
    if (topo.device.empty())
      topo_node.fail(fmt::format("topology '{}' names no device; set cluster.device or cluster.device_file", topo.name));
    e.cluster.device = located(topo_node, [&] { return catalog.find(topo.device); });
  }
  if (from_file) e.cluster.device = std::move(*from_file);
  if (auto cap = seen.get("cluster.power_cap_w")) {
    // 500W like every power; a bare 500 stays accepted (files written before units were required),
    // the key's name carrying its unit.
    const double w = core::is_bare_number(cap->raw().Scalar()) || !cap->raw().IsScalar()
                         ? read_number(*cap, option("cluster.power_cap_w"))
                         : cap->as_watts().value();
    const auto& d = e.cluster.device;
    if (w < d.power.min_power_cap.value() || w > d.board_power.value())
      cap->fail(fmt::format("{} W is outside what {} accepts; allowed: {} W to its board power {} W", w, d.name,
                            d.power.min_power_cap.value(), d.board_power.value()));
    e.cluster.power_cap_w = w;
  }
  if (auto in = seen.get("cluster.inlet_c")) e.cluster.inlet_c = read_number(*in, option("cluster.inlet_c"));
  if (auto a = seen.get("cluster.collective_algorithm")) {
    const std::string name = a->as_choice(option("cluster.collective_algorithm").allowed);
    e.cluster.topology.collectives.algorithm = name == "auto" ? std::nullopt : net::parse_algorithm(name);
  }
  if (auto x = seen.get("cluster.cross_site_collectives")) {
    const std::string name = x->as_choice(option("cluster.cross_site_collectives").allowed);
    e.cluster.topology.collectives.cross_site = *net::parse_cross_site(name);  // as_choice allowed only the names
  }
  if (auto p = seen.get("cluster.collective_protocol")) {
    const std::string name = p->as_choice(option("cluster.collective_protocol").allowed);
    e.cluster.topology.collectives.protocol = name == "auto" ? std::nullopt : net::parse_protocol(name);
  }
  if (auto th = seen.get("cluster.thermal")) e.cluster.thermal = read_thermal_variation(*th, e.cluster);
  if (auto v = seen.get("cluster.variability")) e.cluster.variability = read_speed_variability(*v, e.cluster);
}

void read_workload(const Seen& seen, const std::string& base_dir, plan::Experiment& e) {
  auto model = seen.get("model");
  auto workload = seen.get("workload");
  constexpr const char* kWhich = "workload.trace (an execution graph JSON), workload.chakra (Chakra execution traces) "
                                 "or workload.kineto (PyTorch profiler traces)";
  if (model && workload)
    workload->fail(fmt::format("give either model: (a transformer to compile) or a recorded workload ({}), not both", kWhich));
  if (!model && !workload)
    seen.root().fail(fmt::format("no workload: give model: (a preset name or the fields inline) or {}", kWhich));
  if (model) {
    e.workload.model = located(*model, [&] { return parse_model(*model); });
    return;
  }
  struct Source {
    const char* key;
    workload::TraceFormat format;
    const char* role;
  };
  const Source sources[] = {{"workload.trace", workload::TraceFormat::graph_json, "execution graph"},
                            {"workload.chakra", workload::TraceFormat::chakra, "chakra trace"},
                            {"workload.kineto", workload::TraceFormat::kineto, "kineto trace"}};
  const Source* given = nullptr;
  for (const Source& src : sources) {
    auto n = seen.get(src.key);
    if (!n) continue;
    if (given) n->fail(fmt::format("give one recorded workload: {} and {} are both given", given->key, src.key));
    given = &src;
  }
  if (!given) workload->fail(fmt::format("workload: names no trace; give {}", kWhich));
  const bool directory_too = given->format != workload::TraceFormat::graph_json;
  e.workload.trace_format = given->format;
  e.workload.trace_file = resolve(*seen.get(given->key), base_dir, given->role, directory_too);
  if (auto r = seen.get("workload.retime")) e.workload.retime = r->as_bool();
  // The workload layer reads the trace when it runs; read here too, so that the report's
  // provenance (and a scan point's fingerprint) covers every file's content.
  located(*seen.get(given->key), [&] {
    for (const std::string& f : workload::trace_files(given->format, e.workload.trace_file)) (void)read_text_file(f, given->role);
    return 0;
  });
}

void read_training(const Seen& seen, plan::Experiment& e) {
  const auto& model = e.workload.model;
  auto& t = e.training;
  if (auto n = seen.get("training.seq_len")) {
    t.seq_len = read_int(*n, option("training.seq_len"));
  } else if (model) {
    if (model->seq_len <= 0)
      seen.at("training.seq_len")
          .fail(fmt::format("missing required key 'seq_len': model '{}' sets no default sequence length",
                            model->name));
    t.seq_len = model->seq_len;
  }
  if (auto n = seen.get("training.global_batch")) {
    t.global_batch = read_int(*n, option("training.global_batch"));
  } else if (model) {
    seen.at("training.global_batch")
        .fail(seen.has("training") ? "missing required key 'global_batch' (sequences per step)"
                                   : "missing required key 'training' (with at least global_batch: sequences per step)");
  }
  t.micro_batch = read_int(seen.value("training.micro_batch"), option("training.micro_batch"));
  t.steps = static_cast<int>(read_int(seen.value("training.steps"), option("training.steps")));
  std::string p = seen.value("training.precision").as_choice(option("training.precision").allowed);
  auto prec = core::parse_precision(p);
  core::check_invariant(prec.has_value(), "the option table lists only parseable precisions");
  t.precision = *prec;
  t.framework = *plan::framework_from_name(seen.value("training.framework").as_choice(option("training.framework").allowed));
  {
    const Node a = seen.framework_value("training.attention", t.framework);
    t.attention = a.as_string();
    if (t.attention.empty()) a.fail("empty attention implementation; leave the key out for the device's default");
  }
  {
    const bool fp32_weights = core::stored_as_fp32(t.precision);
    const std::string master =
        seen.framework_value("training.optimizer.master_weights", t.framework).as_choice(option("training.optimizer.master_weights").allowed);
    // fp32 training has no separate master: the FP32 weights are updated in place (4 B r/w).
    t.optimizer.master = fp32_weights || master == "fp32" ? 4 : master == "remainder" ? 2 : 0;
    t.optimizer.remainder = !fp32_weights && master == "remainder";
    t.optimizer.moment =
        seen.framework_value("training.optimizer.moments", t.framework).as_choice(option("training.optimizer.moments").allowed) == "bf16" ? 2 : 4;
    // A derived default: the experiment's or the framework's value, else the training precision's
    // (fp16 keeps fp16 main gradients, everything else fp32).
    const char* grads = "training.optimizer.gradients";
    if (seen.has(grads) || plan::framework_default(t.framework, grads))
      t.optimizer.gradient = core::bytes_per_element(
          *core::parse_precision(seen.framework_value(grads, t.framework).as_choice(option(grads).allowed)));
    else
      t.optimizer.gradient = t.precision == core::Precision::fp16 ? 2 : 4;
  }
  t.fp8.attention = seen.value("training.fp8.attention").as_bool();
  t.fp8.output_head = seen.value("training.fp8.output_head").as_bool();
  if (auto d = seen.get("training.diloco")) t.diloco = read_diloco(*d);
  if (t.precision != core::Precision::fp8 && seen.get("training.fp8"))
    seen.at("training.fp8").fail(fmt::format("training.fp8 applies only with precision fp8 (this experiment trains in {})",
                                             core::to_string(t.precision)));
}

/// The cluster's device with the attention implementation the training asks for (read_cluster
/// resolved the device, read_training the name; "" keeps the device's default).
void select_attention(const Seen& seen, plan::Experiment& e) {
  if (e.training.attention == "default" || e.training.attention == "unfused") return;
  // A framework's kernel (not one the experiment names) where the device has a curve for it; on a
  // device without one, the device's default: the framework says what it ran, not what exists.
  if (!seen.has("training.attention") && e.cluster.device.find_attention(e.training.attention) == nullptr) {
    e.training.attention = "default";
    return;
  }
  e.cluster.device = located(seen.at("training.attention"),
                             [&] { return e.cluster.device.with_attention(e.training.attention); });
}

void read_order(const Seen& seen, plan::ParallelPlan& p) {
  Node order = seen.value("parallel.order");
  const auto& dims = option("parallel.order").allowed;
  std::vector<std::string> names;
  for (const Node& item : order.items()) {
    std::string d = item.as_choice(dims);
    for (const auto& prev : names)
      if (prev == d) item.fail(fmt::format("'{}' appears twice; order lists each of {} exactly once", d, core::join(dims)));
    names.push_back(d);
  }
  if (names.size() != dims.size()) {
    std::vector<std::string> missing;
    for (const auto& d : dims) {
      bool found = false;
      for (const auto& n : names) found = found || n == d;
      if (!found) missing.push_back(d);
    }
    order.fail(fmt::format("missing {}; order lists each of {} exactly once, innermost first", core::join(missing),
                           core::join(dims)));
  }
  p.order.clear();
  for (const auto& n : names) p.order.push_back(parse_dim(n));
}

// parallel.mesh: ["dp 16", "pp 8", "ep 8 in dp", "tp 8"], outermost first. Fills the degrees and
// the placement order (innermost first: the mesh reversed), the same plan the short keys give.
void read_mesh(const Seen& seen, plan::ParallelPlan& p) {
  for (const char* key : {"parallel.tp", "parallel.pp", "parallel.dp", "parallel.cp", "parallel.ep", "parallel.order"})
    if (seen.has(key))
      seen.at(key).fail(fmt::format("'{}' and 'mesh' both set the plan's degrees; give one form or the other", option(key).leaf()));
  const Node mesh = seen.value("parallel.mesh");
  std::vector<plan::Dim> outer_first;
  std::vector<std::string> seen_dims;
  p.tp = p.pp = p.cp = p.ep = 1;
  p.dp = 1;
  for (const Node& item : mesh.items()) {
    std::istringstream words(item.as_string());
    std::string dim, size_text, in, folded, extra;
    words >> dim >> size_text >> in >> folded >> extra;
    auto bad = [&](const std::string& why) {
      item.fail(fmt::format("'{}': {}; a mesh dimension is \"<dim> <size>\" with dim one of tp, cp, pp, dp, ep "
                            "(\"ep <size> in dp\")",
                            item.as_string(), why));
    };
    if (dim != "tp" && dim != "cp" && dim != "pp" && dim != "dp" && dim != "ep") bad("unknown dimension");
    for (const auto& d : seen_dims)
      if (d == dim) bad("dimension given twice");
    seen_dims.push_back(dim);
    std::int64_t size = 0;
    try {
      std::size_t used = 0;
      size = std::stoll(size_text, &used);
      if (used != size_text.size()) size = 0;
    } catch (const std::exception&) {
      size = 0;
    }
    if (size < 1 || size > (std::int64_t{1} << 20)) bad("the size must be a whole number >= 1");
    if (dim == "ep") {
      if (!in.empty() && (in != "in" || folded != "dp" || !extra.empty())) bad("expert parallelism folds inside dp only");
      p.ep = static_cast<int>(size);
      continue;
    }
    if (!in.empty()) bad("only ep folds inside another dimension");
    const plan::Dim d = parse_dim(dim);
    outer_first.push_back(d);
    (d == plan::Dim::tp ? p.tp : d == plan::Dim::cp ? p.cp : d == plan::Dim::pp ? p.pp : p.dp) = static_cast<int>(size);
  }
  // Placement order, innermost first; dimensions the mesh leaves out (size 1) go outermost.
  p.order.assign(outer_first.rbegin(), outer_first.rend());
  for (plan::Dim d : {plan::Dim::tp, plan::Dim::cp, plan::Dim::pp, plan::Dim::dp})
    if (std::find(p.order.begin(), p.order.end(), d) == p.order.end()) p.order.push_back(d);
}

void read_parallel(const Seen& seen, plan::Experiment& e, bool check_plan_keys) {
  auto& p = e.parallel;
  auto degree = [&](const char* key) {
    return static_cast<int>(read_int(seen.value(key), option(key)));
  };
  const bool mesh = seen.has("parallel.mesh");
  if (mesh) {
    read_mesh(seen, p);
  } else {
    p.tp = degree("parallel.tp");
    p.pp = degree("parallel.pp");
    p.cp = degree("parallel.cp");
    p.ep = degree("parallel.ep");
    p.dp = 0;
    if (auto n = seen.get("parallel.dp")) p.dp = static_cast<int>(read_int(*n, option("parallel.dp")));
  }
  p.sequence_parallel = seen.value("parallel.sequence_parallel").as_bool();
  p.tp_comm_overlap = seen.value("parallel.tp_comm_overlap").as_bool();
  std::string sched = seen.value("parallel.schedule").as_choice(option("parallel.schedule").allowed);
  p.schedule = *plan::schedule_from_name(sched);  // as_choice allowed only the names
  p.virtual_stages = degree("parallel.virtual_stages");
  p.pipeline_lookahead = static_cast<int>(read_int(seen.value("parallel.pipeline_lookahead"), option("parallel.pipeline_lookahead")));
  if (auto n = seen.get("parallel.custom_schedule")) {
    if (p.schedule != plan::Schedule::custom)
      n->fail(fmt::format("custom_schedule is the schedule: custom's steps, but the schedule is {}", sched));
    if (!n->is_sequence() || n->raw().size() == 0)
      n->fail("expected a list of strings, one per pipeline rank, e.g. [\"F0 F1 B0 F2 B1 B2\", \"F0 B0 F1 B1 F2 B2\"]");
    const auto items = n->items();
    for (std::size_t r = 0; r < items.size(); ++r) {
      p.custom_schedule.push_back(items[r].as_string());
      try {
        (void)plan::parse_custom_rank(p.custom_schedule.back(), static_cast<int>(r), static_cast<int>(items.size()));
      } catch (const Error& err) {
        items[r].fail(err.message());  // located at this rank's string
      }
    }
  } else if (p.schedule == plan::Schedule::custom) {
    seen.at("parallel.schedule")
        .fail("schedule: custom needs parallel.custom_schedule: the steps of each pipeline rank, e.g. "
              "[\"F0 F1 B0 F2 B1 B2\", \"F0 B0 F1 B1 F2 B2\"] for pp 2 and 3 micro-batches");
  }

  if (auto n = seen.get("parallel.layers_per_stage")) {
    if (!n->is_sequence() || n->raw().size() == 0) n->fail("expected a list of layer counts, one per pipeline stage, e.g. [9, 8, 8, 7]");
    for (const Node& item : n->items()) p.layers_per_stage.push_back(static_cast<int>(item.as_int(1, 1 << 20)));
  }

  const plan::Framework fw = e.training.framework;
  Node zero = seen.framework_value("parallel.zero", fw);
  p.zero = static_cast<int>(read_int(zero, option("parallel.zero")));
  p.fsdp = seen.value("parallel.fsdp").as_bool();
  if (p.fsdp) {
    if (seen.has("parallel.zero") && p.zero != 3)
      zero.fail(fmt::format("zero={} contradicts fsdp: true, which shards parameters, gradients and optimizer states (zero 3); "
                            "drop one of them",
                            p.zero));
    p.zero = 3;
  }
  p.reshard_after_forward = seen.value("parallel.reshard_after_forward").as_bool();
  // (A search sets zero per plan: the setting then applies to its ZeRO-3 plans.)
  if (check_plan_keys && seen.has("parallel.reshard_after_forward") && p.zero < 3)
    seen.at("parallel.reshard_after_forward").fail("reshard_after_forward applies to sharded parameters only (zero: 3 or fsdp: true)");
  p.shard_group = static_cast<int>(read_int(seen.value("parallel.shard_group"), option("parallel.shard_group")));

  std::string rc = seen.value("parallel.recompute").as_choice(option("parallel.recompute").allowed);
  p.recompute = *workload::recompute_from_name(rc);  // as_choice allowed only the names
  p.selective_recompute = seen.framework_value("parallel.selective_recompute", fw).as_choice(option("parallel.selective_recompute").allowed) ==
                                  "every_other_matmul"
                              ? plan::SelectiveRecompute::every_other_matmul
                              : plan::SelectiveRecompute::attention;
  p.pp_scatter_gather = seen.framework_value("parallel.pp_scatter_gather", fw).as_bool();
  p.cp_comm = seen.framework_value("parallel.cp_comm", fw).as_choice(option("parallel.cp_comm").allowed) == "all_gather" ? plan::CpComm::all_gather
                                                                                                                        : plan::CpComm::p2p;
  p.overlap_param_gather = seen.framework_value("parallel.overlap_param_gather", fw).as_bool();
  p.embedding_in_pipeline_split = seen.framework_value("parallel.embedding_in_pipeline_split", fw).as_bool();

  if (!mesh) read_order(seen, p);


  Node bucket = seen.value("parallel.grad_bucket");
  p.grad_bucket_bytes = bucket.as_bytes();
  if (!(p.grad_bucket_bytes.value() >= 0))
    bucket.fail(fmt::format("'{}' is negative; expected a size of at least 0 (0 = one bucket per stage)",
                            bucket.raw().Scalar()));
  p.overlap_grad_reduce = seen.value("parallel.overlap_grad_reduce").as_bool();
  p.moe_shared_expert_overlap = seen.value("parallel.moe_shared_expert_overlap").as_bool();
  if (p.moe_shared_expert_overlap && !(e.workload.model && e.workload.model->moe.shared_experts > 0))
    seen.at("parallel.moe_shared_expert_overlap").fail("moe_shared_expert_overlap needs a model with shared experts (model.moe.shared_experts)");
}

/// Whether the plan can run is plan::validate's to say; the loader points at the line of the key
/// each problem is about (or of the nearest section the user wrote), reports the first, and fills
/// in the derived dp.
void check_plan(const Seen& seen, plan::Experiment& e) {
  const std::vector<plan::Problem> problems = plan::validate(e);
  if (!problems.empty()) seen.at(problems.front().key).fail(problems.front().message);
  if (e.parallel.dp == 0) e.parallel.dp = plan::derive_dp(e);
}

/// The device must support the training precision (whatever the plan).
void check_precision(const Seen& seen, const plan::Experiment& e) {
  const auto& t = e.training;
  const auto& dev = e.cluster.device;
  if (dev.peak_dense.count(t.precision) == 0) {
    std::vector<std::string> supported;
    for (const auto& [prec, rate] : dev.peak_dense) supported.emplace_back(core::to_string(prec));
    seen.at("training.precision")
        .fail(fmt::format("precision {} is not supported by device '{}'; supported: {}", core::to_string(t.precision),
                          dev.name, supported.empty() ? "none listed" : core::join(supported)));
  }
}

// parallel.embedding_in_pipeline_split: the stages' layer counts, unless the user gave them.
void apply_embedding_split(const Seen& seen, plan::Experiment& e) {
  auto& p = e.parallel;
  if (!p.embedding_in_pipeline_split || p.pp < 2 || !p.layers_per_stage.empty() || !e.workload.model) return;
  if (p.schedule != plan::Schedule::one_f_one_b && p.schedule != plan::Schedule::gpipe)
    seen.at("parallel.embedding_in_pipeline_split")
        .fail(fmt::format("embedding_in_pipeline_split splits layers over one-chunk stages (schedule 1f1b or gpipe), "
                          "not schedule {}",
                          plan::schedule_name(p.schedule)));
  p.layers_per_stage = plan::embedding_pipeline_split(e.workload.model->layers, p.pp);
  if (p.layers_per_stage.empty())
    seen.at("parallel.embedding_in_pipeline_split")
        .fail(fmt::format("{} layers plus the embedding and head over {} stages leave a stage without a layer",
                          e.workload.model->layers, p.pp));
}

}  // namespace

namespace {
plan::Experiment parse_document(const Node& root, const std::string& base_dir, bool check_plan_keys,
                                const DeviceCatalog& catalog);
}  // namespace

// A YAML library exception (a conversion or lookup the checks did not foresee) is an input error at
// the file, never an internal one.
plan::Experiment parse_experiment(const Node& root, const std::string& base_dir, bool check_plan_keys,
                                  const DeviceCatalog& catalog) {
  try {
    return parse_document(root, base_dir, check_plan_keys, catalog);
  } catch (const YAML::Exception& e) {
    core::SourceLocation loc{root.file(), 1, 1, ""};
    if (e.mark.line >= 0) loc = {root.file(), e.mark.line + 1, e.mark.column + 1, ""};
    throw Error(ErrorKind::input, fmt::format("cannot read this document: {}", e.msg), loc);
  }
}

namespace {
plan::Experiment parse_document(const Node& root, const std::string& base_dir, bool check_plan_keys,
                                const DeviceCatalog& catalog) {
  // An empty document has no position of its own; line 1 is where the user must start typing.
  if (root.is_null())
    throw Error(ErrorKind::input, "empty document: expected a map of keys (cluster, model, training, parallel)",
                core::SourceLocation{root.file(), 1, 1, ""});
  // A scan or search file handed to run/validate: say which command reads it, not "unknown key".
  if (root.is_map()) {
    for (const char* k : {"sweep", "plans"})
      if (root.raw()[k]) root.child(k).fail(fmt::format("this is a scan file (it has `{}:`); run it with `inflect scan FILE`", k));
    if (root.raw()["search"]) root.child("search").fail("this is a search file (it has `search:`); run it with `inflect search FILE`");
    if (root.raw()["jobs"]) root.child("jobs").fail("this is a jobs file (it has `jobs:`); run it with `inflect jobs FILE`");
  }
  Seen seen(root);
  seen.read_section(root, "");
  for (const char* s : {"cluster", "training", "training.fp8", "training.optimizer", "training.diloco", "parallel", "workload"})
    if (auto n = seen.get(s)) seen.read_section(*n, s);
  (void)seen.require("cluster");

  plan::Experiment e;
  e.file = root.file();
  if (auto n = seen.get("name")) {
    e.name = n->as_string();
    if (e.name.empty()) n->fail("empty name; expected a name for the report");
  } else {
    e.name = file_stem(root.file());
  }
  read_cluster(seen, base_dir, catalog, e);
  read_workload(seen, base_dir, e);
  read_training(seen, e);
  select_attention(seen, e);
  read_parallel(seen, e, check_plan_keys);
  apply_embedding_split(seen, e);
  check_precision(seen, e);
  if (check_plan_keys) check_plan(seen, e);
  return e;
}
}  // namespace

plan::ClusterSpec parse_cluster(const Node& cluster, const std::string& base_dir, const DeviceCatalog& catalog) {
  try {
    Seen seen(cluster);
    seen.read_section(cluster, "cluster");
    plan::Experiment e;
    e.file = cluster.file();
    read_cluster(seen, base_dir, catalog, e);
    return e.cluster;
  } catch (const YAML::Exception& x) {
    core::SourceLocation loc{cluster.file(), 1, 1, cluster.path()};
    if (x.mark.line >= 0) loc = {cluster.file(), x.mark.line + 1, x.mark.column + 1, cluster.path()};
    throw Error(ErrorKind::input, fmt::format("cannot read this cluster: {}", x.msg), loc);
  }
}

plan::Experiment load_experiment(const std::string& path, const DeviceCatalog& catalog) {
  Node root = load_yaml_file(path, "experiment");
  std::string dir = fs::path(path).parent_path().string();
  return parse_experiment(root, dir.empty() ? "." : dir, true, catalog);
}

}  // namespace inflect::io
