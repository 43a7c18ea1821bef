#include "inflect/net/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

// GCC 12 at -O3 reports -Wmaybe-uninitialized inside Boost.Graph's edge iterators (an optional in
// adj_list_edge_iterator); it is a known false positive in Boost 1.74's headers, not our code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/graph/adjacency_list.hpp>
#include <memory>
#include <mutex>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/visitors.hpp>
#pragma GCC diagnostic pop
#include <utility>

#include "inflect/core/error.hpp"

namespace inflect::net {

namespace {

using core::Error;
using core::ErrorKind;

/// Edge property: the link an edge stands for, or kAttach for a device<->NIC attachment, which
/// carries no capacity constraint (GPUDirect over PCIe is not modelled as a shared link).
struct EdgeProp {
  LinkId link = 0;
};
constexpr LinkId kAttach = std::numeric_limits<LinkId>::max();

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeProp>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

[[noreturn]] void spec_error(const TopologySpec& spec, const std::string& key, const std::string& message) {
  core::SourceLocation loc;
  loc.file = spec.file;
  loc.key_path = key;
  throw Error(ErrorKind::input, message, loc);
}

/// One directed scale-up link of a node, in node-local vertex numbering.
struct LocalLink {
  Vertex from = 0, to = 0;
  double raw_bandwidth = 0;  // bytes/s per direction
  double latency = 0;        // seconds
};

/// The fabric of one node: devices are vertices 0..D-1; a switched fabric adds the switch as D.
struct NodeFabric {
  std::size_t vertices = 0;
  std::vector<LocalLink> links;
};

NodeFabric build_node_fabric(const TopologySpec& spec) {
  const int d = spec.devices_per_node;
  const IntraNodeFabric& f = spec.intra;
  NodeFabric nf;
  if (f.kind == IntraFabricKind::switched) {
    if (!(f.port_bandwidth.value() > 0))
      spec_error(spec, "intra.port_bandwidth", fmt::format("must be positive, got {} B/s", f.port_bandwidth.value()));
    // A GPU-to-GPU crossing is one switch hop; split its latency over the up and down link so the
    // two-link route costs exactly hop_latency.
    nf.vertices = static_cast<std::size_t>(d) + 1;
    const Vertex sw = static_cast<Vertex>(d);
    const double half = f.hop_latency.value() / 2;
    for (int i = 0; i < d; ++i) {
      const auto v = static_cast<Vertex>(i);
      nf.links.push_back({v, sw, f.port_bandwidth.value(), half});
      nf.links.push_back({sw, v, f.port_bandwidth.value(), half});
    }
    return nf;
  }
  nf.vertices = static_cast<std::size_t>(d);
  std::vector<MeshLink> pairs = f.links;
  if (pairs.empty()) {
    if (!(f.port_bandwidth.value() > 0))
      spec_error(spec, "intra.link_bandwidth",
                 fmt::format("a full mesh needs a positive per-link bandwidth, got {} B/s", f.port_bandwidth.value()));
    for (int a = 0; a < d; ++a)
      for (int b = a + 1; b < d; ++b) pairs.push_back({a, b, f.port_bandwidth});
  }
  std::vector<char> seen(static_cast<std::size_t>(d) * static_cast<std::size_t>(d), 0);
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const MeshLink& m = pairs[k];
    const std::string key = fmt::format("intra.links[{}]", k);
    if (m.a < 0 || m.a >= d || m.b < 0 || m.b >= d)
      spec_error(spec, key, fmt::format("link {}-{} names a device outside 0..{}", m.a, m.b, d - 1));
    if (m.a == m.b) spec_error(spec, key, fmt::format("link {}-{} joins a device to itself", m.a, m.b));
    if (!(m.bandwidth.value() > 0))
      spec_error(spec, key, fmt::format("link {}-{} needs a positive bandwidth, got {} B/s", m.a, m.b, m.bandwidth.value()));
    const auto lo = static_cast<std::size_t>(std::min(m.a, m.b)), hi = static_cast<std::size_t>(std::max(m.a, m.b));
    char& s = seen[lo * static_cast<std::size_t>(d) + hi];
    if (s) spec_error(spec, key, fmt::format("link {}-{} is listed twice; give one entry with the summed bandwidth", m.a, m.b));
    s = 1;
    const auto va = static_cast<Vertex>(m.a), vb = static_cast<Vertex>(m.b);
    nf.links.push_back({va, vb, m.bandwidth.value(), f.hop_latency.value()});
    nf.links.push_back({vb, va, m.bandwidth.value(), f.hop_latency.value()});
  }
  return nf;
}

constexpr int kUnreached = std::numeric_limits<int>::max();

/// Hop distances between every pair of vertices of one node, by Boost BFS from each vertex.
std::vector<std::vector<int>> all_pairs_hops(const Graph& g) {
  const std::size_t n = boost::num_vertices(g);
  std::vector<std::vector<int>> dist(n, std::vector<int>(n, kUnreached));
  for (std::size_t s = 0; s < n; ++s) {
    std::vector<int>& d = dist[s];
    d[s] = 0;
    boost::breadth_first_search(
        g, static_cast<Vertex>(s),
        boost::visitor(boost::make_bfs_visitor(boost::record_distances(d.data(), boost::on_tree_edge()))));
  }
  return dist;
}

/// Picks among all fewest-hop routes a -> b the one with the widest bottleneck, then the
/// lexicographically smallest sequence of intermediate vertices, so the choice never depends on
/// the order links were listed in. Node fabrics are small (tens of devices), so enumerating the
/// shortest-path DAG is cheap and exact where a greedy DP on (bottleneck, ids) would not be.
class ShortestRouteChooser {
 public:
  ShortestRouteChooser(const Graph& g, const NodeFabric& nf, const std::vector<std::vector<int>>& dist)
      : g_(g), nf_(nf), dist_(dist) {}

