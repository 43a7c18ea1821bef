#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/net/topology.hpp"

using inflect::core::Bandwidth;
using inflect::core::Error;
using inflect::core::ErrorKind;
using inflect::core::gb_per_s;
using inflect::core::gbit_per_s;
using inflect::core::Seconds;
using namespace inflect::net;

namespace {

// Figures here are test inputs chosen for round arithmetic, not the bundled calibration
// (topologies/*.yaml is tested in tests/io/test_topology_loader.cpp).
constexpr double kRel = 1e-9;  // capacities and latencies are exact products of the inputs

TopologySpec dgx_h100(int nodes_per_leaf = 32, double oversubscription = 1.0, bool rail = true) {
  TopologySpec s;
  s.name = "test-dgx-h100";
  s.device = "h100-sxm";
  s.devices_per_node = 8;
  s.intra.kind = IntraFabricKind::switched;
  s.intra.port_bandwidth = gb_per_s(450);
  s.intra.hop_latency = Seconds(0.6e-6);
  s.intra.efficiency = 0.8;
  s.scale_out.technology = "InfiniBand NDR";
  s.scale_out.nics_per_node = 8;
  s.scale_out.nic_bandwidth = gbit_per_s(400);
  s.scale_out.nic_latency = Seconds(0.6e-6);
  s.scale_out.switch_latency = Seconds(0.33e-6);
  s.scale_out.nodes_per_leaf = nodes_per_leaf;
  s.scale_out.oversubscription = oversubscription;
  s.scale_out.rail_optimized = rail;
  s.scale_out.efficiency = 0.8;
  return s;
}

TopologySpec mesh_spec(int devices, std::vector<MeshLink> links, Bandwidth full_mesh = Bandwidth(0)) {
  TopologySpec s = dgx_h100();
  s.devices_per_node = devices;
  s.intra.kind = IntraFabricKind::mesh;
  s.intra.port_bandwidth = full_mesh;
  s.intra.links = std::move(links);
  s.intra.efficiency = 0.5;
  s.intra.hop_latency = Seconds(1e-6);
  s.scale_out.nics_per_node = std::min(devices, 4);
  return s;
}

// The Frontier node links as in topologies/mi250x.yaml.
std::vector<MeshLink> frontier_links() {
  auto l = [](int a, int b, double gbs) { return MeshLink{a, b, gb_per_s(gbs)}; };
  return {l(0, 1, 200), l(2, 3, 200), l(4, 5, 200), l(6, 7, 200), l(0, 6, 100), l(2, 4, 100),
          l(0, 2, 50),  l(1, 3, 50),  l(1, 5, 50),  l(3, 7, 50),  l(4, 6, 50),  l(5, 7, 50)};
}

std::vector<std::string> names(const Topology& t, const Path& p) {
  std::vector<std::string> out;
  for (int i = 0; i < p.size; ++i) out.push_back(t.link_name(p.links[static_cast<std::size_t>(i)]));
  return out;
}

double min_capacity(const Topology& t, const Path& p) {
  double m = 1e300;
  for (int i = 0; i < p.size; ++i) m = std::min(m, t.links()[p.links[static_cast<std::size_t>(i)]].capacity.value());
  return m;
}

}  // namespace

TEST_CASE("dgx-h100 2 nodes: intra-node route is up(a), down(b) through the NVSwitch") {
  Topology t(dgx_h100(), 2);
  // 2 nodes x 8 GPUs = 16 devices; each node has 8 up + 8 down NVLink port links.
  CHECK(t.devices() == 16);
  Path p = t.route(0, 5);
  REQUIRE(p.size == 2);
  CHECK(names(t, p) == std::vector<std::string>{"n0.gpu0->n0.switch", "n0.switch->n0.gpu5"});
  // Capacity per direction = 450 GB/s * 0.8 = 360 GB/s; latency = one switch crossing = 0.6 us.
  for (int i = 0; i < 2; ++i) {
    const Link& l = t.links()[p.links[static_cast<std::size_t>(i)]];
    CHECK(l.cls == LinkClass::scale_up);
    CHECK(l.capacity.value() == doctest::Approx(360e9).epsilon(kRel));
  }
  CHECK(p.latency.value() == doctest::Approx(0.6e-6).epsilon(kRel));
  // The same pair on node 1 uses node 1's copies of those links, offset by one node's 16 links.
  Path q = t.route(8, 13);
  REQUIRE(q.size == 2);
  CHECK(q.links[0] == p.links[0] + 16);
  CHECK(q.links[1] == p.links[1] + 16);
}

