#pragma once
// Collectives as NCCL and RCCL run them, lowered to transfers on the flow network.
//
// Each algorithm (collective_library.hpp) becomes the bytes it puts on every link it crosses:
//   ring      one ring per channel: through the members of each node in turn, then to the next
//             node on the channel's rail (the last device hands its data to the rail's device over
//             NVLink first, as NCCL's PXN does), one channel per rail so that every NIC carries
//             1/k of the traffic; on a full mesh, Walecki's edge-disjoint Hamiltonian cycles both
//             ways (all links but a perfect matching), on a partial mesh rings of several strides.
//             All-reduce 2(p-1)/p n per ring edge; RS/AG (p-1)/p S. Broadcast and reduce (NCCL runs
//             them on rings only): a chain along each channel's ring from the root (broadcast) or to
//             it (reduce), n on every ring edge but the one into (out of) the root; p - 1 steps and,
//             being a chain from one source, a pipeline fill under Simple.
//   tree      NCCL's double binary tree across nodes (two trees, half the data each, one channel per
//             rail), a chain through each node's members: n up and n down per chain edge.
//   nvls      the NVSwitch reduces: each device sends n and its reduced n/k share, and receives
//             its share and the multicast n: n (k+1)/k each way per port, at the topology's NVLS
//             efficiency.
//   nvls_tree nvls inside each node, then per rail a double binary tree across nodes on n/k.
//   pat       all-gather / reduce-scatter with one device per node: (p-1)/p S per device, log steps.
//   collnet   in-network reduction (SHARP, where the fabric declares it): a direct exchange inside
//             nodes, n/k into the switch and back per NIC, one aggregate per leaf to the core.
//   direct    a full mesh: every member sends its 1/p share to every other over their own link
//             (twice for all-reduce: reduce-scatter then all-gather, pipelined).
//   pairwise  all-to-all: n/p from every rank to every other at once (incast on the receiving NICs).
//   p2p       send/recv: one route.
// Each is pipelined (a chunk leaves a device as soon as it arrives), so its phases are one
// transfer bounded by its slowest link. Its time (collective_library.hpp) is the library's base
// latency, its steps' latency P, the bottleneck's wire time x and, for Simple, the pipeline's fill
// 2 sqrt(P x). Among the algorithms and protocols valid for the group and allowed by the
// library and the tuning, the lowering picks the one with the least time (NCCL's tuning model does
// the same with its own figures); ties go to the order of the Algorithm and Protocol enums.
// Bus bandwidth follows nccl-tests: busbw = algbw * factor (all-reduce 2(p-1)/p; RS, AG, all-to-all
// (p-1)/p; send/recv, broadcast, reduce 1).
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "inflect/core/units.hpp"
#include "inflect/net/collective_library.hpp"
#include "inflect/net/topology.hpp"

namespace inflect::net {

const char* to_string(CollectiveOp op);

/// One phase: bytes per link on the wire (each link at most once, sorted by id) and its latency.
struct TransferPhase {
  std::vector<std::pair<LinkId, double>> link_bytes;
  double max_link_bytes = 0;  // the largest entry: the transfer's reference size
  core::Seconds latency;
  /// The most the transfer's rate may be, in bytes of its reference size per second: the WAN
  /// transports it crosses (Topology::transport_limit) scaled by its bytes there; infinity without.
  double rate_bound = std::numeric_limits<double>::infinity();
};

struct LoweredCollective {
  std::vector<TransferPhase> phases;
  const char* algorithm = "none";  // to_string(Algorithm), "hierarchical", or "none" for a group of one
  const char* protocol = "none";
  /// Lowered in its hierarchical form across sites (cross_site.hpp): reduce-scatter inside each
  /// site, all-reduce across, all-gather inside, each part with its own algorithm.
  bool hierarchical = false;
};

struct CollectiveTuning {
  /// Fixed software cost per collective call on top of the library's base latency (a framework's
  /// launch overhead, say); the topology's optional `collective_overhead`.
  core::Seconds software_overhead = core::Seconds(0);
  /// Restrict the choice to one algorithm or one protocol (the topology's `collectives:` section, or
  /// a profile); none = the library's choice. An algorithm not valid for a group is an input error.
  std::optional<Algorithm> algorithm;
  std::optional<Protocol> protocol;
  CrossSite cross_site = CrossSite::automatic;

