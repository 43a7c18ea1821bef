#pragma once
// The cluster's links as a Boost.Graph, and routes between devices over them.
//
// Vertices are devices, node switches, NICs, leaf groups and the spine core; edges are directed
// links with a capacity and a latency. Intra-node routes come from Boost BFS on one node's fabric
// (computed once per node type); inter-node routes are composed: source device -> its rail NIC ->
// leaf -> (spine core if the leaf differs) -> leaf -> NIC -> destination. Spines are aggregated
// into one core stage whose per-leaf uplink capacity is the leaf's down capacity divided by the
// oversubscription: ECMP is taken as perfectly balanced at flow level (documented in
// docs/architecture.md).
//
// A geo-distributed cluster (TopologySpec::sites) is several such fabrics, one per site, each with
// its own leaves and core, over contiguous blocks of nodes; WAN links join the sites' cores. A route
// between sites goes NIC -> leaf -> its site's core -> the WAN links of the least-latency chain of
// sites (Boost Dijkstra on the site graph, computed once) -> the other site's core -> leaf -> NIC.
// A cluster without sites is one site.
//
// Link ids are laid out in blocks, so that route() is arithmetic plus one table lookup:
//   [0, nodes * links_per_node)         scale-up links, node after node (same order in every node)
//   [nic_base, nic_base + 2 * NICs)     NIC up (TX, NIC -> leaf) then down (RX, leaf -> NIC), per NIC
//   [leaf_base, leaf_base + 2 * leaves) leaf up (leaf -> core) then down (core -> leaf), per leaf,
//                                       site after site
//   [wan_base, wan_base + 2 * WAN)      per WAN link: a -> b, then b -> a
// Device -> NIC attachment (GPUDirect over PCIe) is a graph edge but not a capacity-limited link.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inflect/core/units.hpp"
#include "inflect/net/topology_spec.hpp"

namespace inflect::net {

struct ClusterGraph;  // src/net/topology.cpp

/// Dense index into Topology::links().
using LinkId = std::uint32_t;
/// Global device index: node * devices_per_node + local index.
using DeviceId = std::int32_t;

enum class LinkClass : unsigned char { scale_up, nic_up, nic_down, leaf_up, leaf_down, wan };

/// "scale_up", "nic_up", ... for reports and messages.
const char* to_string(LinkClass c);

/// One direction of a physical link.
struct Link {
  core::Bandwidth capacity;  // effective (raw * efficiency), per direction, bytes/s
  core::Seconds latency;     // scale-up: per hop; WAN: one way; scale-out links carry none (see Path::latency)
  LinkClass cls = LinkClass::scale_up;
};

/// A route: the links crossed in order. Fixed capacity so routing never allocates.
struct Path {
  static constexpr int kMax = 12;
  std::array<LinkId, kMax> links{};
  std::uint8_t size = 0;
  /// Sum of link latencies (a WAN link's is its one-way latency), plus the NIC latency once when
  /// the route leaves the node, plus one switch latency per scale-out switch crossed (1 under one
  /// leaf, 3 through the core, 4 between sites: leaf and core on each side).
  core::Seconds latency;
};

class Topology {
 public:
  /// Builds `nodes` copies of the spec's node and the scale-out fabric joining them (one per site
  /// and the WAN links, when the spec has sites: their nodes must sum to `nodes`).
  /// Throws core::Error(input) when nodes < 1, when the spec is inconsistent (bad counts, mesh link
  /// out of range, disconnected mesh, sites no WAN chain joins) or when a route would exceed
  /// Path::kMax links.
  Topology(const TopologySpec& spec, int nodes);

  int devices() const { return nodes_ * per_node_; }
  int nodes() const { return nodes_; }
  int devices_per_node() const { return per_node_; }
  int node_of(DeviceId d) const { return d / per_node_; }
  int local_index(DeviceId d) const { return d % per_node_; }
  const std::vector<Link>& links() const { return links_; }
  const TopologySpec& spec() const { return spec_; }
  /// The route from a to b (a != b, both in [0, devices())). Deterministic; cheap (no allocation,
  /// O(path length)). a == b gives an empty path with zero latency.
  Path route(DeviceId a, DeviceId b) const;

  /// NIC index within the node used by local device `local`: local * nics / devices_per_node.
  int nic_in_node(int local) const { return local * nics_ / per_node_; }
  /// Global NIC index of device d (node * nics_per_node + nic_in_node).
  int nic_of(DeviceId d) const { return node_of(d) * nics_ + nic_in_node(local_index(d)); }
  /// Leaf group of a global NIC: its site's first leaf plus, rail-optimized, (local node /
  /// nodes_per_leaf) * nics + rail, else local node / nodes_per_leaf (local: within the site).
  int leaf_of_nic(int nic) const;