TEST_CASE("dgx-h100 2 nodes: same-rail inter-node route is 2 NIC links under one leaf") {
  Topology t(dgx_h100(), 2);
  // GPU 3 of node 0 -> GPU 3 of node 1 (device 11): both on rail 3, one leaf (nodes_per_leaf 32).
  Path p = t.route(3, 11);
  REQUIRE(p.size == 2);
  CHECK(names(t, p) == std::vector<std::string>{"n0.nic3->leaf3", "leaf3->n1.nic3"});
  CHECK(t.links()[p.links[0]].cls == LinkClass::nic_up);
  CHECK(t.links()[p.links[1]].cls == LinkClass::nic_down);
  // NIC capacity = 400 Gb/s = 50 GB/s * 0.8 = 40 GB/s.
  CHECK(min_capacity(t, p) == doctest::Approx(40e9).epsilon(kRel));
  // Latency = NIC 0.6 us + 1 switch * 0.33 us = 0.93 us.
  CHECK(p.latency.value() == doctest::Approx(0.93e-6).epsilon(kRel));
  CHECK(t.switches_crossed(3, 11) == 1);
}

TEST_CASE("dgx-h100: cross-leaf and cross-rail routes go through the core in 4 links") {
  SUBCASE("one node per leaf: same rail, different leaves") {
    Topology t(dgx_h100(/*nodes_per_leaf=*/1), 2);
    // Leaf of NIC 3 of node 0 = group 0 * 8 + 3 = 3; of node 1 = group 1 * 8 + 3 = 11.
    Path p = t.route(3, 11);
    REQUIRE(p.size == 4);
    CHECK(names(t, p) ==
          std::vector<std::string>{"n0.nic3->leaf3", "leaf3->core", "core->leaf11", "leaf11->n1.nic3"});
    // Latency = NIC 0.6 us + 3 switches (leaf, spine, leaf) * 0.33 us = 1.59 us.
    CHECK(p.latency.value() == doctest::Approx(1.59e-6).epsilon(kRel));
    CHECK(t.switches_crossed(3, 11) == 3);
    // A leaf with one node has one NIC under it: uplink = 1 * 50 GB/s / 1 * 0.8 = 40 GB/s.
    CHECK(t.links()[p.links[1]].capacity.value() == doctest::Approx(40e9).epsilon(kRel));
  }
  SUBCASE("cross-rail under one group crosses the core too") {
    Topology t(dgx_h100(), 2);
    // Device 3 (rail 3) -> device 12 (node 1, local 4, rail 4): leaves 3 and 4 differ.
    Path p = t.route(3, 12);
    REQUIRE(p.size == 4);
    CHECK(names(t, p) == std::vector<std::string>{"n0.nic3->leaf3", "leaf3->core", "core->leaf4", "leaf4->n1.nic4"});
    // Rail leaf over 2 nodes has 2 NICs: uplink = 2 * 50 GB/s / 1 * 0.8 = 80 GB/s.
    CHECK(t.links()[p.links[1]].capacity.value() == doctest::Approx(80e9).epsilon(kRel));
    CHECK(t.links()[p.links[1]].cls == LinkClass::leaf_up);
    CHECK(t.links()[p.links[2]].cls == LinkClass::leaf_down);
  }
}

