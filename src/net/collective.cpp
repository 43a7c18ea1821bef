#include "inflect/net/collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "inflect/core/error.hpp"
#include "net/collective_loads.hpp"
#include "net/cross_site.hpp"

namespace inflect::net {
namespace {

/// The longest time any link takes for its bytes at its capacity: a transfer's uncontended time.
double bottleneck_s(const std::vector<std::pair<LinkId, double>>& link_bytes, const Topology& topo) {
  double worst = 0;
  for (const auto& [l, b] : link_bytes) worst = std::max(worst, b / topo.links()[l].capacity.value());
  return worst;
}

/// A phase's uncontended transfer time: its slowest link's, or the WAN transport's for the bytes it
/// lets through (a transfer bound by its window), as the engine runs it.
double wire_s(const TransferPhase& ph, const Topology& topo) {
  return std::max(bottleneck_s(ph.link_bytes, topo), ph.max_link_bytes / ph.rate_bound);
}

int floor_log2(int v) {
  int r = 0;
  while ((1 << (r + 1)) <= v) ++r;
  return r;
}

/// One algorithm's loads on this group and the shape of its steps, before a protocol is chosen.
struct Shape {
  Algorithm algorithm = Algorithm::ring;
  TransferPhase payload;  // payload bytes per link (algorithm-specific scaling included)
  double payload_s = 0;   // its bottleneck link's time for the payload
  int intra_steps = 0;    // steps inside a node, across nodes of a site and between sites (each at
  int inter_steps = 0;    // least the longest route of its kind)
  int wan_steps = 0;
  double intra_route = 0;
  double inter_route = 0;
  double wan_route = 0;
  int nodes = 1;
  bool chained = false;   // a chain from one source even if its algorithm is a ring (broadcast, reduce)
};

/// Every algorithm valid for this group (not yet filtered by the library or the tuning), in enum
/// order, with its payload loads for `n` bytes.
std::vector<Shape> shapes(CollectiveOp op, std::span<const DeviceId> m, double n, const Topology& topo,
                          std::optional<Algorithm> only) {
  std::vector<Shape> out;
  const int p = static_cast<int>(m.size());
  const double pp = p;
  const loads::Layout l = loads::layout_of(m, topo);
  const IntraNodeFabric& intra = topo.spec().intra;
  const bool ar = op == CollectiveOp::all_reduce;
  const bool rs_ag = op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather;
  auto want = [&](Algorithm a) { return !only || *only == a; };
  // Steps across sites, of the `inter_steps` across nodes: a step waits for its slowest hop, and
  // a chunk's chain of hops crosses each WAN boundary it must (see wan_steps below).
  auto add = [&](Algorithm a, int intra_steps, int inter_steps, auto&& build, int wan_steps = 0) {
    loads::PhaseBuilder b(topo);
    build(b);
    Shape s;
    s.algorithm = a;
    s.intra_steps = intra_steps;
    s.wan_steps = std::min(wan_steps, inter_steps);
    s.inter_steps = inter_steps - s.wan_steps;
    s.intra_route = b.intra_route_latency();
    s.inter_route = b.inter_route_latency();
    s.wan_route = b.wan_route_latency();
    s.nodes = l.nodes;
    s.payload = b.finish(1.0);
    s.payload.rate_bound = transport_bound(s.payload, topo);
    s.payload_s = wire_s(s.payload, topo);  // what the choice compares and the search prices
    out.push_back(std::move(s));
  };
  const int log_nodes = std::max(1, floor_log2(l.nodes));
  // Steps whose hop crosses a WAN boundary. A ring's step waits on its predecessor's, so the
  // chunk that finishes last has walked p - 1 consecutive ring edges (2(p - 1) for all-reduce):
  // every one of the S boundary crossings of a ring laid out site by site (twice for
  // all-reduce; S - 1 when every edge crosses, p = S), not p - 1 WAN latencies. A chain from a root crosses S - 1; a binary tree over
  // site-contiguous nodes crosses at its top ceil(log2 S) levels, up and down.
  const int sites = l.sites;
  const int ceil_log_sites = sites > 1 ? floor_log2(sites - 1) + 1 : 0;
  const int ring_wan = sites > 1 ? (ar ? 2 : 1) * std::min(sites, p - 1) : 0;
  const int tree_wan = 2 * ceil_log_sites;

  if (op == CollectiveOp::send_recv) {
    core::check_invariant(p == 2, "send_recv needs exactly two members");
    const bool across = topo.node_of(m[0]) != topo.node_of(m[1]);
    if (want(Algorithm::p2p))
      add(Algorithm::p2p, across ? 0 : 1, across ? 1 : 0, [&](loads::PhaseBuilder& b) { b.add_route(m[0], m[1], n); },
          sites > 1 ? 1 : 0);
    return out;
  }
  if (op == CollectiveOp::broadcast || op == CollectiveOp::reduce) {
    // NCCL runs both on rings only (src/graph/tuning.cc skips every other algorithm for
    // ncclFuncBroadcast / ncclFuncReduce; src/device/broadcast.h, reduce.h): a chain along each
    // channel's ring from the root (broadcast) or to it (reduce), every chain edge carrying the
    // channel's share of the whole buffer once (the channels split the buffer, ncclCollCbdPart).
    // The chain's p - 1 hops are its steps, nodes - 1 of them across nodes as for the ring's
    // all-gather. NCCL's own latency counts one hop (all channels alike) or nRanks hops of the
    // tree's Simple latency; inflect counts the hops the first chunk crosses.
    if (want(Algorithm::ring)) {
      const int inter = l.nodes - 1;
      const loads::RingCut cut{m[0], op == CollectiveOp::broadcast};
      add(Algorithm::ring, p - 1 - inter, inter, [&](loads::PhaseBuilder& b) { loads::ring(b, l, m, n, topo, cut); },
          sites - 1);
      out.back().chained = true;
    }
    return out;
  }
  if (op == CollectiveOp::all_to_all) {
    // Every pair at once (NCCL groups the sends and receives): one step, not p - 1.
    if (want(Algorithm::pairwise))
      add(Algorithm::pairwise, l.nodes == 1 ? 1 : 0, l.nodes == 1 ? 0 : 1,
          [&](loads::PhaseBuilder& b) { loads::direct(b, m, n / pp); }, sites > 1 ? 1 : 0);
    return out;
  }
  if (want(Algorithm::ring)) {
    const int steps = ar ? 2 * (p - 1) : p - 1;
    const int inter = l.nodes == 1 ? 0 : (ar ? 2 * (l.nodes - 1) : l.nodes - 1);
    const double per_edge = (ar ? 2 : 1) * (pp - 1) / pp * n;
    add(Algorithm::ring, steps - inter, inter, [&](loads::PhaseBuilder& b) { loads::ring(b, l, m, per_edge, topo); },
        ring_wan);
  }
  if (ar && l.nodes > 1 && l.uniform && want(Algorithm::tree))
    add(Algorithm::tree, 2 * (l.per_node - 1), 2 * log_nodes, [&](loads::PhaseBuilder& b) { loads::tree(b, l, n); },
        tree_wan);
  const bool nvls_ok = intra.kind == IntraFabricKind::switched && intra.nvls && intra.nvls_efficiency > 0;
  // NVLS runs slower than the ports' collective rate: its bytes weigh efficiency / nvls_efficiency.
  const double nvls_scale = nvls_ok ? intra.efficiency / intra.nvls_efficiency : 1;
  if (ar && nvls_ok && l.nodes == 1 && p >= 2 && want(Algorithm::nvls))
    add(Algorithm::nvls, 1, 0, [&](loads::PhaseBuilder& b) { loads::nvls(b, l, n, nvls_scale); });
  if (ar && nvls_ok && l.nodes > 1 && l.uniform && l.per_node >= 2 && want(Algorithm::nvls_tree))
    add(
        Algorithm::nvls_tree, 1, 2 * log_nodes,
        [&](loads::PhaseBuilder& b) {
          loads::nvls(b, l, n, nvls_scale);
          loads::rail_trees(b, l, n / l.per_node);
        },
        tree_wan);
  // CollNet Direct: a direct reduce-scatter to each rail's device inside the node, the switch tree
  // reduces across nodes, a direct all-gather back (one pipelined phase). The switches of one site
  // reduce: a group across sites cannot use them.
  if (ar && sites == 1 && topo.scale_out_of_node(topo.node_of(m[0])).in_network_reduction && l.nodes > 1 && l.uniform &&
      want(Algorithm::collnet))
    add(Algorithm::collnet, l.per_node > 1 ? 2 : 0, 1, [&](loads::PhaseBuilder& b) {
      for (const auto& node : l.by_node) loads::direct(b, node, 2 * n / static_cast<double>(node.size()));
      loads::in_network(b, l, n / l.per_node, topo);
    });
  if (rs_ag && l.nodes > 1 && l.uniform && l.per_node == 1 && want(Algorithm::pat))
    add(Algorithm::pat, p, log_nodes, [&](loads::PhaseBuilder& b) { loads::ring(b, l, m, (pp - 1) / pp * n, topo); },
        ceil_log_sites);
  if ((ar || rs_ag) && l.nodes == 1 && intra.kind == IntraFabricKind::mesh && want(Algorithm::direct))
    add(Algorithm::direct, ar ? 2 : 1, 0, [&](loads::PhaseBuilder& b) { loads::direct(b, m, (ar ? 2 : 1) * n / pp); });
  return out;
}

double tree_correction(const std::vector<double>& table, double bytes) {
  // NCCL indexes its table by log2(bytes / 64), powers of two from 64 B.
  if (table.empty() || bytes < 64) return 1;
  const auto i = static_cast<std::size_t>(std::floor(std::log2(bytes / 64)));
  return i < table.size() ? table[i] : 1;
}

/// The cost of `shape` with protocol `pr`, as a line of the cost model (its bytes for `n`).
std::optional<CollectiveCostModel::Line> priced(const Shape& shape, Protocol pr, CollectiveOp op, int p, double n,
                                                const Topology& topo, const CollectiveTuning& tuning) {
  const CollectiveLibrary& lib = topo.spec().collectives.library;
  const auto& cost = lib.cost(shape.algorithm, pr);
  if (!cost) return std::nullopt;
  CollectiveCostModel::Line line;
  line.algorithm = shape.algorithm;
  line.protocol = pr;
  line.base_s = cost->base.value() + tuning.software_overhead.value();
  line.steps_s = shape.intra_steps * std::max(cost->intra_step.value(), shape.intra_route) +
                 shape.inter_steps * std::max(cost->inter_step.value(), shape.inter_route) +
                 shape.wan_steps * std::max(cost->inter_step.value(), shape.wan_route);
  line.s_per_byte = n > 0 ? shape.payload_s / cost->bandwidth_factor / n : 0;
  if (pr == Protocol::ll && shape.nodes > 1) {
    const core::Bandwidth cap = shape.nodes == 2 ? lib.ll_max_busbw_two_nodes : lib.ll_max_busbw_more_nodes;
    if (cap.value() > 0) line.cap_s_per_byte = busbw_factor(op, p) / cap.value();
  }
  // The fill is paid where a chunk passes store-and-forward through a chain of stages from one
  // source (trees, chains, the switch's reduce-then-multicast, a send through the NICs). A ring
  // has none: every rank sends its own slice from the first step, so every link is busy from
  // the start and only the steps' latency shows (NCCL's model, base + steps x latency + bytes/bw).
  // A broadcast or reduce is such a chain even on a ring: its chunks leave the root one after the
  // other and cross the p - 1 hops in turn.
  const bool chained = shape.chained || (shape.algorithm != Algorithm::ring && shape.algorithm != Algorithm::direct &&
                                         shape.algorithm != Algorithm::pairwise);
  line.pipelined = cost->pipelined && chained;

  if (shape.algorithm == Algorithm::tree) {
    const auto& table = lib.tree_size_correction[static_cast<std::size_t>(pr)];
    if (!table.empty()) line.size_correction = &table;
  }
  return line;
}

/// Every (algorithm, protocol) the library, the tuning and the group allow, priced for `n`: the
/// algorithms' loads once each, and a line per protocol with the algorithm it prices.
struct Choices {
  std::vector<Shape> shapes;
  std::vector<std::size_t> shape_of;  // by line
  CollectiveCostModel model;          // its lines; no fit yet
};

Choices choices(CollectiveOp op, std::span<const DeviceId> m, double n, const Topology& topo,
                const CollectiveTuning& tuning) {
  const std::optional<Algorithm> only = tuning.algorithm;
  const std::optional<Protocol> proto = tuning.protocol;
  Choices out;
  out.shapes = shapes(op, m, n, topo, only);
  for (std::size_t si = 0; si < out.shapes.size(); ++si)
    for (int pi = 0; pi < kProtocols; ++pi) {
      const auto pr = static_cast<Protocol>(pi);
      if (proto && *proto != pr) continue;
      if (auto line = priced(out.shapes[si], pr, op, static_cast<int>(m.size()), n, topo, tuning)) {
        out.model.lines.push_back(*line);
        out.shape_of.push_back(si);
      }
    }
  if (out.model.lines.empty()) {
    const CollectiveLibrary& lib = topo.spec().collectives.library;
    throw core::Error(core::ErrorKind::input,
                      fmt::format("no collective algorithm can run {} over {} devices ({} node(s)) here{}{} (library "
                                  "'{}'){}{}; algorithms: {}; protocols: {}",
                                  to_string(op), m.size(), loads::layout_of(m, topo).nodes,
                                  only ? fmt::format(" with algorithm {}", to_string(*only)) : "",
                                  proto ? fmt::format(" with protocol {}", to_string(*proto)) : "", lib.name,
                                  only || proto ? "; the choice was forced by cluster.collective_algorithm / "
                                                  "collective_protocol or the topology's collectives section"
                                                : "",
                                  // NCCL_ALGO without ring fails these too ("No algorithm/protocol
                                  // available", ncclInvalidUsage: src/enqueue.cc topoGetAlgoInfo).
                                  op == CollectiveOp::broadcast || op == CollectiveOp::reduce
                                      ? fmt::format(" ({} runs on rings only, as in NCCL)", to_string(op))
                                      : "",
                                  algorithm_names(), protocol_names()));
  }
  return out;
}

std::size_t least(const std::vector<CollectiveCostModel::Line>& lines, double n) {
  std::size_t best = 0;
  double best_t = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const double t = lines[i].model_time(n);  // the library's choice, as NCCL's tuner makes it
    if (t < best_t * (1 - 1e-12)) {
      best_t = t;
      best = i;
    }
  }
  return best;
}

}  // namespace

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::all_reduce: return "all-reduce";
    case CollectiveOp::reduce_scatter: return "reduce-scatter";
    case CollectiveOp::all_gather: return "all-gather";
    case CollectiveOp::all_to_all: return "all-to-all";
    case CollectiveOp::send_recv: return "send/recv";
    case CollectiveOp::broadcast: return "broadcast";
    case CollectiveOp::reduce: return "reduce";
  }
  return "?";
}

