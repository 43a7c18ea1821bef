#include "sim/lowering.hpp"

#include <algorithm>

#include "inflect/sim/collective_op.hpp"

namespace inflect::sim {

CollectiveLowering::CollectiveLowering(const workload::ExecutionGraph& g, const net::Topology& topo,
                                       const net::CollectiveTuning& tuning)
    : g_(g), topo_(topo), tuning_(tuning), lowered_of_group_(g.groups().size()) {}

LoweringId CollectiveLowering::lowered_for(workload::GroupId group, const workload::Collective& c) {
  // Collectives of the same kind and size (and followers) on the same group lower identically:
  // lower once.
  auto& mine = lowered_of_group_[group];
  for (const auto& k : mine)
    if (workload::same_traffic(*k.c, c)) return k.index;
  const LoweringId index(static_cast<std::uint32_t>(lowered_.size()));
  mine.push_back(LoweredKey{&c, index});
  // A collective with followers (Collective::then) runs their phases after its own, in order.
  std::pair<const char*, const char*> chosen{"none", "none"};
  std::vector<ReadyPhase> out = lower(group, c.kind, c.bytes, &chosen);
  for (const auto& part : c.then) {
    std::vector<ReadyPhase> more = lower(group, part.kind, part.bytes);
    for (auto& ph : more) out.push_back(std::move(ph));
  }
  lowered_.push_back(std::move(out));
  chosen_.push_back(chosen);
  return index;
}

std::vector<ReadyPhase> CollectiveLowering::lower(workload::GroupId group, workload::CollectiveKind kind, core::Bytes bytes,
                                                  std::pair<const char*, const char*>* chosen) {
  const auto& grp = g_.groups()[group];
  const net::CollectiveOp op = to_net(kind);
  net::LoweredCollective rep = net::lower_collective(op, grp.members, bytes, topo_, tuning_);
  if (chosen) *chosen = {rep.algorithm, rep.protocol};
  // A mirror inside one node that holds none of the representative's members crosses only that
  // node's scale-up links, none of which the representative's routes cross (a route leaves a
  // node only through its NICs): it adds no weight, so it is not lowered (the TP groups of the
  // other replicas, thousands on a 16k-GPU run).
  std::vector<char> rep_node(static_cast<std::size_t>(topo_.nodes()), 0);
  for (auto r : grp.members) rep_node[static_cast<std::size_t>(topo_.node_of(r))] = 1;
  auto disjoint = [&](const std::vector<workload::RankId>& m) {
    const int node = topo_.node_of(m.front());
    for (auto r : m)
      if (topo_.node_of(r) != node) return false;
    return !rep_node[static_cast<std::size_t>(node)];
  };
  net::CollectiveTuning mirror_tuning = tuning_;
  // A hierarchical lowering's parts choose their own algorithms; its mirrors are lowered the same
  // way (hierarchical, unforced), a flat one's with the representative's algorithm and protocol.
  mirror_tuning.cross_site = rep.hierarchical ? net::CrossSite::hierarchical : net::CrossSite::flat;
  mirror_tuning.algorithm = rep.hierarchical ? tuning_.algorithm : net::parse_algorithm(rep.algorithm);
  mirror_tuning.protocol = rep.hierarchical ? tuning_.protocol : net::parse_protocol(rep.protocol);
  std::vector<ReadyPhase> out;
  for (const auto& ph : rep.phases) {
    ReadyPhase r;
    r.bytes = ph.max_link_bytes;
    r.latency = core::Time::from(ph.latency);
    r.bound = ph.rate_bound;
    if (r.bytes > 0)
      for (const auto& [l, b] : ph.link_bytes) r.weights.push_back({l, b / r.bytes});
    out.push_back(std::move(r));
  }
  // The representative's transfer weighs on each of its links as itself plus every mirror
  // crossing that link. Links only mirrors cross are left out: on symmetric inputs each is the
  // image of one of the representative's own links under the symmetry, loaded the same way.
  auto add_mirror_bytes = [&](std::size_t p, net::LinkId l, double b) {
    if (p >= out.size() || out[p].bytes <= 0) return;
    auto& w = out[p].weights;
    auto it = std::lower_bound(w.begin(), w.end(), std::make_pair(l, 0.0),
                               [](const auto& x, const auto& y) { return x.first < y.first; });
    if (it != w.end() && it->first == l) it->second += b / out[p].bytes;
  };
  for (const auto& m : grp.mirrors) {
    if (m.empty() || disjoint(m)) continue;
    if (op == net::CollectiveOp::send_recv && m.size() == 2) {
      // A point-to-point mirror is one route carrying the message: no need to lower it (a 16k-GPU
      // plan has a thousand per pipeline boundary).
      if (m[0] == m[1]) continue;
      const net::Path path = topo_.route(m[0], m[1]);
      for (int i = 0; i < path.size; ++i) add_mirror_bytes(0, path.links[static_cast<std::size_t>(i)], bytes.value());
      continue;
    }
    // A mirror is the representative's image under the group symmetry: it runs the same algorithm
    // and protocol, so only that one is lowered for it.
    const net::LoweredCollective lm = net::lower_collective(op, m, bytes, topo_, mirror_tuning);
    for (std::size_t p = 0; p < lm.phases.size(); ++p)
      for (const auto& [l, b] : lm.phases[p].link_bytes) add_mirror_bytes(p, l, b);
  }
  return out;
}

}  // namespace inflect::sim
