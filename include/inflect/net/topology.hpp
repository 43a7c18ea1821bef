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
#include <array>
#include <cstdint>
#include <vector>

#include "inflect/core/units.hpp"
#include "inflect/net/topology_spec.hpp"

namespace inflect::net {

using LinkId = std::uint32_t;
using DeviceId = std::int32_t;

enum class LinkClass : unsigned char { scale_up, nic_up, nic_down, leaf_up, leaf_down };

struct Link {
  core::Bandwidth capacity;  // effective (raw * efficiency), per direction
  core::Seconds latency;
  LinkClass cls = LinkClass::scale_up;
};

/// A route: the links crossed in order. Fixed capacity so routing never allocates.
struct Path {
  static constexpr int kMax = 12;
  std::array<LinkId, kMax> links{};
  std::uint8_t size = 0;
  core::Seconds latency;  // sum of link latencies plus NIC latency when it leaves the node
};

class Topology {
 public:
  Topology(const TopologySpec& spec, int nodes);
  int devices() const { return nodes_ * per_node_; }
  int nodes() const { return nodes_; }
  int devices_per_node() const { return per_node_; }
  int node_of(DeviceId d) const { return d / per_node_; }
  int local_index(DeviceId d) const { return d % per_node_; }
  const std::vector<Link>& links() const { return links_; }
  const TopologySpec& spec() const { return spec_; }
  /// The route from a to b (a != b). Deterministic; cheap (no allocation, O(path length)).
  Path route(DeviceId a, DeviceId b) const;

 private:
  struct Impl;
  TopologySpec spec_;
  int nodes_ = 0;
  int per_node_ = 0;
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
};

}  // namespace inflect::net