TEST_CASE("oversubscription divides leaf uplink capacity") {
  // Rail-optimized, 2 nodes in one group: 2 NICs per leaf * 50 GB/s * 0.8 = 80 GB/s at 1:1, and
  // 80 / 2 = 40 GB/s at 2:1. NIC links are unchanged (40 GB/s).
  Topology full(dgx_h100(32, 1.0), 2);
  Topology half(dgx_h100(32, 2.0), 2);
  Path pf = full.route(3, 12), ph = half.route(3, 12);
  REQUIRE(pf.size == 4);
  REQUIRE(ph.size == 4);
  CHECK(full.links()[pf.links[1]].capacity.value() == doctest::Approx(80e9).epsilon(kRel));
  CHECK(half.links()[ph.links[1]].capacity.value() == doctest::Approx(40e9).epsilon(kRel));
  CHECK(half.links()[ph.links[2]].capacity.value() == doctest::Approx(40e9).epsilon(kRel));
  CHECK(half.links()[ph.links[0]].capacity.value() == doctest::Approx(40e9).epsilon(kRel));
}

TEST_CASE("not rail-optimized: one leaf per node group, partial last group counts its own NICs") {
  // 5 nodes, 2 per leaf -> groups {0,1}, {2,3}, {4}: 3 leaves. Leaf 0 has 2 nodes * 8 NICs = 16 NICs:
  // uplink = 16 * 50 GB/s / 4 * 0.8 = 160 GB/s; leaf 2 has 8 NICs: 8 * 50 / 4 * 0.8 = 80 GB/s.
  Topology t(dgx_h100(2, 4.0, /*rail=*/false), 5);
  CHECK(t.leaf_groups() == 3);
  // Cross-rail inside a group stays under one leaf: device 3 -> device 12 (node 1, rail 4).
  CHECK(t.route(3, 12).size == 2);
  CHECK(t.switches_crossed(3, 12) == 1);
  Path p = t.route(0, 4 * 8);  // node 0 -> node 4: leaf 0 -> core -> leaf 2
  REQUIRE(p.size == 4);
  CHECK(t.links()[p.links[1]].capacity.value() == doctest::Approx(160e9).epsilon(kRel));
  CHECK(t.links()[p.links[2]].capacity.value() == doctest::Approx(80e9).epsilon(kRel));
  CHECK(t.link_name(p.links[2]) == "core->leaf2");
}

TEST_CASE("mi300x-like full mesh: a pair gets one link, all peers together get 7 links") {
  // Full mesh of 8, 64 GB/s per link per direction, efficiency 0.5: a pair's route is its direct
  // link at 64 * 0.5 = 32 GB/s; GPU 0's 7 routes leave on 7 distinct links, 7 * 32 = 224 GB/s.
  Topology t(mesh_spec(8, {}, gb_per_s(64)), 1);
  double egress = 0;
  std::vector<LinkId> first;
  for (DeviceId b = 1; b < 8; ++b) {
    Path p = t.route(0, b);
    REQUIRE(p.size == 1);
    CHECK(t.links()[p.links[0]].capacity.value() == doctest::Approx(32e9).epsilon(kRel));
    CHECK(p.latency.value() == doctest::Approx(1e-6).epsilon(kRel));
    first.push_back(p.links[0]);
    egress += t.links()[p.links[0]].capacity.value();
  }
  std::sort(first.begin(), first.end());
  CHECK(std::unique(first.begin(), first.end()) == first.end());
  CHECK(egress == doctest::Approx(224e9).epsilon(kRel));
  // 28 pairs, one link each way = 56 scale-up links per node.
  CHECK(t.links().size() == 56u + 2u * 4u + 2u * 4u);
}