  std::vector<LinkId> choose(Vertex a, Vertex b) {
    best_.clear();
    best_vertices_.clear();
    best_width_ = -1;
    cur_.clear();
    cur_vertices_.clear();
    target_ = b;
    walk(a, std::numeric_limits<double>::infinity());
    return best_;
  }

 private:
  void walk(Vertex u, double width) {
    if (u == target_) {
      const bool wider = width > best_width_;
      const bool tie_lower = width == best_width_ && cur_vertices_ < best_vertices_;
      if (wider || tie_lower) {
        best_width_ = width;
        best_ = cur_;
        best_vertices_ = cur_vertices_;
      }
      return;
    }
    const int remaining = dist_[u][target_];
    for (auto [it, end] = boost::out_edges(u, g_); it != end; ++it) {
      const Vertex v = boost::target(*it, g_);
      if (dist_[v][target_] != remaining - 1) continue;
      const LinkId l = g_[*it].link;
      cur_.push_back(l);
      if (v != target_) cur_vertices_.push_back(v);
      walk(v, std::min(width, nf_.links[l].raw_bandwidth));
      if (v != target_) cur_vertices_.pop_back();
      cur_.pop_back();
    }
  }

  const Graph& g_;
  const NodeFabric& nf_;
  const std::vector<std::vector<int>>& dist_;
  Vertex target_ = 0;
  std::vector<LinkId> cur_, best_;
  std::vector<Vertex> cur_vertices_, best_vertices_;
  double best_width_ = -1;
};

void check_scale_out(const TopologySpec& spec, const ScaleOutFabric& s, const std::string& where) {
  const int d = spec.devices_per_node;
  if (s.nics_per_node < 1 || s.nics_per_node > d)
    spec_error(spec, where + "scale_out.nics_per_node",
               fmt::format("{} is out of range; allowed: 1 to {} (devices_per_node): each device sends through one NIC",
                           s.nics_per_node, d));
  if (!(s.nic_bandwidth.value() > 0))
    spec_error(spec, where + "scale_out.nic_bandwidth", fmt::format("must be positive, got {} B/s", s.nic_bandwidth.value()));
  if (s.nodes_per_leaf < 1)
    spec_error(spec, where + "scale_out.nodes_per_leaf", fmt::format("must be at least 1, got {}", s.nodes_per_leaf));
  if (!(s.oversubscription >= 1))
    spec_error(spec, where + "scale_out.oversubscription",
               fmt::format("{} is out of range; allowed: 1 (full bisection) or more", s.oversubscription));
  if (!(s.efficiency > 0 && s.efficiency <= 1))
    spec_error(spec, where + "scale_out.efficiency", fmt::format("{} is out of range; allowed: (0, 1]", s.efficiency));
  if (s.nic_latency.value() < 0 || s.switch_latency.value() < 0)
    spec_error(spec, where + "scale_out", "latencies must not be negative");
}

void check_spec(const TopologySpec& spec, int nodes) {
  if (nodes < 1) spec_error(spec, "nodes", fmt::format("a cluster needs at least 1 node, got {}", nodes));
  const int d = spec.devices_per_node;
  if (d < 1) spec_error(spec, "devices_per_node", fmt::format("must be at least 1, got {}", d));
  check_scale_out(spec, spec.scale_out, "");
  if (!(spec.intra.efficiency > 0 && spec.intra.efficiency <= 1))
    spec_error(spec, "intra.efficiency", fmt::format("{} is out of range; allowed: (0, 1]", spec.intra.efficiency));
  if (spec.intra.hop_latency.value() < 0) spec_error(spec, "latency", "latencies must not be negative");
  if (spec.sites.empty()) {
    if (!spec.wan.empty()) spec_error(spec, "wan", "WAN links need sites to join (cluster.sites)");
    return;
  }
  if (spec.sites.size() > std::numeric_limits<std::uint16_t>::max())
    spec_error(spec, "sites", fmt::format("{} sites is too many", spec.sites.size()));
  long long sum = 0;
  for (std::size_t i = 0; i < spec.sites.size(); ++i) {
    const SiteSpec& site = spec.sites[i];
    const std::string where = fmt::format("sites[{}].", i);
    if (site.nodes < 1) spec_error(spec, where + "nodes", fmt::format("site '{}' needs at least 1 node, got {}", site.name, site.nodes));
    check_scale_out(spec, site.scale_out, where);
    if (site.scale_out.nics_per_node != spec.scale_out.nics_per_node)
      spec_error(spec, where + "topology",
                 fmt::format("site '{}' has {} NICs per node and the cluster {}; every site's nodes must have the same "
                             "NICs (the node is the cluster's)",
                             site.name, site.scale_out.nics_per_node, spec.scale_out.nics_per_node));
    sum += site.nodes;
  }
  if (sum != nodes)
    spec_error(spec, "sites", fmt::format("the sites hold {} nodes in all but the cluster has {}", sum, nodes));
  const int n_sites = static_cast<int>(spec.sites.size());
  for (std::size_t i = 0; i < spec.wan.size(); ++i) {
    const WanLinkSpec& w = spec.wan[i];
    const std::string where = fmt::format("wan[{}]", i);
    if (w.a < 0 || w.a >= n_sites || w.b < 0 || w.b >= n_sites || w.a == w.b)
      spec_error(spec, where, fmt::format("a WAN link joins two different sites among 0..{}, got {} and {}", n_sites - 1, w.a, w.b));
    for (std::size_t j = 0; j < i; ++j)
      if (std::minmax(spec.wan[j].a, spec.wan[j].b) == std::minmax(w.a, w.b))
        spec_error(spec, where,
                   fmt::format("sites '{}' and '{}' are joined twice (wan[{}] too); give one link with its circuits",
                               spec.sites[static_cast<std::size_t>(w.a)].name, spec.sites[static_cast<std::size_t>(w.b)].name, j));
    const bool by_bandwidth = w.bandwidth.value() > 0;
    if (by_bandwidth == (w.oversubscription > 0))
      spec_error(spec, where, "give exactly one of bandwidth (per circuit) and oversubscription (of the smaller site's NICs)");
    if (w.oversubscription > 0 && !(w.oversubscription >= 1))
      spec_error(spec, where + ".oversubscription", fmt::format("{} is out of range; allowed: 1 or more", w.oversubscription));
    if (w.circuits < 1) spec_error(spec, where + ".circuits", fmt::format("must be at least 1, got {}", w.circuits));
    if (!(w.latency.value() >= 0)) spec_error(spec, where + ".latency", "must not be negative");
    if (!(w.loss >= 0 && w.loss < 1)) spec_error(spec, where + ".loss", fmt::format("{} is out of range; allowed: [0, 1)", w.loss));
    if (w.transport.kind != WanTransportKind::ideal) {
      if (!(w.transport.window.value() > 0)) spec_error(spec, where + ".transport.window", "must be positive");
      if (w.transport.streams < 1) spec_error(spec, where + ".transport.streams", "must be at least 1");
      if (!(w.transport.segment.value() > 0)) spec_error(spec, where + ".transport.segment", "must be positive");
    }
  }
}

}  // namespace

