#include "net/collective_loads.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace inflect::net::loads {
namespace {

struct Scratch {
  std::vector<double> bytes;  // by link id; all zero between phases
  std::vector<LinkId> touched;
};
// One builder is live at a time per thread (each phase is finished before the next starts).
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

}  // namespace

PhaseBuilder::PhaseBuilder(const Topology& topo) : topo_(topo) {
  Scratch& s = scratch();
  for (LinkId l : s.touched) s.bytes[l] = 0;  // left by a builder that never finished (a throw)
  s.touched.clear();
  if (s.bytes.size() < topo.links().size()) s.bytes.resize(topo.links().size(), 0.0);
}

void PhaseBuilder::add_route(DeviceId a, DeviceId b, double bytes) {
  if (a == b || bytes <= 0) return;
  Scratch& s = scratch();
  const Path p = topo_.route(a, b);
  for (int i = 0; i < p.size; ++i) {
    const LinkId l = p.links[static_cast<std::size_t>(i)];
    if (s.bytes[l] == 0) s.touched.push_back(l);
    s.bytes[l] += bytes;
  }
  double& lat = topo_.node_of(a) == topo_.node_of(b) ? intra_latency_
                : topo_.site_of(a) == topo_.site_of(b) ? inter_latency_
                                                       : wan_latency_;
  lat = std::max(lat, p.latency.value());
}

void PhaseBuilder::add_link(LinkId l, double bytes, double latency) {
  if (bytes <= 0) return;
  Scratch& s = scratch();
  if (s.bytes[l] == 0) s.touched.push_back(l);
  s.bytes[l] += bytes;
  inter_latency_ = std::max(inter_latency_, latency);
}

TransferPhase PhaseBuilder::finish(double wire_factor) {
  Scratch& s = scratch();
  std::sort(s.touched.begin(), s.touched.end());
  TransferPhase ph;
  ph.link_bytes.reserve(s.touched.size());
  for (LinkId l : s.touched) {
    const double wire = s.bytes[l] / wire_factor;
    ph.link_bytes.push_back({l, wire});
    ph.max_link_bytes = std::max(ph.max_link_bytes, wire);
    s.bytes[l] = 0;
  }
  s.touched.clear();
  intra_latency_ = inter_latency_ = wan_latency_ = 0;
  return ph;
}

Layout layout_of(std::span<const DeviceId> members, const Topology& topo) {
  Layout l;
  std::map<int, std::size_t> index;
  for (DeviceId d : members) {
    const int node = topo.node_of(d);
    auto it = index.find(node);
    if (it == index.end()) {
      index[node] = l.by_node.size();
      l.by_node.push_back({d});
    } else {
      l.by_node[it->second].push_back(d);
    }
  }
  if (topo.sites() > 1) {
    // Site by site, in the order the sites first appear in the group.
    std::vector<int> rank_of_site(static_cast<std::size_t>(topo.sites()), -1);
    int next = 0;
    for (const auto& node : l.by_node) {
      int& r = rank_of_site[static_cast<std::size_t>(topo.site_of(node.front()))];
      if (r < 0) r = next++;
    }
    l.sites = next;
    std::stable_sort(l.by_node.begin(), l.by_node.end(), [&](const auto& x, const auto& y) {
      return rank_of_site[static_cast<std::size_t>(topo.site_of(x.front()))] <
             rank_of_site[static_cast<std::size_t>(topo.site_of(y.front()))];
    });
  }
  l.nodes = static_cast<int>(l.by_node.size());
  l.per_node = l.by_node.empty() ? 0 : static_cast<int>(l.by_node.front().size());
  l.uniform = true;
  for (const auto& v : l.by_node) l.uniform = l.uniform && static_cast<int>(v.size()) == l.per_node;
  return l;
}