double busbw_factor(CollectiveOp op, int p) {
  const double n = p;
  switch (op) {
    case CollectiveOp::all_reduce: return 2 * (n - 1) / n;
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather:
    case CollectiveOp::all_to_all: return (n - 1) / n;
    case CollectiveOp::send_recv:
    case CollectiveOp::broadcast:
    case CollectiveOp::reduce: return 1;
  }
  return 1;
}

double CollectiveCostModel::Line::wire_time(double bytes) const {
  const double corr = size_correction ? tree_correction(*size_correction, bytes) : 1;
  return std::max(bytes * s_per_byte / corr, bytes * cap_s_per_byte);
}

double CollectiveCostModel::Line::model_time(double bytes) const {
  const double x = wire_time(bytes);
  const double fill = pipelined ? 2 * std::sqrt(steps_s * x) : 0;
  return base_s + steps_s + x + fill;
}

const CollectiveFit* CollectiveCostModel::fit_for(double bytes) const {
  const CollectiveFit* out = nullptr;
  for (const CollectiveFit* f : fits)
    if (f->min_size.value() <= bytes) out = f;
  return out;
}

double CollectiveCostModel::fitted(const CollectiveFit& fit, double x) {
  return fit.latency.value() + fit.scale * x + fit.sqrt_coefficient * std::sqrt(x);
}