TEST_CASE("mi250x Frontier mesh: BFS finds the two-hop routes and breaks ties deterministically") {
  Topology t(mesh_spec(8, frontier_links()), 1);
  SUBCASE("0 -> 7 has no direct link; the only 2-hop route is via 6 (100 then 200 GB/s)") {
    Path p = t.route(0, 7);
    REQUIRE(p.size == 2);
    CHECK(names(t, p) == std::vector<std::string>{"n0.gpu0->n0.gpu6", "n0.gpu6->n0.gpu7"});
    // Bottleneck = min(100, 200) * 0.5 = 50 GB/s; latency = 2 hops * 1 us.
    CHECK(min_capacity(t, p) == doctest::Approx(50e9).epsilon(kRel));
    CHECK(p.latency.value() == doctest::Approx(2e-6).epsilon(kRel));
  }
  SUBCASE("0 -> 3: via 1 (200, 50) and via 2 (50, 200) tie at 50 GB/s; the lower id, 1, wins") {
    Path p = t.route(0, 3);
    REQUIRE(p.size == 2);
    CHECK(names(t, p) == std::vector<std::string>{"n0.gpu0->n0.gpu1", "n0.gpu1->n0.gpu3"});
  }
  SUBCASE("other two-hop pairs") {
    // 1's peers {0, 3, 5}, 7's peers {3, 5, 6}: 1-3-7 and 1-5-7 both (50, 50): tie -> via 3.
    CHECK(names(t, t.route(1, 7)) == std::vector<std::string>{"n0.gpu1->n0.gpu3", "n0.gpu3->n0.gpu7"});
    // 1 -> 6: peers of 6 are {0, 4, 7}; 1-0-6 is 2 hops (200, 100).
    CHECK(names(t, t.route(1, 6)) == std::vector<std::string>{"n0.gpu1->n0.gpu0", "n0.gpu0->n0.gpu6"});
    // 3 -> 5: peers of 3 {1, 2, 7}, of 5 {1, 4, 7} -> 2 hops via 1 (50, 50) or 7 (50, 50): tie -> 1.
    CHECK(names(t, t.route(3, 5)) == std::vector<std::string>{"n0.gpu3->n0.gpu1", "n0.gpu1->n0.gpu5"});
  }
  SUBCASE("every route ends where it should; the Frontier mesh has diameter 2") {
    for (DeviceId a = 0; a < 8; ++a)
      for (DeviceId b = 0; b < 8; ++b) {
        if (a == b) continue;
        Path p = t.route(a, b);
        REQUIRE(p.size >= 1);
        REQUIRE(p.size <= 2);
        std::vector<std::string> n = names(t, p);
        CHECK(n.front().rfind("n0.gpu" + std::to_string(a) + "->", 0) == 0);
        const std::string end = "->n0.gpu" + std::to_string(b);
        CHECK(n.back().substr(n.back().size() - end.size()) == end);
      }
  }
}

TEST_CASE("mesh routing prefers the widest bottleneck among fewest-hop routes, whatever the listing order") {
  // 0-1 and 1-3 at 10 GB/s, 0-2 and 2-3 at 100 GB/s: both routes 0 -> 3 have 2 hops; via 2 has the
  // wider bottleneck (100 vs 10), so it wins although 1 is the lower id.
  auto l = [](int a, int b, double gbs) { return MeshLink{a, b, gb_per_s(gbs)}; };
  std::vector<MeshLink> links = {l(0, 1, 10), l(1, 3, 10), l(0, 2, 100), l(2, 3, 100)};
  Topology t(mesh_spec(4, links), 1);
  CHECK(names(t, t.route(0, 3)) == std::vector<std::string>{"n0.gpu0->n0.gpu2", "n0.gpu2->n0.gpu3"});
  std::reverse(links.begin(), links.end());
  Topology r(mesh_spec(4, links), 1);
  CHECK(names(r, r.route(0, 3)) == std::vector<std::string>{"n0.gpu0->n0.gpu2", "n0.gpu2->n0.gpu3"});
}

TEST_CASE("rail mapping: 4 NICs over 8 GCDs share one NIC per GCD pair") {
  // NIC of local device i = i * 4 / 8 = i / 2.
  Topology t(mesh_spec(8, frontier_links()), 2);
  for (int i = 0; i < 8; ++i) CHECK(t.nic_in_node(i) == i / 2);
  // Devices 0 and 1 (NIC 0) leave over the same NIC up link; device 2 over NIC 1's.
  Path p0 = t.route(0, 8), p1 = t.route(1, 9), p2 = t.route(2, 10);
  CHECK(p0.links[0] == p1.links[0]);
  CHECK(p0.links[0] != p2.links[0]);
  CHECK(t.link_name(p1.links[0]) == "n0.nic0->leaf0");
  CHECK(t.link_name(p1.links[static_cast<std::size_t>(p1.size - 1)]).find("n1.nic0") != std::string::npos);
  // Device 9 is node 1 local 1 -> global NIC 1 * 4 + 0 = 4.
  CHECK(t.nic_of(9) == 4);
}