  /// What the topology (and an experiment's override, which the loader puts there) asks for: its
  /// `collective_overhead` and `collectives.algorithm` / `.protocol`.
  static CollectiveTuning of(const TopologySpec& spec) {
    CollectiveTuning t;
    t.software_overhead = spec.collective_overhead;
    t.algorithm = spec.collectives.algorithm;
    t.protocol = spec.collectives.protocol;
    t.cross_site = spec.collectives.cross_site;
    return t;
  }
};

/// Lowers a collective over `members` (device ids, the group's order) moving `bytes` with
/// nccl-tests' meaning of size (all-reduce: the buffer; RS/AG: the whole gathered buffer S;
/// all-to-all: each rank's send buffer; send_recv: the message, members[0] -> members[1];
/// broadcast and reduce: the buffer n, the root being members[0] — it sends n to every other
/// member, or receives the sum of every member's n).
/// The library is the topology's (TopologySpec::collectives).
LoweredCollective lower_collective(CollectiveOp op, std::span<const DeviceId> members, core::Bytes bytes,
                                   const Topology& topo, const CollectiveTuning& tuning = {});

/// The uncontended time of a lowered collective: sum over phases of latency + the longer of its
/// bottleneck link's time and its bytes at its rate bound.
core::Seconds estimate_time(const LoweredCollective& c, const Topology& topo);

/// The uncontended time of a collective over one group as a function of its size, without
/// lowering each size: every algorithm's loads are proportional to the size, so one lowering per
/// algorithm gives its wire time per byte, and the time formula above is evaluated per size (the
/// least over the candidates, as lower_collective picks). For planners that price many sizes on
/// the same group (`inflect search`).
struct CollectiveCostModel {
  struct Line {
    Algorithm algorithm = Algorithm::ring;
    Protocol protocol = Protocol::simple;
    double base_s = 0;         // base latency and software overhead
    double steps_s = 0;        // P: the steps' latency
    double s_per_byte = 0;     // the bottleneck link's wire time per byte
    double cap_s_per_byte = 0; // a protocol ceiling's time per byte (LL across nodes), 0 = none
    bool pipelined = false;
    const std::vector<double>* size_correction = nullptr;  // tree: NCCL's correction by size
    /// The library model's wire time x at `bytes` (correction and ceiling included).
    double wire_time(double bytes) const;
    /// The library model's time: what the choice compares.
    double model_time(double bytes) const;
  };
  std::vector<Line> lines;  // empty for a group of one (time 0)
  /// A calibrated profile's fit for this group's collective and level, or null; and the wire time
  /// per byte it is a function of: the line the model picks for large messages (kReferenceBytes),
  /// so that the calibrated time is smooth in the size whatever protocol small messages take.
  std::vector<const CollectiveFit*> fits;  // by min_size
  double reference_s_per_byte = 0;
  /// The group runs the hierarchical form across sites (cross_site.hpp): per part, its latency and
  /// its seconds per byte, from the lowering at kReferenceBytes (its parts' algorithms as chosen
  /// there; the parts that share a WAN link share it). time() is then their sum.
  struct Part {
    double latency_s = 0;
    double s_per_byte = 0;
  };
  std::vector<Part> hierarchical;
  /// The fit that holds at `bytes` (the last whose min_size <= bytes), or null.
  const CollectiveFit* fit_for(double bytes) const;
  static constexpr double kReferenceBytes = 1024.0 * 1024 * 1024;
  /// The time: the fit's where there is one, else the model's choice's.
  core::Seconds time(core::Bytes bytes) const;
  /// A fit's time for `bytes`: latency + scale x + c sqrt(x), x = bytes x reference_s_per_byte.
  static double fitted(const CollectiveFit& fit, double x);
  /// The line with the least time at `bytes` (lines must not be empty).
  const Line& best(core::Bytes bytes) const;
  /// The wire time per byte of the line picked for large messages (kReferenceBytes): what a
  /// calibrated fit's x is, size times this (lines must not be empty).
  double reference_wire_s_per_byte() const { return best(core::Bytes(kReferenceBytes)).s_per_byte; }
};
CollectiveCostModel collective_cost_model(CollectiveOp op, std::span<const DeviceId> members, const Topology& topo,
                                          const CollectiveTuning& tuning = {});

/// The members of each site (group order kept, sites in the order they first appear) when a
/// collective over `members` takes the hierarchical form across sites: two or more sites with the
/// same k >= 2 members in each (src/net/cross_site.hpp). None otherwise: the group runs flat.
std::optional<std::vector<std::vector<DeviceId>>> hierarchical_split(std::span<const DeviceId> members, const Topology& topo);

/// nccl-tests bus-bandwidth factor for `op` over p ranks.
double busbw_factor(CollectiveOp op, int p);

}  // namespace inflect::net
