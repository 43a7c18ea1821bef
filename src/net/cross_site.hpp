#pragma once
// The hierarchical form of a collective over several sites, as NVIDIA ran Nemotron-4 340B's
// data parallelism across two data centres and as Megatron-Core's hierarchical communicators do:
// the slow WAN carries each byte once per site instead of the flat ring's 2(p-1)/p, in fewer
// WAN steps. Private to the net layer.
//
//   all-reduce of n:      reduce-scatter of n inside each site (every member keeps n/k),
//                         all-reduce of n/k across sites between the members of equal position,
//                         all-gather of n inside each site
//   reduce-scatter of S:  reduce-scatter of S inside each site, then of S/k across sites
//   all-gather of S:      all-gather of S/k across sites, then of S inside each site
// (k members in each site, group order kept within a site). Each part is lowered as it would be
// alone (lower_collective on the sub-groups: their own algorithm and protocol); the sub-groups of
// one part run together as one phase whose links carry all their bytes, its latency the longest
// of theirs, its rate bound the tightest. Served where the group spans two or more sites with the
// same k >= 2 members in each (k = 1 is the flat form).
#include <optional>
#include <span>

#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"

namespace inflect::net {

/// The hierarchical lowering, or none where the group is not served (see above).
std::optional<LoweredCollective> lower_hierarchical(CollectiveOp op, std::span<const DeviceId> members, core::Bytes bytes,
                                                    const Topology& topo, const CollectiveTuning& tuning);

/// A phase's rate bound from the WAN links it crosses: for each, the link's transport limit
/// (Topology::transport_limit) times the phase's reference size over its bytes there.
double transport_bound(const TransferPhase& ph, const Topology& topo);

}  // namespace inflect::net
