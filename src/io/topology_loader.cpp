#include "inflect/io/topology_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/io/collective_library_loader.hpp"

namespace inflect::io {

namespace {

// Generous sanity bounds: they catch typos (devices_per_node: 80) before any arithmetic, not
// designs that are merely unusual.
constexpr std::int64_t kMaxDevicesPerNode = 4096;
constexpr std::int64_t kMaxNodesPerLeaf = 1 << 20;

/// Keys whose values are figures a user might dispute; each one present needs a `sources` entry.
class FigureKeys {
 public:
  void add(const std::string& key) { keys_.push_back(key); }
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  std::vector<std::string> keys_;
};

/// Registers every key a map may hold and rejects the others before anything is read, so a
/// misspelt key is reported as itself ("unknown key 'nic_bandwith' (did you mean ...)", at its own
/// line) rather than as the required key it was meant to be.
void declare(MapReader& r, const std::vector<std::string>& keys) {
  for (const auto& k : keys) (void)r.optional(k);
  r.finish();
}

double read_fraction(const Node& n) {
  double v = n.as_double();
  if (!(v > 0 && v <= 1)) n.fail(fmt::format("{} is out of range; allowed: a fraction in (0, 1]", v));
  return v;
}

core::Bandwidth read_positive_bandwidth(const Node& n) {
  core::Bandwidth b = n.as_bandwidth();
  if (!(b.value() > 0)) n.fail(fmt::format("'{}' must be a positive bandwidth", n.raw().Scalar()));
  return b;
}

core::Seconds read_latency(const Node& n) {
  core::Seconds s = n.as_duration();
  if (s.value() < 0) n.fail(fmt::format("'{}' must not be negative", n.raw().Scalar()));
  return s;
}

net::IntraNodeFabric parse_intra(const Node& node, int devices, FigureKeys& figures) {
  net::IntraNodeFabric f;
  const std::string kind = MapReader(node).required("kind").as_choice({"switched", "mesh"});
  MapReader r(node);
  if (kind == "switched")
    declare(r, {"kind", "port_bandwidth", "hop_latency", "efficiency", "nvls", "nvls_efficiency"});
  else
    declare(r, {"kind", "link_bandwidth", "links", "hop_latency", "efficiency"});
  f.hop_latency = read_latency(r.required("hop_latency"));
  figures.add("intra.hop_latency");
  f.efficiency = read_fraction(r.required("efficiency"));
  figures.add("intra.efficiency");
  if (kind == "switched") {
    f.kind = net::IntraFabricKind::switched;
    f.port_bandwidth = read_positive_bandwidth(r.required("port_bandwidth"));
    figures.add("intra.port_bandwidth");
    // NVLink SHARP: the switch reduces. Its rate is a figure of its own (the reduction, not the
    // ports, bounds it), so it is required where nvls is on.
    if (auto nv = r.optional("nvls")) f.nvls = nv->as_bool();
    auto eff = r.optional("nvls_efficiency");
    if (f.nvls && !eff) node.fail("nvls: true needs nvls_efficiency (the fraction of port bandwidth an NVLS all-reduce reaches)");
    if (!f.nvls && eff) eff->fail("nvls_efficiency without nvls: true; set nvls: true or remove it");
    if (eff) {
      f.nvls_efficiency = read_fraction(*eff);
      figures.add("intra.nvls_efficiency");
    }
    return f;
  }
  f.kind = net::IntraFabricKind::mesh;
  auto bw = r.optional("link_bandwidth");
  auto links = r.optional("links");
  if (bw && links)
    bw->fail("link_bandwidth describes a full mesh; with an explicit `links` list give each link its bandwidth instead");
  if (!bw && !links)
    node.fail("a mesh needs either link_bandwidth (a full mesh, one link per pair) or a `links` list");
  if (bw) {
    f.port_bandwidth = read_positive_bandwidth(*bw);
    figures.add("intra.link_bandwidth");
    return f;
  }
  figures.add("intra.links");
  std::vector<Node> items = links->items();
  if (items.empty()) links->fail("an explicit `links` list must not be empty; use link_bandwidth for a full mesh");
  std::vector<std::pair<int, int>> seen;
  for (const Node& item : items) {
    MapReader lr(item);
    declare(lr, {"a", "b", "bandwidth"});
    net::MeshLink m;
    m.a = static_cast<int>(lr.required("a").as_int(0, devices - 1));
    Node bn = lr.required("b");
    m.b = static_cast<int>(bn.as_int(0, devices - 1));
    m.bandwidth = read_positive_bandwidth(lr.required("bandwidth"));
    if (m.a == m.b) bn.fail(fmt::format("link {}-{} joins a device to itself", m.a, m.b));
    std::pair<int, int> key{std::min(m.a, m.b), std::max(m.a, m.b)};
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      item.fail(fmt::format("link {}-{} is listed twice; give one entry with the summed bandwidth", key.first, key.second));
    seen.push_back(key);
    f.links.push_back(m);
  }
  return f;
}

net::ScaleOutFabric parse_scale_out(const Node& node, int devices, FigureKeys& figures) {
  MapReader r(node);
  declare(r, {"technology", "nics_per_node", "nic_bandwidth", "nic_latency", "switch_latency", "nodes_per_leaf",
              "oversubscription", "rail_optimized", "efficiency", "in_network_reduction"});
  net::ScaleOutFabric s;
  s.technology = r.required("technology").as_string();
  s.nics_per_node = static_cast<int>(r.required("nics_per_node").as_int(1, devices));
  figures.add("scale_out.nics_per_node");
  s.nic_bandwidth = read_positive_bandwidth(r.required("nic_bandwidth"));
  figures.add("scale_out.nic_bandwidth");
  s.nic_latency = read_latency(r.required("nic_latency"));
  figures.add("scale_out.nic_latency");
  s.switch_latency = read_latency(r.required("switch_latency"));
  figures.add("scale_out.switch_latency");
  s.nodes_per_leaf = static_cast<int>(r.required("nodes_per_leaf").as_int(1, kMaxNodesPerLeaf));
  figures.add("scale_out.nodes_per_leaf");
  if (auto o = r.optional("oversubscription")) {
    s.oversubscription = o->as_double();
    if (!(s.oversubscription >= 1 && s.oversubscription <= 1024))
      o->fail(fmt::format("{} is out of range; allowed: 1 (full bisection) to 1024", s.oversubscription));
    figures.add("scale_out.oversubscription");
  }
  if (auto o = r.optional("rail_optimized")) s.rail_optimized = o->as_bool();
  if (auto o = r.optional("in_network_reduction")) s.in_network_reduction = o->as_bool();
  s.efficiency = read_fraction(r.required("efficiency"));
  figures.add("scale_out.efficiency");
  return s;
}

net::CollectiveSettings parse_collectives(const std::optional<Node>& node) {
  net::CollectiveSettings c;
  std::string library = "nccl";
  if (node) {
    MapReader r(*node);
    declare(r, {"library", "algorithm", "protocol"});
    const std::optional<Node> lib_node = r.optional("library");
    if (lib_node) library = lib_node->as_string();
    if (auto a = r.optional("algorithm")) c.algorithm = read_algorithm(*a, /*allow_auto=*/true);
    if (auto p = r.optional("protocol")) c.protocol = read_protocol(*p, /*allow_auto=*/true);
    if (library.size() > 5 && library.compare(library.size() - 5, 5, ".yaml") == 0) {
      // A library file of the user's own (a newer NCCL's figures, say), relative to the topology.
      const std::filesystem::path rel(library);
      const std::filesystem::path path =
          rel.is_absolute() ? rel : std::filesystem::path(node->file()).parent_path() / rel;
      c.library = parse_collective_library(located(*lib_node, [&] { return load_yaml_file(path.string(), "collective library"); }));
    } else {
      c.library = located(lib_node ? *lib_node : *node, [&] { return find_collective_library(library); });
    }
  } else {
    c.library = find_collective_library(library);
  }
  return c;
}

net::Cooling parse_cooling(const Node& node, FigureKeys& figures) {
  MapReader r(node);
  declare(r, {"kind", "inlet_c"});
  net::Cooling c;
  c.kind = r.required("kind").as_choice({"air", "liquid"}) == "air" ? net::CoolingKind::air : net::CoolingKind::liquid;
  Node in = r.required("inlet_c");
  c.inlet_c = in.as_double();
  if (!(c.inlet_c >= -50 && c.inlet_c <= 100)) in.fail(fmt::format("{} C is out of range; allowed: -50 to 100", c.inlet_c));
  figures.add("cooling.inlet_c");
  return c;
}

net::NodePower parse_node_power(const Node& node, FigureKeys& figures) {
  MapReader r(node);
  declare(r, {"node_other", "fabric_per_node", "pue"});
  net::NodePower p;
  auto watts = [&](const char* key) {
    Node n = r.required(key);
    core::Watts w = n.as_watts();
    if (!(w.value() >= 0)) n.fail(fmt::format("'{}' must not be negative", n.raw().Scalar()));
    figures.add(std::string("power.") + key);
    return w;
  };
  p.other = watts("node_other");
  p.fabric_per_node = watts("fabric_per_node");
  Node pue = r.required("pue");
  p.pue = pue.as_double();
  if (!(p.pue >= 1 && p.pue <= 5)) pue.fail(fmt::format("{} is out of range; allowed: a PUE in [1, 5]", p.pue));
  figures.add("power.pue");
  return p;
}

}  // namespace

net::TopologySpec parse_topology(const Node& root) {
  MapReader r(root);
  declare(r, {"name", "device", "devices_per_node", "collective_overhead", "collectives", "intra", "scale_out", "cooling",
              "power", "sources"});
  net::TopologySpec spec;
  spec.file = root.file();
  spec.name = r.required("name").as_string();
  spec.device = r.required("device").as_string();
  spec.devices_per_node = static_cast<int>(r.required("devices_per_node").as_int(1, kMaxDevicesPerNode));
  FigureKeys figures;
  figures.add("devices_per_node");
  // An extra per-call cost on top of the library's own latencies: optional, 0 when absent.
  if (auto o = r.optional("collective_overhead")) {
    spec.collective_overhead = read_latency(*o);
    figures.add("collective_overhead");
  }
  spec.collectives = parse_collectives(r.optional("collectives"));
  spec.intra = parse_intra(r.required("intra"), spec.devices_per_node, figures);
  spec.scale_out = parse_scale_out(r.required("scale_out"), spec.devices_per_node, figures);
  spec.cooling = parse_cooling(r.required("cooling"), figures);
  spec.power = parse_node_power(r.required("power"), figures);
  Node sources = r.required("sources");

  // Sources: one per figure present, and nothing else, so a typo cannot leave a figure unsourced.
  MapReader sr(sources);
  declare(sr, figures.keys());
  for (const std::string& key : figures.keys()) {
    if (!sr.has(key))
      sources.fail(fmt::format("no source for '{}'; every figure needs one (a hardware.md key, a measurement file "
                               "and row, or a derivation)",
                               key));
    Node v = sr.required(key);
    std::string text = v.as_string();
    if (text.empty()) v.fail(fmt::format("the source of '{}' is empty", key));
    spec.sources[key] = text;
  }
  return spec;
}

net::TopologySpec load_topology(const std::string& path) { return parse_topology(load_yaml_file(path, "topology")); }

}  // namespace inflect::io
