#pragma once
// What a collective becomes in the network: its phases (net::lower_collective), each a latency and
// then one transfer whose weight on each link is the bytes it puts there over its reference size,
// with the symmetric-fidelity mirrors folded into the representative's weights. Lowered once per
// group and traffic (kind, size, what follows), however many times it is called.
#include <vector>

#include "inflect/core/time.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/net/maxmin.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/workload/exec_graph.hpp"
#include "sim/ids.hpp"

namespace inflect::sim {

/// A collective phase ready for the flow model: weights relative to the reference size.
struct ReadyPhase {
  std::vector<std::pair<net::LinkId, double>> weights;
  double bytes = 0;
  core::Time latency;
  double bound = net::MaxMinSystem::kUnbounded;  // the most its rate may be (a WAN transport's limit)
};

class CollectiveLowering {
 public:
  CollectiveLowering(const workload::ExecutionGraph& g, const net::Topology& topo, const net::CollectiveTuning& tuning);

  /// The lowering of `c` on `group`, lowered on first use. Out of line: taken once per group and
  /// traffic, it would bloat the hot function it is called from.
  [[gnu::noinline]] LoweringId lowered_for(workload::GroupId group, const workload::Collective& c);
  const std::vector<ReadyPhase>& phases(LoweringId l) const { return lowered_[l]; }
  /// The algorithm and protocol the lowering chose for the collective (its first part when fused).
  const char* algorithm(LoweringId l) const { return chosen_[l].first; }
  const char* protocol(LoweringId l) const { return chosen_[l].second; }

 private:
  std::vector<ReadyPhase> lower(workload::GroupId group, workload::CollectiveKind kind, core::Bytes bytes,
                                std::pair<const char*, const char*>* chosen = nullptr);

  const workload::ExecutionGraph& g_;
  const net::Topology& topo_;
  const net::CollectiveTuning& tuning_;
  struct LoweredKey {
    const workload::Collective* c;  // kind, size and what follows it
    LoweringId index;
  };
  std::vector<std::vector<LoweredKey>> lowered_of_group_;
  IdVector<LoweringId, std::vector<ReadyPhase>> lowered_;
  IdVector<LoweringId, std::pair<const char*, const char*>> chosen_;
};

}  // namespace inflect::sim
