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

void check_spec(const TopologySpec& spec, int nodes) {
  if (nodes < 1) spec_error(spec, "nodes", fmt::format("a cluster needs at least 1 node, got {}", nodes));
  const int d = spec.devices_per_node;
  if (d < 1) spec_error(spec, "devices_per_node", fmt::format("must be at least 1, got {}", d));
  const ScaleOutFabric& s = spec.scale_out;
  if (s.nics_per_node < 1 || s.nics_per_node > d)
    spec_error(spec, "scale_out.nics_per_node",
               fmt::format("{} is out of range; allowed: 1 to {} (devices_per_node): each device sends through one NIC",
                           s.nics_per_node, d));
  if (!(s.nic_bandwidth.value() > 0))
    spec_error(spec, "scale_out.nic_bandwidth", fmt::format("must be positive, got {} B/s", s.nic_bandwidth.value()));
  if (s.nodes_per_leaf < 1)
    spec_error(spec, "scale_out.nodes_per_leaf", fmt::format("must be at least 1, got {}", s.nodes_per_leaf));
  if (!(s.oversubscription >= 1))
    spec_error(spec, "scale_out.oversubscription",
               fmt::format("{} is out of range; allowed: 1 (full bisection) or more", s.oversubscription));
  if (!(s.efficiency > 0 && s.efficiency <= 1))
    spec_error(spec, "scale_out.efficiency", fmt::format("{} is out of range; allowed: (0, 1]", s.efficiency));
  if (!(spec.intra.efficiency > 0 && spec.intra.efficiency <= 1))
    spec_error(spec, "intra.efficiency", fmt::format("{} is out of range; allowed: (0, 1]", spec.intra.efficiency));
  if (spec.intra.hop_latency.value() < 0 || s.nic_latency.value() < 0 || s.switch_latency.value() < 0)
    spec_error(spec, "latency", "latencies must not be negative");
}

}  // namespace

const char* to_string(LinkClass c) {
  switch (c) {
    case LinkClass::scale_up: return "scale_up";
    case LinkClass::nic_up: return "nic_up";
    case LinkClass::nic_down: return "nic_down";
    case LinkClass::leaf_up: return "leaf_up";
    case LinkClass::leaf_down: return "leaf_down";
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
  std::size_t core_vertex = 0;
  int per_node = 0;
  int nics = 0;
  bool switched = false;

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
    if (v < core_vertex) return fmt::format("leaf{}", v - leaf_vertex_base);
    return "core";
  }
};

Topology::Topology(const TopologySpec& spec, int nodes) : spec_(spec), nodes_(nodes), per_node_(spec.devices_per_node) {
  check_spec(spec_, nodes);
  const ScaleOutFabric& so = spec_.scale_out;
  nics_ = so.nics_per_node;
  nodes_per_leaf_ = so.nodes_per_leaf;
  nic_latency_ = so.nic_latency.value();
  switch_latency_ = so.switch_latency.value();

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
  const int groups = (nodes_ + nodes_per_leaf_ - 1) / nodes_per_leaf_;
  leaf_groups_ = so.rail_optimized ? groups * nics_ : groups;
  links_.reserve(static_cast<std::size_t>(nodes_) * links_per_node_ + 2 * total_nics +
                 2 * static_cast<std::size_t>(leaf_groups_));
  for (int n = 0; n < nodes_; ++n)
    for (const LocalLink& l : nf.links)
      links_.push_back({core::Bandwidth(l.raw_bandwidth * intra_eff), core::Seconds(l.latency), LinkClass::scale_up});
  nic_base_ = static_cast<std::uint32_t>(links_.size());
  const core::Bandwidth nic_cap = so.nic_bandwidth * so.efficiency;
  for (std::size_t i = 0; i < total_nics; ++i) {
    links_.push_back({nic_cap, core::Seconds(0), LinkClass::nic_up});
    links_.push_back({nic_cap, core::Seconds(0), LinkClass::nic_down});
  }
  leaf_base_ = static_cast<std::uint32_t>(links_.size());
  for (int leaf = 0; leaf < leaf_groups_; ++leaf) {
    // The last group may be partial: only NICs actually cabled to a leaf count towards its uplink.
    const int group = so.rail_optimized ? leaf / nics_ : leaf;
    const int nodes_here = std::min(nodes_per_leaf_, nodes_ - group * nodes_per_leaf_);
    const int nics_under = so.rail_optimized ? nodes_here : nodes_here * nics_;
    const core::Bandwidth cap = so.nic_bandwidth * (static_cast<double>(nics_under) / so.oversubscription * so.efficiency);
    links_.push_back({cap, core::Seconds(0), LinkClass::leaf_up});
    links_.push_back({cap, core::Seconds(0), LinkClass::leaf_down});
  }

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
  // --- The whole-cluster graph: per-node fabrics, NICs, leaves and the aggregated core.
  auto impl = std::make_unique<ClusterGraph>();
  impl->per_node = per_node_;
  impl->nics = nics_;
  impl->switched = spec_.intra.kind == IntraFabricKind::switched;
  impl->per_node_vertices = nf.vertices;
  impl->nic_vertex_base = static_cast<std::size_t>(nodes_) * nf.vertices;
  impl->leaf_vertex_base = impl->nic_vertex_base + total_nics;
  impl->core_vertex = impl->leaf_vertex_base + static_cast<std::size_t>(leaf_groups_);
  Graph& g = impl->graph;
  g = Graph(impl->core_vertex + 1);
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
  for (int leaf = 0; leaf < leaf_groups_; ++leaf) {
    const std::size_t leaf_v = impl->leaf_vertex_base + static_cast<std::size_t>(leaf);
    add(leaf_v, impl->core_vertex, static_cast<LinkId>(leaf_base_ + 2 * static_cast<std::uint32_t>(leaf)));
    add(impl->core_vertex, leaf_v, static_cast<LinkId>(leaf_base_ + 2 * static_cast<std::uint32_t>(leaf) + 1));
  }
  return impl;
}

int Topology::leaf_of_nic(int nic) const {
  const int node = nic / nics_;
  const int group = node / nodes_per_leaf_;
  return spec_.scale_out.rail_optimized ? group * nics_ + nic % nics_ : group;
}

int Topology::switches_crossed(DeviceId a, DeviceId b) const {
  if (node_of(a) == node_of(b)) return 0;
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
  p.links[p.size++] = nic_base_ + 2 * static_cast<LinkId>(nic_a);
  int switches = 1;
  if (leaf_a != leaf_b) {
    p.links[p.size++] = leaf_base_ + 2 * static_cast<LinkId>(leaf_a);
    p.links[p.size++] = leaf_base_ + 2 * static_cast<LinkId>(leaf_b) + 1;
    switches = 3;
  }
  p.links[p.size++] = nic_base_ + 2 * static_cast<LinkId>(nic_b) + 1;
  double latency = nic_latency_ + switches * switch_latency_;
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