core::Seconds CollectiveCostModel::time(core::Bytes bytes) const {
  if (!hierarchical.empty()) {
    double t = 0;
    for (const Part& p : hierarchical) t += p.latency_s + p.s_per_byte * bytes.value();
    return core::Seconds(t);
  }
  if (lines.empty()) return core::Seconds(0);
  if (const CollectiveFit* fit = fit_for(bytes.value())) return core::Seconds(fitted(*fit, bytes.value() * reference_s_per_byte));
  return core::Seconds(best(bytes).model_time(bytes.value()));
}

const CollectiveCostModel::Line& CollectiveCostModel::best(core::Bytes bytes) const {
  core::check_invariant(!lines.empty(), "CollectiveCostModel::best on a group of one");
  return lines[least(lines, bytes.value())];
}

core::Seconds estimate_time(const LoweredCollective& c, const Topology& topo) {
  double t = 0;
  for (const auto& ph : c.phases)
    t += ph.latency.value() + wire_s(ph, topo);
  return core::Seconds(t);
}

namespace {

/// The profile's fits for this group (its level: the nodes its algorithms span), and the
/// reference wire time per byte they are a function of.
void attach_fit(Choices& c, CollectiveOp op, const Topology& topo) {
  CollectiveCostModel& m = c.model;
  const bool one_node = c.shapes.front().nodes == 1;
  m.fits = topo.spec().collectives.profile.find(op, one_node ? FabricLevel::intra_node : FabricLevel::inter_node);
  if (!m.fits.empty()) m.reference_s_per_byte = m.reference_wire_s_per_byte();
}

}  // namespace