const char* to_string(LinkClass c) {
  switch (c) {
    case LinkClass::scale_up: return "scale_up";
    case LinkClass::nic_up: return "nic_up";
    case LinkClass::nic_down: return "nic_down";
    case LinkClass::leaf_up: return "leaf_up";
    case LinkClass::leaf_down: return "leaf_down";
    case LinkClass::wan: return "wan";
  }
  return "?";
}

/// The whole-cluster graph and the vertex layout needed to name link endpoints.
struct ClusterGraph {
  Graph graph;
  std::vector<std::pair<Vertex, Vertex>> ends;  // by link id
  std::size_t per_node_vertices = 0;
  std::size_t nic_vertex_base = 0;
  std::size_t leaf_vertex_base = 0;
  std::size_t core_vertex_base = 0;  // one core per site
  int per_node = 0;
  int nics = 0;
  bool switched = false;
  std::vector<std::string> site_names;  // empty names for a cluster without sites
  std::vector<int> site_first_leaf;

  std::string vertex_name(std::size_t v) const {
    if (v < nic_vertex_base) {
      const std::size_t node = v / per_node_vertices, local = v % per_node_vertices;
      if (local == static_cast<std::size_t>(per_node)) return fmt::format("n{}.switch", node);
      return fmt::format("n{}.gpu{}", node, local);
    }
    if (v < leaf_vertex_base) {
      const std::size_t nic = v - nic_vertex_base;
      return fmt::format("n{}.nic{}", nic / static_cast<std::size_t>(nics), nic % static_cast<std::size_t>(nics));
    }
    if (v < core_vertex_base) {
      const int leaf = static_cast<int>(v - leaf_vertex_base);
      if (site_names.front().empty()) return fmt::format("leaf{}", leaf);
      const auto site = static_cast<std::size_t>(
          std::upper_bound(site_first_leaf.begin(), site_first_leaf.end(), leaf) - site_first_leaf.begin() - 1);
      return fmt::format("{}.leaf{}", site_names[site], leaf - site_first_leaf[site]);
    }
    const std::string& site = site_names[v - core_vertex_base];
    return site.empty() ? "core" : site + ".core";
  }
};

