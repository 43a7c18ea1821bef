#include "inflect/net/collective.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "inflect/core/error.hpp"

namespace inflect::net {
namespace {

// Accumulates bytes per link for one phase, then emits them sorted. Loads add up in a dense
// per-link array (one per thread, sized to the topology) and only the links touched are sorted:
// a 128-rank ring over a 16k-GPU fabric touches ~500 links, and is lowered hundreds of times.
class PhaseBuilder {
 public:
  explicit PhaseBuilder(const Topology& topo) : topo_(topo) {
    Scratch& s = scratch();
    for (LinkId l : s.touched) s.bytes[l] = 0;  // left by a builder that never finished (a throw)
    s.touched.clear();
    if (s.bytes.size() < topo.links().size()) s.bytes.resize(topo.links().size(), 0.0);
  }
  void add_route(DeviceId a, DeviceId b, double bytes) {
    if (a == b || bytes <= 0) return;
    Scratch& s = scratch();
    Path p = topo_.route(a, b);
    for (int i = 0; i < p.size; ++i) {
      const LinkId l = p.links[static_cast<std::size_t>(i)];
      if (s.bytes[l] == 0) s.touched.push_back(l);
      s.bytes[l] += bytes;
    }
    max_path_latency_ = std::max(max_path_latency_, p.latency.value());
  }
  double max_path_latency() const { return max_path_latency_; }
  TransferPhase finish(double latency_s) {
    Scratch& s = scratch();
    std::sort(s.touched.begin(), s.touched.end());
    TransferPhase ph;
    ph.link_bytes.reserve(s.touched.size());
    for (LinkId l : s.touched) {
      ph.link_bytes.push_back({l, s.bytes[l]});
      ph.max_link_bytes = std::max(ph.max_link_bytes, s.bytes[l]);
      s.bytes[l] = 0;
    }
    s.touched.clear();
    ph.latency = core::Seconds(latency_s);
    max_path_latency_ = 0;
    return ph;
  }