std::vector<std::vector<int>> ring_orders(const Topology& topo, int k) {
  std::vector<int> identity(static_cast<std::size_t>(k));
  std::iota(identity.begin(), identity.end(), 0);
  if (topo.spec().intra.kind != IntraFabricKind::mesh || k <= 2) return {identity};
  std::vector<std::vector<int>> out;
  if (!topo.spec().intra.links.empty()) {
    // A partial mesh: rings of every stride coprime with k, each hop over whatever route joins them.
    for (int s = 1; s < k; ++s) {
      if (std::gcd(s, k) != 1) continue;
      std::vector<int> o;
      for (int j = 0; j < k; ++j) o.push_back(j * s % k);
      out.push_back(std::move(o));
    }
    return out;
  }
  // A full mesh: Walecki's edge-disjoint Hamiltonian cycles. For odd n = 2m+1 on Z_n, cycle j is
  // j, j+1, j-1, j+2, j-2, ..., j+m, j-m (m cycles, every link once). For even k, that on Z_{k-1}
  // with its closing hop routed through the k-th device (m cycles using all links but a perfect
  // matching). Each cycle runs both ways, so a device's share leaves over 2m of its k-1 links.
  const int n = k % 2 ? k : k - 1;
  const int m = (n - 1) / 2;
  for (int j = 0; j < m; ++j) {
    std::vector<int> o = {j};
    for (int d = 1; d <= m; ++d) {
      o.push_back(((j + d) % n + n) % n);
      o.push_back(((j - d) % n + n) % n);
    }
    if (k % 2 == 0) o.push_back(k - 1);
    std::vector<int> back(o.rbegin(), o.rend());
    out.push_back(std::move(o));
    out.push_back(std::move(back));
  }
  return out;
}

void ring(PhaseBuilder& b, const Layout& l, std::span<const DeviceId> members, double per_edge, const Topology& topo,
          std::optional<RingCut> cut) {
  const std::size_t p = members.size();
  // An edge of a channel's ring, from -> to: its bytes, unless it is the cut one.
  const auto edge = [&](DeviceId from, DeviceId to, double bytes) {
    if (!cut || !cut->cuts(from, to)) b.add_route(from, to, bytes);
  };
  if (l.nodes == 1) {
    // One node: on a switch one ring loads every port alike; on a mesh, several rings share the
    // bytes so that each crosses its own links.
    const auto orders = ring_orders(topo, static_cast<int>(p));
    const double share = per_edge / static_cast<double>(orders.size());
    for (const auto& o : orders)
      for (std::size_t i = 0; i < p; ++i)
        edge(members[static_cast<std::size_t>(o[i])], members[static_cast<std::size_t>(o[(i + 1) % p])], share);
    return;
  }
  if (!l.uniform || l.per_node < 2) {
    // One member per node (or an uneven group): one ring in group order (site by site), each hop
    // on its rail.
    std::vector<DeviceId> order;
    order.reserve(p);
    for (const auto& node : l.by_node) order.insert(order.end(), node.begin(), node.end());
    for (std::size_t i = 0; i < p; ++i) edge(order[i], order[(i + 1) % p], per_edge);
    return;
  }
  // One channel per rail c (and per ring order on a mesh): each node's members from the rail's
  // device round to the one before it in the order, which hands the data to the rail's device
  // (PXN, over the order's own link) for the next node.
  const int k = l.per_node;
  const auto orders = ring_orders(topo, k);
  const double share = per_edge / static_cast<double>(k * static_cast<int>(orders.size()));
  const auto at = [&](int node, int local) {
    return l.by_node[static_cast<std::size_t>(node)][static_cast<std::size_t>(local)];
  };
  for (const auto& o : orders)
    for (int start = 0; start < k; ++start) {
      const int c = o[static_cast<std::size_t>(start)];  // the rail this channel crosses on
      const auto pos = [&](int j) { return o[static_cast<std::size_t>((start + j) % k)]; };
      for (int node = 0; node < l.nodes; ++node) {
        for (int j = 0; j + 1 < k; ++j) edge(at(node, pos(j)), at(node, pos(j + 1)), share);
        // The ring's edge to the next node, pos(k-1) -> (node+1, c), in two routes: to the rail's
        // device, then across on rail c. A cut on that edge takes both.
        const DeviceId from = at(node, pos(k - 1)), to = at((node + 1) % l.nodes, c);
        if (cut && cut->cuts(from, to)) continue;
        b.add_route(from, at(node, c), share);  // to the rail's device (nothing when it is the last)
        b.add_route(at(node, c), to, share);    // across, on rail c
      }
    }
}