Topology::Topology(const TopologySpec& spec, int nodes) : spec_(spec), nodes_(nodes), per_node_(spec.devices_per_node) {
  check_spec(spec_, nodes);
  nics_ = spec_.scale_out.nics_per_node;
  // The sites in node order; a cluster without sites is one, with the spec's scale-out.
  if (spec_.sites.empty()) {
    sites_.push_back({"", spec_.scale_out, 0, nodes_, 0, 0});
  } else {
    int first = 0;
    for (const SiteSpec& site : spec_.sites) {
      sites_.push_back({site.name, site.scale_out, first, site.nodes, 0, 0});
      first += site.nodes;
    }
  }
  site_of_node_.resize(static_cast<std::size_t>(nodes_));
  for (std::size_t si = 0; si < sites_.size(); ++si)
    std::fill_n(site_of_node_.begin() + sites_[si].first_node, sites_[si].nodes, static_cast<std::uint16_t>(si));

  // --- One node's fabric and its routes, by BFS, once.
  const NodeFabric nf = build_node_fabric(spec_);
  Graph node_graph(nf.vertices);
  for (std::size_t k = 0; k < nf.links.size(); ++k)
    boost::add_edge(nf.links[k].from, nf.links[k].to, EdgeProp{static_cast<LinkId>(k)}, node_graph);
  const auto dist = all_pairs_hops(node_graph);
  ShortestRouteChooser chooser(node_graph, nf, dist);
  const auto d = static_cast<std::size_t>(per_node_);
  intra_begin_.assign(d * d + 1, 0);
  intra_latency_.assign(d * d, 0.0);
  for (std::size_t a = 0; a < d; ++a) {
    for (std::size_t b = 0; b < d; ++b) {
      const std::size_t idx = a * d + b;
      intra_begin_[idx] = static_cast<std::uint32_t>(intra_links_.size());
      if (a == b) continue;
      if (dist[a][b] == kUnreached)
        spec_error(spec_, "intra.links",
                   fmt::format("devices {} and {} of a node are not connected by any chain of links", a, b));
      if (dist[a][b] > Path::kMax)
        spec_error(spec_, "intra.links",
                   fmt::format("the route from device {} to {} needs {} hops; at most {} are supported", a, b,
                               dist[a][b], Path::kMax));
      double latency = 0;
      for (LinkId l : chooser.choose(static_cast<Vertex>(a), static_cast<Vertex>(b))) {
        intra_links_.push_back(l);
        latency += nf.links[l].latency;
      }
      intra_latency_[idx] = latency;
    }
  }
  intra_begin_[d * d] = static_cast<std::uint32_t>(intra_links_.size());

  // --- Links, in the block layout documented in the header.
  links_per_node_ = static_cast<std::uint32_t>(nf.links.size());
  const double intra_eff = spec_.intra.efficiency;
  const std::size_t total_nics = static_cast<std::size_t>(nodes_) * static_cast<std::size_t>(nics_);
  leaf_groups_ = 0;
  for (Site& site : sites_) {
    const int groups = (site.nodes + site.fabric.nodes_per_leaf - 1) / site.fabric.nodes_per_leaf;
    site.first_leaf = leaf_groups_;
    site.leaves = site.fabric.rail_optimized ? groups * nics_ : groups;
    leaf_groups_ += site.leaves;
  }
  links_.reserve(static_cast<std::size_t>(nodes_) * links_per_node_ + 2 * total_nics +
                 2 * static_cast<std::size_t>(leaf_groups_) + 2 * spec_.wan.size());
  for (int n = 0; n < nodes_; ++n)
    for (const LocalLink& l : nf.links)
      links_.push_back({core::Bandwidth(l.raw_bandwidth * intra_eff), core::Seconds(l.latency), LinkClass::scale_up});
  nic_base_ = static_cast<std::uint32_t>(links_.size());
  for (std::size_t i = 0; i < total_nics; ++i) {
    const ScaleOutFabric& so = scale_out_of_node(static_cast<int>(i) / nics_);
    const core::Bandwidth nic_cap = so.nic_bandwidth * so.efficiency;
    links_.push_back({nic_cap, core::Seconds(0), LinkClass::nic_up});
    links_.push_back({nic_cap, core::Seconds(0), LinkClass::nic_down});
  }
  leaf_base_ = static_cast<std::uint32_t>(links_.size());
  for (const Site& site : sites_) {
    const ScaleOutFabric& so = site.fabric;
    for (int leaf = 0; leaf < site.leaves; ++leaf) {
      // The last group may be partial: only NICs actually cabled to a leaf count towards its uplink.
      const int group = so.rail_optimized ? leaf / nics_ : leaf;
      const int nodes_here = std::min(so.nodes_per_leaf, site.nodes - group * so.nodes_per_leaf);
      const int nics_under = so.rail_optimized ? nodes_here : nodes_here * nics_;
      const core::Bandwidth cap = so.nic_bandwidth * (static_cast<double>(nics_under) / so.oversubscription * so.efficiency);
      links_.push_back({cap, core::Seconds(0), LinkClass::leaf_up});
      links_.push_back({cap, core::Seconds(0), LinkClass::leaf_down});
    }
  }
  wan_base_ = static_cast<std::uint32_t>(links_.size());
  for (const WanLinkSpec& w : spec_.wan) {
    const core::Bandwidth cap =
        w.oversubscription > 0
            ? core::Bandwidth(std::min(site_injection(w.a).value(), site_injection(w.b).value()) / w.oversubscription)
            : w.bandwidth * static_cast<double>(w.circuits);
    links_.push_back({cap, w.latency, LinkClass::wan});
    links_.push_back({cap, w.latency, LinkClass::wan});
    wan_limits_.push_back(net::transport_limit(w.transport, w.latency, w.loss));  // once, not per lowering
  }
  route_sites();

  impl_ = std::make_shared<Impl>();
}