 private:
  struct Scratch {
    std::vector<double> bytes;  // by link id; all zero between phases
    std::vector<LinkId> touched;
  };
  // One builder is live at a time per thread (each phase is finished before the next starts).
  static Scratch& scratch() {
    thread_local Scratch s;
    return s;
  }
  const Topology& topo_;
  double max_path_latency_ = 0;
};

// Ring over `ring` (in order) with `per_edge` bytes on each edge and `steps` latency steps.
TransferPhase ring_phase(const Topology& topo, std::span<const DeviceId> ring, double per_edge, int steps) {
  PhaseBuilder b(topo);
  const std::size_t p = ring.size();
  for (std::size_t i = 0; i < p; ++i) b.add_route(ring[i], ring[(i + 1) % p], per_edge);
  double hop = b.max_path_latency();
  return b.finish(steps * hop);
}

// Every rank sends `per_pair` bytes to every other rank directly; `steps` latency steps.
TransferPhase direct_phase(const Topology& topo, std::span<const DeviceId> members, double per_pair, int steps) {
  PhaseBuilder b(topo);
  for (DeviceId a : members)
    for (DeviceId c : members) b.add_route(a, c, per_pair);
  double hop = b.max_path_latency();
  return b.finish(steps * hop);
}

// Double binary tree: ranks in group order form a binary tree (parent of i is (i-1)/2) and its
// mirror (rank i plays position p-1-i); each tree carries half the data. Up phase: children send
// to parents (reduce); down phase: parents send to children (broadcast).
std::vector<TransferPhase> tree_all_reduce(const Topology& topo, std::span<const DeviceId> m, double n) {
  const std::size_t p = m.size();
  int depth = 0;
  while ((std::size_t{1} << depth) < p + 1) ++depth;
  std::vector<TransferPhase> out;
  for (int dir = 0; dir < 2; ++dir) {
    PhaseBuilder b(topo);
    for (int tree = 0; tree < 2; ++tree) {
      for (std::size_t pos = 1; pos < p; ++pos) {
        std::size_t parent = (pos - 1) / 2;
        DeviceId child_dev = m[tree == 0 ? pos : p - 1 - pos];
        DeviceId parent_dev = m[tree == 0 ? parent : p - 1 - parent];
        if (dir == 0) b.add_route(child_dev, parent_dev, n / 2);
        else b.add_route(parent_dev, child_dev, n / 2);
      }
    }
    double hop = b.max_path_latency();
    out.push_back(b.finish((depth - 1) * hop));
  }
  return out;
}

struct Layout {
  bool uniform = false;  // every node of the group holds the same number k of members
  int nodes = 0;
  int per_node = 0;
  std::vector<std::vector<DeviceId>> by_node;  // members grouped by node, group order kept
};

Layout layout_of(std::span<const DeviceId> members, const Topology& topo) {
  Layout l;
  std::map<int, std::size_t> index;
  for (DeviceId d : members) {
    int node = topo.node_of(d);
    auto it = index.find(node);
    if (it == index.end()) {
      index[node] = l.by_node.size();
      l.by_node.push_back({d});
    } else {
      l.by_node[it->second].push_back(d);
    }
  }
  l.nodes = static_cast<int>(l.by_node.size());
  l.per_node = static_cast<int>(l.by_node.front().size());
  l.uniform = true;
  for (const auto& v : l.by_node) l.uniform = l.uniform && static_cast<int>(v.size()) == l.per_node;
  return l;
}

// Hierarchical all-reduce / reduce-scatter / all-gather for a uniform multi-node group.
std::vector<TransferPhase> hierarchical(CollectiveOp op, const Layout& l, double n, const Topology& topo) {
  const int k = l.per_node, m = l.nodes;
  auto intra = [&](double fraction_bytes, int steps) {
    // All nodes run their intra-node ring concurrently: one phase, loads summed.
    PhaseBuilder b(topo);
    for (const auto& node : l.by_node)
      for (std::size_t i = 0; i < node.size(); ++i) b.add_route(node[i], node[(i + 1) % node.size()], fraction_bytes);
    double hop = b.max_path_latency();
    return b.finish(steps * hop);
  };
  auto inter = [&](double per_edge, int steps) {
    // k concurrent rings, ring j over the j-th member of every node (same rail).
    PhaseBuilder b(topo);
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < m; ++i)
        b.add_route(l.by_node[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)],
                    l.by_node[static_cast<std::size_t>((i + 1) % m)][static_cast<std::size_t>(j)], per_edge);
    double hop = b.max_path_latency();
    return b.finish(steps * hop);
  };
  const double kk = k, mm = m;
  std::vector<TransferPhase> out;
  switch (op) {
    case CollectiveOp::all_reduce:
      out.push_back(intra((kk - 1) / kk * n, k - 1));
      out.push_back(inter(2 * (mm - 1) / mm * n / kk, 2 * (m - 1)));
      out.push_back(intra((kk - 1) / kk * n, k - 1));
      break;
    case CollectiveOp::reduce_scatter:
      out.push_back(intra((kk - 1) / kk * n, k - 1));
      out.push_back(inter((mm - 1) / mm * n / kk, m - 1));
      break;
    case CollectiveOp::all_gather:
      out.push_back(inter((mm - 1) / mm * n / kk, m - 1));
      out.push_back(intra((kk - 1) / kk * n, k - 1));
      break;
    default:
      core::check_invariant(false, "hierarchical lowering only for all-reduce, reduce-scatter, all-gather");
  }
  return out;
}

void add_overhead(LoweredCollective& c, double overhead) {
  if (!c.phases.empty()) c.phases.front().latency += core::Seconds(overhead);
}

}  // namespace

double busbw_factor(CollectiveOp op, int p) {
  const double n = p;
  switch (op) {
    case CollectiveOp::all_reduce: return 2 * (n - 1) / n;
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather:
    case CollectiveOp::all_to_all: return (n - 1) / n;
    case CollectiveOp::send_recv: return 1;
  }
  return 1;
}

core::Seconds estimate_time(const LoweredCollective& c, const Topology& topo) {
  double t = 0;
  for (const auto& ph : c.phases) {
    double worst = 0;
    for (const auto& [l, b] : ph.link_bytes) worst = std::max(worst, b / topo.links()[l].capacity.value());
    t += ph.latency.value() + worst;
  }
  return core::Seconds(t);
}

