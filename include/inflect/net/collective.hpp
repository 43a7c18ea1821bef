#pragma once
// Collectives lowered to transfers: each phase of a collective becomes one transfer that puts a
// known number of bytes on every link it crosses, plus a latency term (steps x per-hop latency,
// plus a software overhead per collective). Phases run one after another.
//
// Algorithms (alpha-beta forms in hardware.md section 4, Thakur et al. 2005):
//   ring all-reduce: 2(p-1)/p * n on every ring edge, 2(p-1) latency steps
//   ring reduce-scatter / all-gather: (p-1)/p * S per ring edge, p-1 steps
//   direct (pairwise): every rank sends its chunk straight to every peer — for meshes (Infinity
//     Fabric), where a ring would use 1 of 7 links per device
//   double binary tree all-reduce: reduce up, broadcast down, two trees carrying half each;
//     2*log2(p) steps — wins for small messages on many ranks
//   pairwise all-to-all: n/p from every rank to every other
//   hierarchical (groups spanning nodes with k > 1 ranks per node): intra-node reduce-scatter,
//     inter-node all-reduce among same-local-index ranks on n/k, intra-node all-gather
// The lowering picks, among the algorithms valid for the group, the one whose uncontended
// alpha-beta estimate on this topology is lowest (ties: the order above). Bus bandwidth follows
// nccl-tests: busbw = algbw * factor (all-reduce 2(p-1)/p; RS, AG, all-to-all (p-1)/p).
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "inflect/core/units.hpp"
#include "inflect/net/topology.hpp"

namespace inflect::net {

enum class CollectiveOp : unsigned char { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv };

/// One phase: bytes per link (each link at most once, sorted by id) and its latency.
struct TransferPhase {
  std::vector<std::pair<LinkId, double>> link_bytes;
  double max_link_bytes = 0;  // the largest entry: the transfer's reference size
  core::Seconds latency;
};

struct LoweredCollective {
  std::vector<TransferPhase> phases;
  const char* algorithm = "none";
};

struct CollectiveTuning {
  /// Fixed software cost per collective call (launch, proxy, synchronization).
  core::Seconds software_overhead = core::Seconds(0);
  /// Restrict the choice to one algorithm ("ring", "tree", "direct", "hierarchical"); empty = best.
  std::string force_algorithm;
};

/// Lowers a collective over `members` (device ids, the group's order) moving `bytes` with
/// nccl-tests' meaning of size (all-reduce: the buffer; RS/AG: the whole gathered buffer S;
/// all-to-all: each rank's send buffer; send_recv: the message, members[0] -> members[1]).
LoweredCollective lower_collective(CollectiveOp op, std::span<const DeviceId> members, core::Bytes bytes,
                                   const Topology& topo, const CollectiveTuning& tuning = {});

/// The uncontended time of a lowered collective: sum over phases of latency + bottleneck time.
core::Seconds estimate_time(const LoweredCollective& c, const Topology& topo);

/// The uncontended time of a collective over one group as a function of its size. Every lowering
/// above is linear in the size (bytes on each link proportional to it, latencies independent of
/// it), so each algorithm the lowering may pick is a line, and the time lower_collective's choice
/// gets from estimate_time is the lowest line at that size. For planners that price many sizes
/// on the same group without lowering each (`inflect search`).
struct CollectiveCostModel {
  struct Line {
    const char* algorithm = "none";
    double latency_s = 0;   // the size-independent part (steps x hop latency, overhead)
    double s_per_byte = 0;  // the bottleneck links' share
  };
  std::vector<Line> lines;  // empty for a group of one (time 0)
  core::Seconds time(core::Bytes bytes) const;
};
CollectiveCostModel collective_cost_model(CollectiveOp op, std::span<const DeviceId> members, const Topology& topo,
                                          const CollectiveTuning& tuning = {});

/// nccl-tests bus-bandwidth factor for `op` over p ranks.
double busbw_factor(CollectiveOp op, int p);

}  // namespace inflect::net