namespace {

/// The collective as one pipelined phase of the chosen algorithm and protocol.
LoweredCollective lower_flat(CollectiveOp op, std::span<const DeviceId> members, core::Bytes bytes, const Topology& topo,
                             const CollectiveTuning& tuning) {
  const double n = bytes.value();
  Choices all = choices(op, members, n, topo, tuning);
  attach_fit(all, op, topo);
  const CollectiveCostModel& model = all.model;
  const std::size_t best = least(model.lines, n);
  const CollectiveCostModel::Line& line = model.lines[best];
  const Shape& shape = all.shapes[all.shape_of[best]];
  const double factor = topo.spec().collectives.library.cost(shape.algorithm, line.protocol)->bandwidth_factor;
  double link_time = shape.payload_s / factor;
  // One pipelined phase: the links carry the wire bytes (payload over the protocol's factor) and
  // everything but the links' own time is latency, so the uncontended time is the model's. A
  // calibrated fit sets the links' share instead to its scale x the reference wire time, so that
  // contention sees the efficiency the measurement showed.
  double wire_scale = 1;
  if (const CollectiveFit* fit = model.fit_for(n); fit && link_time > 0) {
    wire_scale = fit->scale * n * model.reference_s_per_byte / link_time;
    link_time *= wire_scale;
  }
  TransferPhase ph;
  ph.link_bytes.reserve(shape.payload.link_bytes.size());
  for (const auto& [l, b] : shape.payload.link_bytes) {
    const double wire = b / factor * wire_scale;
    ph.link_bytes.push_back({l, wire});
    ph.max_link_bytes = std::max(ph.max_link_bytes, wire);
  }
  ph.latency = core::Seconds(std::max(0.0, model.time(bytes).value() - link_time));
  // The same links carry the payload scaled alike: the bound per reference byte is the shape's.
  ph.rate_bound = shape.payload.rate_bound;
  LoweredCollective out;
  out.algorithm = to_string(shape.algorithm);
  out.protocol = to_string(line.protocol);
  out.phases.push_back(std::move(ph));
  return out;
}

}  // namespace

