#include "net/cross_site.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "net/collective_loads.hpp"

namespace inflect::net {

namespace {

/// Phases of sub-collectives that run at once, merged: link bytes summed, the longest latency, and
/// the tightest rate bound rescaled to the merged reference size.
TransferPhase merge(const std::vector<TransferPhase>& parts, const Topology& topo) {
  loads::PhaseBuilder sum(topo);  // the per-link accumulator every lowering uses
  double latency = 0;
  for (const TransferPhase& p : parts) {
    for (const auto& [l, b] : p.link_bytes) sum.add_link(l, b, 0);
    latency = std::max(latency, p.latency.value());
  }
  TransferPhase out = sum.finish(1.0);
  out.latency = core::Seconds(latency);
  // All parts progress together at the merged rate r (bytes of the merged reference per second):
  // part j finishes when r reaches its own bound r_j scaled by the two references' ratio.
  for (const TransferPhase& p : parts)
    if (p.max_link_bytes > 0 && std::isfinite(p.rate_bound))
      out.rate_bound = std::min(out.rate_bound, p.rate_bound * out.max_link_bytes / p.max_link_bytes);
  return out;
}

/// One part: `op` over every group at once (each lowered alone, one phase each).
TransferPhase part(CollectiveOp op, const std::vector<std::vector<DeviceId>>& groups, double bytes, const Topology& topo,
                   const CollectiveTuning& tuning, const char** protocol = nullptr) {
  std::vector<TransferPhase> phases;
  for (const auto& g : groups) {
    LoweredCollective c = lower_collective(op, g, core::Bytes(bytes), topo, tuning);
    if (protocol && phases.empty()) *protocol = c.protocol;
    for (TransferPhase& ph : c.phases) phases.push_back(std::move(ph));
  }
  return merge(phases, topo);
}

}  // namespace

std::optional<std::vector<std::vector<DeviceId>>> hierarchical_split(std::span<const DeviceId> members, const Topology& topo) {
  if (topo.sites() < 2 || members.empty()) return std::nullopt;
  // The members of each site, in group order, sites in the order they first appear.
  std::vector<int> index(static_cast<std::size_t>(topo.sites()), -1);
  std::vector<std::vector<DeviceId>> inside;
  for (DeviceId d : members) {
    int& i = index[static_cast<std::size_t>(topo.site_of(d))];
    if (i < 0) {
      i = static_cast<int>(inside.size());
      inside.emplace_back();
    }
    inside[static_cast<std::size_t>(i)].push_back(d);
  }
  const std::size_t k = inside.front().size();
  if (inside.size() < 2 || k < 2) return std::nullopt;
  for (const auto& g : inside)
    if (g.size() != k) return std::nullopt;
  return inside;
}

double transport_bound(const TransferPhase& ph, const Topology& topo) {
  double bound = std::numeric_limits<double>::infinity();
  if (topo.sites() == 1) return bound;  // no WAN link to bound anything
  for (const auto& [l, b] : ph.link_bytes) {
    if (topo.links()[l].cls != LinkClass::wan || b <= 0) continue;
    bound = std::min(bound, topo.transport_limit(l).value() * ph.max_link_bytes / b);
  }
  return bound;
}

std::optional<LoweredCollective> lower_hierarchical(CollectiveOp op, std::span<const DeviceId> members, core::Bytes bytes,
                                                    const Topology& topo, const CollectiveTuning& tuning) {
  if (op != CollectiveOp::all_reduce && op != CollectiveOp::reduce_scatter && op != CollectiveOp::all_gather)
    return std::nullopt;
  const auto split = hierarchical_split(members, topo);
  if (!split) return std::nullopt;
  const std::vector<std::vector<DeviceId>>& inside = *split;
  const std::size_t k = inside.front().size();
  std::vector<std::vector<DeviceId>> across(k);
  for (const auto& g : inside)
    for (std::size_t j = 0; j < k; ++j) across[j].push_back(g[j]);

  // The parts are lowered flat: none spans sites with more than one member per site.
  CollectiveTuning flat = tuning;
  flat.cross_site = CrossSite::flat;
  const double n = bytes.value(), shard = n / static_cast<double>(k);
  LoweredCollective out;
  out.algorithm = "hierarchical";
  out.hierarchical = true;
  switch (op) {
    case CollectiveOp::all_reduce:
      out.phases.push_back(part(CollectiveOp::reduce_scatter, inside, n, topo, flat));
      out.phases.push_back(part(CollectiveOp::all_reduce, across, shard, topo, flat, &out.protocol));
      out.phases.push_back(part(CollectiveOp::all_gather, inside, n, topo, flat));
      break;
    case CollectiveOp::reduce_scatter:
      out.phases.push_back(part(CollectiveOp::reduce_scatter, inside, n, topo, flat));
      out.phases.push_back(part(CollectiveOp::reduce_scatter, across, shard, topo, flat, &out.protocol));
      break;
    default:  // all-gather
      out.phases.push_back(part(CollectiveOp::all_gather, across, shard, topo, flat, &out.protocol));
      out.phases.push_back(part(CollectiveOp::all_gather, inside, n, topo, flat));
      break;
  }
  return out;
}

}  // namespace inflect::net