namespace {

/// Every algorithm lower_collective may choose for this group, lowered (software overhead
/// included), in the order ties are broken.
std::vector<LoweredCollective> lower_candidates(CollectiveOp op, std::span<const DeviceId> members, core::Bytes bytes,
                                                const Topology& topo, const CollectiveTuning& tuning) {
  const std::size_t p = members.size();
  const double n = bytes.value();
  const double pp = static_cast<double>(p);
  const double overhead = tuning.software_overhead.value();
  std::vector<LoweredCollective> candidates;
  if (p <= 1) return candidates;

  if (op == CollectiveOp::send_recv) {
    core::check_invariant(p == 2, "send_recv needs exactly two members");
    LoweredCollective c;
    c.algorithm = "p2p";
    PhaseBuilder b(topo);
    b.add_route(members[0], members[1], n);
    double lat = b.max_path_latency();
    c.phases.push_back(b.finish(lat));
    add_overhead(c, overhead);
    candidates.push_back(std::move(c));
    return candidates;
  }

  auto want = [&](const char* name) { return tuning.force_algorithm.empty() || tuning.force_algorithm == name; };
  const int pi = static_cast<int>(p);

  if (op == CollectiveOp::all_to_all) {
    LoweredCollective c;
    c.algorithm = "direct";
    c.phases.push_back(direct_phase(topo, members, n / pp, pi - 1));
    candidates.push_back(std::move(c));
  } else {
    if (want("ring")) {
      LoweredCollective c;
      c.algorithm = "ring";
      if (op == CollectiveOp::all_reduce) c.phases.push_back(ring_phase(topo, members, 2 * (pp - 1) / pp * n, 2 * (pi - 1)));
      else c.phases.push_back(ring_phase(topo, members, (pp - 1) / pp * n, pi - 1));
      candidates.push_back(std::move(c));
    }
    // Direct exchange pays off on point-to-point meshes inside one node; across nodes it would
    // lower to p^2 routes for no gain over ring/tree, so it is not a candidate there.
    const Layout l = layout_of(members, topo);
    const bool single_node = l.nodes == 1;
    if (single_node && want("direct")) {
      LoweredCollective c;
      c.algorithm = "direct";
      // Direct reduce-scatter / all-gather: each rank exchanges its S/p chunk with every peer,
      // p - 1 messages per rank: the pairwise (p-1) alpha of hardware.md 4.1, as for all-to-all.
      // (With one step per phase the direct exchange beat the ring on NVSwitch, where it moves
      // the same bytes per port, by latency alone.)
      if (op == CollectiveOp::all_reduce) {
        c.phases.push_back(direct_phase(topo, members, n / pp, pi - 1));
        c.phases.push_back(direct_phase(topo, members, n / pp, pi - 1));
      } else {
        c.phases.push_back(direct_phase(topo, members, n / pp, pi - 1));
      }
      candidates.push_back(std::move(c));
    }
    if (op == CollectiveOp::all_reduce && p > 2 && want("tree")) {
      LoweredCollective c;
      c.algorithm = "tree";
      c.phases = tree_all_reduce(topo, members, n);
      candidates.push_back(std::move(c));
    }
    if (l.nodes > 1 && l.per_node > 1 && l.uniform && want("hierarchical")) {
      LoweredCollective c;
      c.algorithm = "hierarchical";
      c.phases = hierarchical(op, l, n, topo);
      candidates.push_back(std::move(c));
    }
  }
  if (candidates.empty())
    throw core::Error(core::ErrorKind::input, "collective algorithm '" + tuning.force_algorithm +
                                                  "' is not valid here; allowed: ring, direct, tree, hierarchical");
  for (auto& c : candidates) add_overhead(c, overhead);
  return candidates;
}

}  // namespace

LoweredCollective lower_collective(CollectiveOp op, std::span<const DeviceId> members, core::Bytes bytes,
                                   const Topology& topo, const CollectiveTuning& tuning) {
  std::vector<LoweredCollective> candidates = lower_candidates(op, members, bytes, topo, tuning);
  if (candidates.empty()) return LoweredCollective{};
  std::size_t best = 0;
  double best_t = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    double t = estimate_time(candidates[i], topo).value();
    if (t < best_t * (1 - 1e-12)) {
      best_t = t;
      best = i;
    }
  }
  return std::move(candidates[best]);
}

core::Seconds CollectiveCostModel::time(core::Bytes bytes) const {
  double best = lines.empty() ? 0.0 : std::numeric_limits<double>::infinity();
  for (const auto& l : lines) best = std::min(best, l.latency_s + bytes.value() * l.s_per_byte);
  return core::Seconds(best);
}

CollectiveCostModel collective_cost_model(CollectiveOp op, std::span<const DeviceId> members, const Topology& topo,
                                          const CollectiveTuning& tuning) {
  // Every lowering puts bytes proportional to the size on each link and adds size-independent
  // latencies, so each algorithm's uncontended time is a line in the size: one lowering gives
  // its latency (the phases' latencies) and its slope (the rest, over the size).
  constexpr double kSize = 1 << 20;
  CollectiveCostModel m;
  for (const auto& c : lower_candidates(op, members, core::Bytes(kSize), topo, tuning)) {
    double latency = 0;
    for (const auto& ph : c.phases) latency += ph.latency.value();
    m.lines.push_back({c.algorithm, latency, (estimate_time(c, topo).value() - latency) / kSize});
  }
  return m;
}

}  // namespace inflect::net