// The whole-cluster Boost graph is only read to name links and count vertices (reports, tests);
// a 16k-GPU topology has ~100k edges, so it is built on first use, not with every Topology.
struct Topology::Impl {
  std::once_flag once;
  std::unique_ptr<ClusterGraph> graph;
};

const ClusterGraph& Topology::cluster_graph() const {
  std::call_once(impl_->once, [this] { impl_->graph = build_cluster_graph(); });
  return *impl_->graph;
}

std::unique_ptr<ClusterGraph> Topology::build_cluster_graph() const {
  const NodeFabric nf = build_node_fabric(spec_);
  const std::size_t total_nics = static_cast<std::size_t>(nodes_) * static_cast<std::size_t>(nics_);
  // --- The whole-cluster graph: per-node fabrics, NICs, leaves, each site's core and the WAN.
  auto impl = std::make_unique<ClusterGraph>();
  impl->per_node = per_node_;
  impl->nics = nics_;
  impl->switched = spec_.intra.kind == IntraFabricKind::switched;
  impl->per_node_vertices = nf.vertices;
  impl->nic_vertex_base = static_cast<std::size_t>(nodes_) * nf.vertices;
  impl->leaf_vertex_base = impl->nic_vertex_base + total_nics;
  impl->core_vertex_base = impl->leaf_vertex_base + static_cast<std::size_t>(leaf_groups_);
  for (const Site& site : sites_) {
    impl->site_names.push_back(site.name);
    impl->site_first_leaf.push_back(site.first_leaf);
  }
  Graph& g = impl->graph;
  g = Graph(impl->core_vertex_base + sites_.size());
  impl->ends.resize(links_.size());
  auto add = [&](std::size_t from, std::size_t to, LinkId l) {
    boost::add_edge(static_cast<Vertex>(from), static_cast<Vertex>(to), EdgeProp{l}, g);
    if (l != kAttach) impl->ends[l] = {static_cast<Vertex>(from), static_cast<Vertex>(to)};
  };
  for (int n = 0; n < nodes_; ++n) {
    const std::size_t vbase = static_cast<std::size_t>(n) * nf.vertices;
    const std::size_t lbase = static_cast<std::size_t>(n) * links_per_node_;
    for (std::size_t k = 0; k < nf.links.size(); ++k)
      add(vbase + nf.links[k].from, vbase + nf.links[k].to, static_cast<LinkId>(lbase + k));
    for (int local = 0; local < per_node_; ++local) {
      const std::size_t nic_v = impl->nic_vertex_base + static_cast<std::size_t>(n * nics_ + nic_in_node(local));
      add(vbase + static_cast<std::size_t>(local), nic_v, kAttach);
      add(nic_v, vbase + static_cast<std::size_t>(local), kAttach);
    }
  }
  for (std::size_t nic = 0; nic < total_nics; ++nic) {
    const std::size_t leaf_v = impl->leaf_vertex_base + static_cast<std::size_t>(leaf_of_nic(static_cast<int>(nic)));
    add(impl->nic_vertex_base + nic, leaf_v, static_cast<LinkId>(nic_base_ + 2 * nic));
    add(leaf_v, impl->nic_vertex_base + nic, static_cast<LinkId>(nic_base_ + 2 * nic + 1));
  }
  for (std::size_t si = 0; si < sites_.size(); ++si) {
    const std::size_t core_v = impl->core_vertex_base + si;
    for (int leaf = sites_[si].first_leaf; leaf < sites_[si].first_leaf + sites_[si].leaves; ++leaf) {
      const std::size_t leaf_v = impl->leaf_vertex_base + static_cast<std::size_t>(leaf);
      add(leaf_v, core_v, leaf_up(leaf));
      add(core_v, leaf_v, leaf_down(leaf));
    }
  }
  for (std::size_t i = 0; i < spec_.wan.size(); ++i) {
    const std::size_t a = impl->core_vertex_base + static_cast<std::size_t>(spec_.wan[i].a);
    const std::size_t b = impl->core_vertex_base + static_cast<std::size_t>(spec_.wan[i].b);
    add(a, b, wan_base_ + 2 * static_cast<LinkId>(i));
    add(b, a, wan_base_ + 2 * static_cast<LinkId>(i) + 1);
  }
  return impl;
}

