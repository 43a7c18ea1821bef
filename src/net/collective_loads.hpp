#pragma once
// The bytes each collective algorithm puts on the links, for one collective (collective.hpp's
// header says what each algorithm moves). Private to the net layer.
#include <optional>
#include <span>
#include <vector>

#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"

namespace inflect::net::loads {

/// Accumulates bytes per link for one phase, then emits them sorted. Loads add up in a dense
/// per-link array (one per thread, sized to the topology) and only the links touched are sorted:
/// a 128-rank ring over a 16k-GPU fabric touches ~500 links, and is lowered hundreds of times.
/// Also keeps the longest route latency inside a node, across nodes of a site and between sites:
/// a step of the algorithm takes at least that long, whatever the library's figure.
class PhaseBuilder {
 public:
  explicit PhaseBuilder(const Topology& topo);
  PhaseBuilder(const PhaseBuilder&) = delete;
  PhaseBuilder& operator=(const PhaseBuilder&) = delete;
  void add_route(DeviceId a, DeviceId b, double bytes);
  /// Bytes on one link, for traffic that ends in a switch; `latency` is that hop's.
  void add_link(LinkId l, double bytes, double latency);
  double intra_route_latency() const { return intra_latency_; }
  double inter_route_latency() const { return inter_latency_; }
  double wan_route_latency() const { return wan_latency_; }
  /// The phase, every link's bytes divided by `wire_factor` (payload per wire byte); resets.
  TransferPhase finish(double wire_factor);

 private:
  const Topology& topo_;
  double intra_latency_ = 0;
  double inter_latency_ = 0;
  double wan_latency_ = 0;
};

/// The members grouped by node, group order kept, the nodes of one site together (in the order
/// their sites first appear): rings and chains then cross each WAN boundary once per direction.
struct Layout {
  bool uniform = false;  // every node of the group holds the same number of members
  int nodes = 0;
  int sites = 1;         // sites the group spans
  int per_node = 0;      // members in the first node (all nodes when uniform)
  std::vector<std::vector<DeviceId>> by_node;
};
Layout layout_of(std::span<const DeviceId> members, const Topology& topo);

/// The ring orders (local indices) a group of k on one node runs: one on a switch, where every ring
/// crosses the same ports; on a full mesh, Walecki's edge-disjoint Hamiltonian cycles both ways
/// (every link but a perfect matching); on a partial mesh, rings of every stride coprime with k.
std::vector<std::vector<int>> ring_orders(const Topology& topo, int k);

/// A rooted collective's chain along a ring (NCCL's broadcast and reduce): the ring without the
/// edge into the root (a broadcast starts there) or out of it (a reduce ends there). In a channel
/// whose edge crosses nodes through PXN, both of its routes are left out.
struct RingCut {
  DeviceId root = 0;
  bool into = true;  // true: the edge whose destination is the root; false: whose source is
  bool cuts(DeviceId from, DeviceId to) const { return into ? to == root : from == root; }
};

/// Rings carrying `per_edge` bytes on every edge in total, spread over channels (see collective.hpp);
/// with a cut, every edge but the cut one of each channel's ring.
void ring(PhaseBuilder& b, const Layout& l, std::span<const DeviceId> members, double per_edge, const Topology& topo,
          std::optional<RingCut> cut = std::nullopt);
/// Double binary trees across nodes, chains inside them: all-reduce of n bytes.
void tree(PhaseBuilder& b, const Layout& l, double n);
/// NVLS inside each node of the layout: n (k+1)/k each way per port, times `scale`.
void nvls(PhaseBuilder& b, const Layout& l, double n, double scale);
/// Per rail, double binary trees across nodes between that rail's members, on `per_rail` bytes.
void rail_trees(PhaseBuilder& b, const Layout& l, double per_rail);
/// In-network reduction across nodes: per rail, each node's member sends `per_rail` bytes to its
/// leaf and receives the result; each leaf group with members sends one aggregate up to the core
/// and receives one back when the group spans several leaves.
void in_network(PhaseBuilder& b, const Layout& l, double per_rail, const Topology& topo);
/// Every ordered pair of members exchanges `per_pair` bytes directly.
void direct(PhaseBuilder& b, std::span<const DeviceId> members, double per_pair);

}  // namespace inflect::net::loads