namespace {

// Binary tree over `count` positions (parent of q is (q-1)/2) and its mirror (position count-1-q):
// calls edge(child, parent) for every edge of both trees.
template <class Edge>
void double_binary_tree(int count, Edge&& edge) {
  for (int tree = 0; tree < 2; ++tree)
    for (int q = 1; q < count; ++q) {
      const int parent = (q - 1) / 2;
      edge(tree == 0 ? q : count - 1 - q, tree == 0 ? parent : count - 1 - parent);
    }
}

}  // namespace

void tree(PhaseBuilder& b, const Layout& l, double n) {
  // One channel per rail; each channel carries 1/k of the data, half on each tree.
  const int k = std::max(1, l.per_node);
  const double d = n / k / 2;
  for (int c = 0; c < k; ++c) {
    const auto at = [&](int node, int j) { return l.by_node[static_cast<std::size_t>(node)][static_cast<std::size_t>((c + j) % k)]; };
    // Chains: the data of both trees goes up (reduce) and down (broadcast) every chain edge.
    for (int node = 0; node < l.nodes; ++node)
      for (int j = 0; j + 1 < k; ++j) {
        b.add_route(at(node, j + 1), at(node, j), 2 * d);
        b.add_route(at(node, j), at(node, j + 1), 2 * d);
      }
    double_binary_tree(l.nodes, [&](int child, int parent) {
      b.add_route(at(child, 0), at(parent, 0), d);
      b.add_route(at(parent, 0), at(child, 0), d);
    });
  }
}

void nvls(PhaseBuilder& b, const Layout& l, double n, double scale) {
  for (const auto& node : l.by_node) {
    const std::size_t k = node.size();
    if (k < 2) continue;
    // A route a -> b crosses a's port up and b's port down: one route per member loads each
    // member's port once each way.
    const double per_port = n * static_cast<double>(k + 1) / static_cast<double>(k) * scale;
    for (std::size_t j = 0; j < k; ++j) b.add_route(node[j], node[(j + 1) % k], per_port);
  }
}

void rail_trees(PhaseBuilder& b, const Layout& l, double per_rail) {
  for (int j = 0; j < l.per_node; ++j) {
    const auto at = [&](int node) { return l.by_node[static_cast<std::size_t>(node)][static_cast<std::size_t>(j)]; };
    double_binary_tree(l.nodes, [&](int child, int parent) {
      b.add_route(at(child), at(parent), per_rail / 2);
      b.add_route(at(parent), at(child), per_rail / 2);
    });
  }
}

void in_network(PhaseBuilder& b, const Layout& l, double per_rail, const Topology& topo) {
  // A group in one site (CollNet does not cross sites): that site's fabric.
  const ScaleOutFabric& so = topo.scale_out_of_node(topo.node_of(l.by_node.front().front()));
  // A message into the switch and back: the NIC path and one switch, each way.
  const double hop = so.nic_latency.value() + so.switch_latency.value();
  for (int j = 0; j < l.per_node; ++j) {
    std::vector<int> leaves;
    for (const auto& node : l.by_node) {
      const int nic = topo.nic_of(node[static_cast<std::size_t>(j)]);
      b.add_link(topo.nic_tx(nic), per_rail, hop);
      b.add_link(topo.nic_rx(nic), per_rail, hop);
      const int leaf = topo.leaf_of_nic(nic);
      if (std::find(leaves.begin(), leaves.end(), leaf) == leaves.end()) leaves.push_back(leaf);
    }
    if (leaves.size() > 1)
      for (int leaf : leaves) {
        b.add_link(topo.leaf_up(leaf), per_rail, hop + so.switch_latency.value());
        b.add_link(topo.leaf_down(leaf), per_rail, hop + so.switch_latency.value());
      }
  }
}

void direct(PhaseBuilder& b, std::span<const DeviceId> members, double per_pair) {
  for (DeviceId a : members)
    for (DeviceId c : members) b.add_route(a, c, per_pair);
}

}  // namespace inflect::net::loads