void Topology::route_sites() {
  const std::size_t n = sites_.size();
  site_routes_.assign(n * n, {});
  if (n == 1) return;
  // The site graph: one vertex per site, an edge per WAN direction weighted by its latency. Equal
  // latencies are broken by fewer hops (a picosecond per hop), so the choice never depends on the
  // order the links were listed in beyond Boost's own deterministic order.
  using SiteGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                          boost::property<boost::edge_weight_t, double, EdgeProp>>;
  SiteGraph g(n);
  for (std::size_t i = 0; i < spec_.wan.size(); ++i) {
    const double w = links_[wan_base_ + 2 * i].latency.value() + 1e-12;
    const auto a = static_cast<std::size_t>(spec_.wan[i].a), b = static_cast<std::size_t>(spec_.wan[i].b);
    boost::add_edge(a, b, boost::property<boost::edge_weight_t, double, EdgeProp>(w, EdgeProp{wan_base_ + 2 * static_cast<LinkId>(i)}), g);
    boost::add_edge(b, a, boost::property<boost::edge_weight_t, double, EdgeProp>(w, EdgeProp{wan_base_ + 2 * static_cast<LinkId>(i) + 1}), g);
  }
  std::vector<std::size_t> pred(n);
  std::vector<double> dist(n);
  for (std::size_t src = 0; src < n; ++src) {
    boost::dijkstra_shortest_paths(g, src, boost::predecessor_map(pred.data()).distance_map(dist.data()));
    for (std::size_t dst = 0; dst < n; ++dst) {
      if (dst == src) continue;
      if (pred[dst] == dst)
        spec_error(spec_, "wan", fmt::format("no chain of WAN links joins sites '{}' and '{}'", sites_[src].name, sites_[dst].name));
      std::vector<LinkId> chain;
      for (std::size_t v = dst; v != src; v = pred[v]) {
        const auto [e, found] = boost::edge(pred[v], v, g);
        core::check_invariant(found, "a Dijkstra predecessor is joined to its vertex");
        chain.push_back(g[e].link);
      }
      std::reverse(chain.begin(), chain.end());
      if (chain.size() + 4 > static_cast<std::size_t>(Path::kMax))
        spec_error(spec_, "wan",
                   fmt::format("the route from site '{}' to '{}' crosses {} WAN links; at most {} are supported",
                               sites_[src].name, sites_[dst].name, chain.size(), Path::kMax - 4));
      site_routes_[src * n + dst] = std::move(chain);
    }
  }
}