TEST_CASE("routes are deterministic across calls and constructions") {
  Topology a(mesh_spec(8, frontier_links()), 3), b(mesh_spec(8, frontier_links()), 3);
  for (DeviceId x = 0; x < a.devices(); ++x)
    for (DeviceId y = 0; y < a.devices(); ++y) {
      Path p = a.route(x, y), q = b.route(x, y), r = a.route(x, y);
      REQUIRE(p.size == q.size);
      REQUIRE(p.size == r.size);
      for (int i = 0; i < p.size; ++i) {
        CHECK(p.links[static_cast<std::size_t>(i)] == q.links[static_cast<std::size_t>(i)]);
        CHECK(p.links[static_cast<std::size_t>(i)] == r.links[static_cast<std::size_t>(i)]);
      }
      CHECK(p.latency.value() == q.latency.value());
    }
}

TEST_CASE("the cluster graph has the documented vertices and every route is a walk in it") {
  Topology t(dgx_h100(1), 2);
  // Vertices: 2 nodes * (8 GPUs + 1 switch) + 16 NICs + 16 leaves (2 groups * 8 rails) + 1 core = 51.
  CHECK(t.graph_vertices() == 51u);
  // Edges: 32 NVLink + 32 attachments (GPU<->NIC both ways) + 32 NIC + 32 leaf = 128 links + attach.
  CHECK(t.graph_edges() == 32u + 32u + 32u + 32u);
  CHECK(t.links().size() == 32u + 32u + 32u);
  for (DeviceId a = 0; a < 16; ++a)
    for (DeviceId b = 0; b < 16; ++b) {
      if (a == b) continue;
      std::vector<std::string> n = names(t, t.route(a, b));
      for (std::size_t i = 0; i + 1 < n.size(); ++i) {
        std::string to = n[i].substr(n[i].find("->") + 2), from = n[i + 1].substr(0, n[i + 1].find("->"));
        CHECK(to == from);
      }
    }
}

TEST_CASE("bad specs are input errors that name the key") {
  SUBCASE("disconnected mesh") {
    auto l = [](int a, int b) { return MeshLink{a, b, gb_per_s(50)}; };
    try {
      Topology t(mesh_spec(4, {l(0, 1), l(2, 3)}), 1);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::input);
      CHECK(e.where().key_path == "intra.links");
      CHECK(std::string(e.what()).find("not connected") != std::string::npos);
    }
  }
  SUBCASE("zero nodes") { CHECK_THROWS_AS(Topology(dgx_h100(), 0), Error); }
  SUBCASE("more NICs than devices") {
    TopologySpec s = dgx_h100();
    s.scale_out.nics_per_node = 9;
    CHECK_THROWS_AS(Topology(s, 1), Error);
  }
}

TEST_CASE("timing: 1M routes on a 16,384-GPU cluster (reported, not asserted)") {
  Topology t(dgx_h100(), 2048);
  const DeviceId n = t.devices();
  std::uint64_t sum = 0;
  auto start = std::chrono::steady_clock::now();
  // A fixed pseudo-random walk over pairs, half of them intra-node, so the loop cannot be elided.
  std::uint32_t x = 12345;
  for (int i = 0; i < 1000000; ++i) {
    x = x * 1664525u + 1013904223u;
    DeviceId a = static_cast<DeviceId>(x % static_cast<std::uint32_t>(n));
    DeviceId b = (i % 2) ? static_cast<DeviceId>((x >> 8) % static_cast<std::uint32_t>(n)) : (a / 8) * 8 + (a + 1) % 8;
    Path p = t.route(a, b);
    sum += p.size + p.links[0];
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("1M routes on 2048 nodes: " << s << " s (checksum " << sum << ")");
  CHECK(sum > 0);
}