LoweredCollective lower_collective(CollectiveOp op, std::span<const DeviceId> members, core::Bytes bytes,
                                   const Topology& topo, const CollectiveTuning& tuning) {
  if (members.size() <= 1) return LoweredCollective{};
  if (topo.sites() == 1 || tuning.cross_site == CrossSite::flat) return lower_flat(op, members, bytes, topo, tuning);
  // automatic and hierarchical alike: the hierarchical form where it is served. Picking by the
  // uncontended time flipped between the forms as the WAN got longer (the group's own estimate
  // does not see the other groups crossing the same WAN, nor the overlap with compute), so a
  // longer WAN could run faster; frameworks set the hierarchy once, not per size.
  if (std::optional<LoweredCollective> hier = lower_hierarchical(op, members, bytes, topo, tuning)) return std::move(*hier);
  return lower_flat(op, members, bytes, topo, tuning);
}

CollectiveCostModel collective_cost_model(CollectiveOp op, std::span<const DeviceId> members, const Topology& topo,
                                          const CollectiveTuning& tuning) {
  // Loads are proportional to the size and latencies independent of it: one lowering per
  // algorithm at a reference size gives each line.
  if (members.size() <= 1) return CollectiveCostModel{};
  constexpr double kSize = 1 << 20;
  Choices c = choices(op, members, kSize, topo, tuning);
  attach_fit(c, op, topo);
  if (topo.sites() > 1 && tuning.cross_site != CrossSite::flat) {
    const double ref = CollectiveCostModel::kReferenceBytes;
    if (auto hier = lower_hierarchical(op, members, core::Bytes(ref), topo, tuning))
      for (const TransferPhase& ph : hier->phases)
        c.model.hierarchical.push_back(
            {ph.latency.value(), wire_s(ph, topo) / ref});
  }
  return std::move(c.model);
}

}  // namespace inflect::net