int Topology::leaf_of_nic(int nic) const {
  const int node = nic / nics_;
  const Site& site = sites_[site_of_node_[static_cast<std::size_t>(node)]];
  const int group = (node - site.first_node) / site.fabric.nodes_per_leaf;
  return site.first_leaf + (site.fabric.rail_optimized ? group * nics_ + nic % nics_ : group);
}

const WanLinkSpec& Topology::wan_link(LinkId l) const {
  core::check_invariant(l >= wan_base_ && l < links_.size(), "wan_link needs a WAN link id");
  return spec_.wan[(l - wan_base_) / 2];
}

core::Bandwidth Topology::transport_limit(LinkId l) const {
  core::check_invariant(l >= wan_base_ && l < links_.size(), "transport_limit needs a WAN link id");
  return wan_limits_[(l - wan_base_) / 2];
}

core::Bandwidth Topology::site_injection(int site) const {
  const Site& s = sites_[static_cast<std::size_t>(site)];
  return s.fabric.nic_bandwidth * (static_cast<double>(s.nodes) * nics_ * s.fabric.efficiency);
}

int Topology::switches_crossed(DeviceId a, DeviceId b) const {
  if (node_of(a) == node_of(b)) return 0;
  if (site_of(a) != site_of(b)) return 4;
  return leaf_of_nic(nic_of(a)) == leaf_of_nic(nic_of(b)) ? 1 : 3;
}