  /// Sites (1 for a cluster without `sites`), the site of a node or device, and its name ("" for
  /// a cluster without sites).
  int sites() const { return static_cast<int>(sites_.size()); }
  int site_of_node(int node) const { return site_of_node_[static_cast<std::size_t>(node)]; }
  int site_of(DeviceId d) const { return site_of_node(node_of(d)); }
  const std::string& site_name(int site) const { return sites_[static_cast<std::size_t>(site)].name; }
  /// Whether the devices (any integer ids) lie in more than one site.
  template <class Ids>
  bool spans_sites(const Ids& ids) const {
    if (sites() == 1 || ids.empty()) return false;
    const int first = site_of(static_cast<DeviceId>(*ids.begin()));
    for (const auto d : ids)
      if (site_of(static_cast<DeviceId>(d)) != first) return true;
    return false;
  }
  /// The scale-out fabric of a node's site.
  const ScaleOutFabric& scale_out_of_node(int node) const {
    return sites_[static_cast<std::size_t>(site_of_node(node))].fabric;
  }
  /// The WAN links a transfer from site a to site b crosses, in order (empty when a == b).
  const std::vector<LinkId>& wan_route(int a, int b) const {
    return site_routes_[static_cast<std::size_t>(a) * sites_.size() + static_cast<std::size_t>(b)];
  }
  /// A WAN link's transport and loss (l must be a WAN link: links()[l].cls == LinkClass::wan).
  const WanLinkSpec& wan_link(LinkId l) const;
  /// The most one transfer moves across WAN link l (its transport's limit; infinity for ideal).
  core::Bandwidth transport_limit(LinkId l) const;
  /// Number of leaf groups (each with one up and one down link to the core).
  int leaf_groups() const { return leaf_groups_; }
  /// The scale-out link ids of a global NIC (TX toward its leaf, RX from it) and of a leaf group
  /// (up to the core, down from it): for traffic that ends in a switch (in-network reduction).
  LinkId nic_tx(int nic) const { return nic_base_ + 2 * static_cast<LinkId>(nic); }
  LinkId nic_rx(int nic) const { return nic_base_ + 2 * static_cast<LinkId>(nic) + 1; }
  LinkId leaf_up(int leaf) const { return leaf_base_ + 2 * static_cast<LinkId>(leaf); }
  LinkId leaf_down(int leaf) const { return leaf_base_ + 2 * static_cast<LinkId>(leaf) + 1; }
  /// Scale-out switches crossed from a to b: 0 within a node, 1 under one leaf, 3 via the core,
  /// 4 between sites (leaf and core on each side; the WAN links' own latency is theirs).
  int switches_crossed(DeviceId a, DeviceId b) const;
  /// Human-readable endpoints from the graph, e.g. "n1.gpu3->n1.switch" or "leaf2->core".
  std::string link_name(LinkId l) const;
  /// Aggregate bytes per second of every NIC of a site (per direction, at the fabric's efficiency).
  core::Bandwidth site_injection(int site) const;
  /// Vertices and edges of the whole-cluster Boost graph (edges include device->NIC attachments).
  std::size_t graph_vertices() const;
  std::size_t graph_edges() const;

 private:
  struct Impl;
  const ClusterGraph& cluster_graph() const;
  std::unique_ptr<ClusterGraph> build_cluster_graph() const;
  /// Fills site_routes_: the least-latency chain of WAN links between every two sites.
  void route_sites();
  TopologySpec spec_;
  int nodes_ = 0;
  int per_node_ = 0;
  int nics_ = 0;
  std::vector<Link> links_;
  // Intra-node routes by (local a, local b): offsets into intra_links_ (relative link ids within a
  // node's block) computed with Boost BFS on one node's fabric graph.
  std::vector<std::uint32_t> intra_begin_;
  std::vector<std::uint32_t> intra_links_;
  std::vector<double> intra_latency_;
  std::uint32_t links_per_node_ = 0;   // scale-up links of one node, laid out node after node
  std::uint32_t nic_base_ = 0;         // first NIC link id
  std::uint32_t leaf_base_ = 0;        // first leaf up/down link id
  int leaf_groups_ = 0;
  /// One site's block of nodes and leaves, and its fabric's figures.
  struct Site {
    std::string name;
    ScaleOutFabric fabric;
    int first_node = 0, nodes = 0;
    int first_leaf = 0, leaves = 0;
  };
  std::vector<Site> sites_;
  std::vector<std::uint16_t> site_of_node_;
  std::uint32_t wan_base_ = 0;                     // first WAN link id
  std::vector<std::vector<LinkId>> site_routes_;   // by (a, b): the WAN links crossed
  std::vector<core::Bandwidth> wan_limits_;        // per WAN link (both directions): its transport's limit
  // The whole-cluster graph, built on first use (thread-safe); copies share it.
  std::shared_ptr<Impl> impl_;
};

}  // namespace inflect::net
