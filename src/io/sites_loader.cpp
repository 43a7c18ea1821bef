#include "io/sites_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "inflect/core/strings.hpp"
#include "inflect/io/topology_loader.hpp"
#include "inflect/net/wan_transport.hpp"

namespace inflect::io {

namespace {

// A site holds at most this many nodes: a typo guard (the cluster's own bound applies too).
constexpr std::int64_t kMaxSiteNodes = 1 << 20;

/// Where two topologies' nodes differ, or "" when a site may use `site` in a cluster of `cluster`:
/// the device, the node's fabric and the NICs per node are the cluster's (one device model runs
/// every rank; heterogeneous sites are not modelled yet).
std::string node_difference(const net::TopologySpec& cluster, const net::TopologySpec& site) {
  if (site.device != cluster.device) return fmt::format("device '{}' (the cluster's is '{}')", site.device, cluster.device);
  if (site.devices_per_node != cluster.devices_per_node)
    return fmt::format("{} devices per node (the cluster's nodes have {})", site.devices_per_node, cluster.devices_per_node);
  const net::IntraNodeFabric &a = site.intra, &b = cluster.intra;
  if (a.kind != b.kind || a.port_bandwidth != b.port_bandwidth || a.links.size() != b.links.size() ||
      a.hop_latency != b.hop_latency || a.efficiency != b.efficiency || a.nvls != b.nvls ||
      a.nvls_efficiency != b.nvls_efficiency)
    return "another node fabric (intra)";
  if (site.scale_out.nics_per_node != cluster.scale_out.nics_per_node)
    return fmt::format("{} NICs per node (the cluster's nodes have {})", site.scale_out.nics_per_node,
                       cluster.scale_out.nics_per_node);
  return "";
}

net::WanTransport read_transport(const Node& n) {
  net::WanTransport t;
  if (n.is_scalar()) {
    const std::string kind = n.as_choice({"ideal", "tcp", "rdma"});
    if (kind != "ideal") n.fail(fmt::format("transport {} needs its window and streams: {{kind: {}, window: 4MiB, streams: 8}}", kind, kind));
    return t;
  }
  MapReader r(n);
  const std::string kind = r.required("kind").as_choice({"ideal", "tcp", "rdma"});
  if (kind == "ideal") {
    r.finish();
    return t;
  }
  t.kind = kind == "tcp" ? net::WanTransportKind::tcp : net::WanTransportKind::rdma;
  Node window = r.required("window");
  t.window = window.as_bytes();
  if (!(t.window.value() > 0)) window.fail("the window must be positive");
  t.streams = static_cast<int>(r.required("streams").as_int(1, 4096));
  // The segment only matters under loss: TCP's MSS of a 1500-byte MTU less 52 bytes of IP and TCP
  // headers with timestamps; RoCE's largest MTU, 4096 bytes of payload.
  t.segment = core::Bytes(kind == "tcp" ? 1448.0 : 4096.0);
  if (auto seg = r.optional("segment")) {
    t.segment = seg->as_bytes();
    if (!(t.segment.value() > 0)) seg->fail("the segment must be positive");
  }
  r.finish();
  return t;
}

net::WanLinkSpec read_wan_link(const Node& item, const std::vector<std::string>& names) {
  MapReader r(item);
  net::WanLinkSpec w;
  Node between = r.required("between");
  const auto ends = between.items();
  if (ends.size() != 2) between.fail(fmt::format("expected two site names, got {}", ends.size()));
  int idx[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const std::string name = ends[static_cast<std::size_t>(i)].as_choice(names);  // an unknown site fails here
    idx[i] = static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  }
  if (idx[0] == idx[1]) between.fail(fmt::format("a WAN link joins two different sites, got '{}' twice", names[static_cast<std::size_t>(idx[0])]));
  w.a = idx[0];
  w.b = idx[1];

  auto bandwidth = r.optional("bandwidth");
  auto over = r.optional("oversubscription");
  if (bandwidth.has_value() == over.has_value())
    item.fail("give exactly one of bandwidth (per circuit, per direction) and oversubscription (of the smaller site's NICs)");
  if (bandwidth) {
    w.bandwidth = bandwidth->as_bandwidth();
    if (!(w.bandwidth.value() > 0)) bandwidth->fail("the bandwidth must be positive");
    if (auto c = r.optional("circuits")) w.circuits = static_cast<int>(c->as_int(1, 1 << 16));
  } else {
    w.oversubscription = over->as_double();
    if (!(w.oversubscription >= 1) || !std::isfinite(w.oversubscription))
      over->fail(fmt::format("{} is out of range; allowed: 1 or more (the sites' NICs over the link)", w.oversubscription));
    if (auto c = r.optional("circuits")) c->fail("circuits go with bandwidth; an oversubscribed site edge is one link");
  }

  auto latency = r.optional("latency");
  auto distance = r.optional("distance");
  if (latency.has_value() == distance.has_value())
    item.fail("give exactly one of latency (one way) and distance (fiber route, at 4.9 us/km)");
  if (latency) {
    w.latency = latency->as_duration();
    if (w.latency.value() < 0) latency->fail("the latency must not be negative");
    if (auto d = r.optional("detour")) d->fail("detour goes with distance; a latency is the measured one-way figure");
  } else {
    const core::Meters m = distance->as_length();
    double detour = 1;
    if (auto d = r.optional("detour")) {
      detour = d->as_double();
      if (!(detour >= 1) || !std::isfinite(detour))
        d->fail(fmt::format("{} is out of range; allowed: 1 or more (the fiber's length over the route's)", detour));
    }
    w.latency = net::fiber_latency(m, detour);
  }
  if (auto loss = r.optional("loss")) {
    w.loss = loss->as_double();
    if (!(w.loss >= 0 && w.loss < 1)) loss->fail(fmt::format("{} is out of range; allowed: a probability in [0, 1)", w.loss));
  }
  w.transport = read_transport(r.required("transport"));
  r.finish();
  return w;
}

}  // namespace

std::int64_t read_sites(const Node& sites, const std::optional<Node>& wan, const TopologyResolver& resolve,
               bool cluster_given, net::TopologySpec& cluster) {
  const auto items = sites.items();
  if (items.empty()) sites.fail("expected at least one site: [{name: A, topology: FILE, nodes: N}, ...]");
  std::vector<std::string> names;
  std::vector<net::SiteSpec> out;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    MapReader r(items[i]);
    Node name = r.required("name");
    net::SiteSpec s;
    s.name = name.as_string();
    if (s.name.empty()) name.fail("empty site name");
    for (const auto& n : names)
      if (n == s.name) name.fail(fmt::format("site '{}' is listed twice", s.name));
    Node topo_node = r.required("topology");
    const net::TopologySpec topo = load_topology(resolve(topo_node));
    if (i == 0 && !cluster_given) cluster = topo;
    if (std::string diff = node_difference(cluster, topo); !diff.empty())
      topo_node.fail(fmt::format("site '{}' has {}; every site runs the cluster's device and node (sites of different "
                                 "devices are not modelled yet)",
                                 s.name, diff));
    s.scale_out = topo.scale_out;
    s.file = topo.file;
    s.nodes = static_cast<int>(r.required("nodes").as_int(1, kMaxSiteNodes));
    r.finish();
    total += s.nodes;
    names.push_back(s.name);
    out.push_back(std::move(s));
  }
  std::vector<net::WanLinkSpec> links;
  if (wan)
    for (const Node& item : wan->items()) links.push_back(read_wan_link(item, names));
  if (out.size() > 1 && links.empty())
    sites.fail(fmt::format("{} sites need WAN links between them (cluster.wan)", out.size()));
  cluster.sites = std::move(out);
  cluster.wan = std::move(links);
  return total;
}

}  // namespace inflect::io