Path Topology::route(DeviceId a, DeviceId b) const {
  core::check_invariant(a >= 0 && a < devices() && b >= 0 && b < devices(), "route endpoints must be devices of the topology");
  Path p;
  if (a == b) return p;
  const int na = node_of(a), nb = node_of(b);
  if (na == nb) {
    const auto idx = static_cast<std::size_t>(local_index(a) * per_node_ + local_index(b));
    const LinkId base = static_cast<LinkId>(na) * links_per_node_;
    for (std::uint32_t i = intra_begin_[idx]; i < intra_begin_[idx + 1]; ++i) p.links[p.size++] = base + intra_links_[i];
    p.latency = core::Seconds(intra_latency_[idx]);
    return p;
  }
  const int nic_a = nic_of(a), nic_b = nic_of(b);
  const int leaf_a = leaf_of_nic(nic_a), leaf_b = leaf_of_nic(nic_b);
  const int sa = site_of_node(na), sb = site_of_node(nb);
  const ScaleOutFabric& fa = sites_[static_cast<std::size_t>(sa)].fabric;
  const ScaleOutFabric& fb = sites_[static_cast<std::size_t>(sb)].fabric;
  p.links[p.size++] = nic_base_ + 2 * static_cast<LinkId>(nic_a);
  double latency = fa.nic_latency.value();
  if (sa != sb) {
    // Leaf and core on each side; the WAN links carry their own latency.
    p.links[p.size++] = leaf_up(leaf_a);
    for (LinkId l : wan_route(sa, sb)) p.links[p.size++] = l;
    p.links[p.size++] = leaf_down(leaf_b);
    latency += 2 * fa.switch_latency.value() + 2 * fb.switch_latency.value();
  } else if (leaf_a != leaf_b) {
    p.links[p.size++] = leaf_up(leaf_a);
    p.links[p.size++] = leaf_down(leaf_b);
    latency += 3 * fa.switch_latency.value();
  } else {
    latency += fa.switch_latency.value();
  }
  p.links[p.size++] = nic_base_ + 2 * static_cast<LinkId>(nic_b) + 1;
  for (std::uint8_t i = 0; i < p.size; ++i) latency += links_[p.links[i]].latency.value();
  p.latency = core::Seconds(latency);
  return p;
}

std::string Topology::link_name(LinkId l) const {
  core::check_invariant(l < links_.size(), "link id must index links()");
  const ClusterGraph& cg = cluster_graph();
  const auto& [from, to] = cg.ends[l];
  return cg.vertex_name(from) + "->" + cg.vertex_name(to);
}

std::size_t Topology::graph_vertices() const { return boost::num_vertices(cluster_graph().graph); }
std::size_t Topology::graph_edges() const { return boost::num_edges(cluster_graph().graph); }

}  // namespace inflect::net
