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
// Link ids are laid out in blocks, so that route() is arithmetic plus one table lookup:
//   [0, nodes * links_per_node)         scale-up links, node after node (same order in every node)
//   [nic_base, nic_base + 2 * NICs)     NIC up (TX, NIC -> leaf) then down (RX, leaf -> NIC), per NIC
//   [leaf_base, leaf_base + 2 * leaves) leaf up (leaf -> core) then down (core -> leaf), per leaf
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

enum class LinkClass : unsigned char { scale_up, nic_up, nic_down, leaf_up, leaf_down };

/// "scale_up", "nic_up", ... for reports and messages.
const char* to_string(LinkClass c);

/// One direction of a physical link.
struct Link {
  core::Bandwidth capacity;  // effective (raw * efficiency), per direction, bytes/s
  core::Seconds latency;     // scale-up: per hop; scale-out links carry none (see Path::latency)
  LinkClass cls = LinkClass::scale_up;
};

/// A route: the links crossed in order. Fixed capacity so routing never allocates.
struct Path {
  static constexpr int kMax = 12;
  std::array<LinkId, kMax> links{};
  std::uint8_t size = 0;
  /// Sum of link latencies, plus the NIC latency once when the route leaves the node, plus one
  /// switch latency per scale-out switch crossed (1 under one leaf, 3 through the core).
  core::Seconds latency;
};

class Topology {
 public:
  /// Builds `nodes` copies of the spec's node and the scale-out fabric joining them.
  /// Throws core::Error(input) when nodes < 1, when the spec is inconsistent (bad counts, mesh link
  /// out of range, disconnected mesh) or when an intra-node route would exceed Path::kMax links.
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
  /// Leaf group of a global NIC: rail-optimized (node / nodes_per_leaf) * nics + rail, else
  /// node / nodes_per_leaf.
  int leaf_of_nic(int nic) const;
  /// Number of leaf groups (each with one up and one down link to the core).
  int leaf_groups() const { return leaf_groups_; }
  /// The scale-out link ids of a global NIC (TX toward its leaf, RX from it) and of a leaf group
  /// (up to the core, down from it): for traffic that ends in a switch (in-network reduction).
  LinkId nic_tx(int nic) const { return nic_base_ + 2 * static_cast<LinkId>(nic); }
  LinkId nic_rx(int nic) const { return nic_base_ + 2 * static_cast<LinkId>(nic) + 1; }
  LinkId leaf_up(int leaf) const { return leaf_base_ + 2 * static_cast<LinkId>(leaf); }
  LinkId leaf_down(int leaf) const { return leaf_base_ + 2 * static_cast<LinkId>(leaf) + 1; }
  /// Scale-out switches crossed from a to b: 0 within a node, 1 under one leaf, 3 via the core.
  int switches_crossed(DeviceId a, DeviceId b) const;
  /// Human-readable endpoints from the graph, e.g. "n1.gpu3->n1.switch" or "leaf2->core".
  std::string link_name(LinkId l) const;
  /// Vertices and edges of the whole-cluster Boost graph (edges include device->NIC attachments).
  std::size_t graph_vertices() const;
  std::size_t graph_edges() const;

 private:
  struct Impl;
  const ClusterGraph& cluster_graph() const;
  std::unique_ptr<ClusterGraph> build_cluster_graph() const;
  TopologySpec spec_;
  int nodes_ = 0;
  int per_node_ = 0;
  int nics_ = 0;
  int nodes_per_leaf_ = 1;
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
  double nic_latency_ = 0;             // seconds, once per route leaving the node
  double switch_latency_ = 0;          // seconds, per scale-out switch crossed
  // The whole-cluster graph, built on first use (thread-safe); copies share it.
  std::shared_ptr<Impl> impl_;
};

}  // namespace inflect::net
