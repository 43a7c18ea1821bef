#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"

using inflect::core::Bytes;
using inflect::core::Error;
using inflect::core::ErrorKind;
using inflect::core::gb_per_s;
using inflect::core::gbit_per_s;
using inflect::core::Seconds;
using namespace inflect::net;

namespace {

// Bytes per link and times are short products and sums of the inputs: a few ulps of rounding.
constexpr double kRel = 1e-9;
// Simulated vs measured nccl-tests busbw at the calibration size (the brief's acceptance band).
constexpr double kMeasuredRel = 0.10;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// An NVSwitch node (DGX/HGX H100-like; figures chosen for round arithmetic): 450 GB/s per port
// per direction at efficiency 0.8 = 360 GB/s effective, 0.6 us per GPU-switch-GPU crossing;
// 8x 400 Gb/s NICs (50 GB/s x 0.8 = 40 GB/s effective), 0.6 us NIC + 0.33 us per switch.
TopologySpec nvswitch(int devices = 8) {
  TopologySpec s;
  s.name = "test-nvswitch";
  s.device = "h100-sxm";
  s.devices_per_node = devices;
  s.intra.kind = IntraFabricKind::switched;
  s.intra.port_bandwidth = gb_per_s(450);
  s.intra.hop_latency = Seconds(0.6e-6);
  s.intra.efficiency = 0.8;
  s.scale_out.technology = "InfiniBand NDR";
  s.scale_out.nics_per_node = devices;
  s.scale_out.nic_bandwidth = gbit_per_s(400);
  s.scale_out.nic_latency = Seconds(0.6e-6);
  s.scale_out.switch_latency = Seconds(0.33e-6);
  s.scale_out.nodes_per_leaf = 32;
  s.scale_out.oversubscription = 1;
  s.scale_out.rail_optimized = true;
  s.scale_out.efficiency = 0.8;
  return s;
}

// A full Infinity Fabric mesh (MI300X-like): one 64 GB/s link per direction per GPU pair,
// efficiency 1 so that B_link = 64 GB/s exactly, 0.6 us per hop.
TopologySpec full_mesh(int devices = 8) {
  TopologySpec s = nvswitch(devices);
  s.name = "test-mesh";
  s.intra.kind = IntraFabricKind::mesh;
  s.intra.port_bandwidth = gb_per_s(64);
  s.intra.efficiency = 1.0;
  return s;
}

std::vector<DeviceId> iota(int n, int stride = 1) {
  std::vector<DeviceId> v;
  for (int i = 0; i < n; ++i) v.push_back(i * stride);
  return v;
}

// All bytes a phase puts on links (a message crossing two links counts twice).
double total_bytes(const TransferPhase& ph) {
  double t = 0;
  for (const auto& lb : ph.link_bytes) t += lb.second;
  return t;
}

}  // namespace

TEST_CASE("collective: ring all-reduce on one NVSwitch node matches the alpha-beta formula") {
  // p = 8 ranks, n = 1 GiB. Ring edge i -> i+1 crosses up(i) and down(i+1), so each of the 16 port
  // links carries one edge's 2(p-1)/p * n = 1.75 n. alpha = one crossing = 0.6 us (two half-hop
  // links), 2(p-1) = 14 steps. B = 450 * 0.8 = 360 GB/s.
  // T = 14 * 0.6 us + 1.75 * 2^30 / 360e9 + overhead (2 us) = 8.4 us + 5.2197 ms + 2 us.
  Topology topo(nvswitch(), 1);
  const auto m = iota(8);
  const double n = kGiB, p = 8, alpha = 0.6e-6, B = 360e9, overhead = 2e-6;
  CollectiveTuning tune;
  tune.software_overhead = Seconds(overhead);
  LoweredCollective c = lower_collective(CollectiveOp::all_reduce, m, Bytes(n), topo, tune);
  // The direct exchange moves the same bytes per port on a switch with the same (p-1) latency
  // steps per phase, so it ties the ring; ties go to the ring (header order). The tree moves n
  // per port per phase (2n > 1.75n).
  CHECK(std::string(c.algorithm) == "ring");
  REQUIRE(c.phases.size() == 1);
  const TransferPhase& ph = c.phases[0];
  CHECK(ph.link_bytes.size() == 16);
  for (const auto& [l, b] : ph.link_bytes) {
    CHECK(topo.links()[l].capacity.value() == doctest::Approx(B).epsilon(kRel));
    CHECK(b == doctest::Approx(2 * (p - 1) / p * n).epsilon(kRel));
  }
  CHECK(ph.max_link_bytes == doctest::Approx(1.75 * n).epsilon(kRel));
  const double expect = 2 * (p - 1) * alpha + 2 * (p - 1) / p * n / B + overhead;
  CHECK(estimate_time(c, topo).value() == doctest::Approx(expect).epsilon(kRel));
}

TEST_CASE("collective: ring reduce-scatter and all-gather put (p-1)/p * S on every port") {
  // S = 256 MiB gathered buffer, p = 8: each port link carries 7/8 S; p - 1 = 7 latency steps.
  // T = 7 * 0.6 us + 7/8 * S / 360e9 (no overhead).
  Topology topo(nvswitch(), 1);
  const auto m = iota(8);
  const double S = 256.0 * 1024 * 1024, p = 8, alpha = 0.6e-6, B = 360e9;
  for (CollectiveOp op : {CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
    CollectiveTuning ring;
    ring.force_algorithm = "ring";
    LoweredCollective c = lower_collective(op, m, Bytes(S), topo, ring);
    REQUIRE(c.phases.size() == 1);
    CHECK(c.phases[0].link_bytes.size() == 16);
    for (const auto& [l, b] : c.phases[0].link_bytes) CHECK(b == doctest::Approx((p - 1) / p * S).epsilon(kRel));
    CHECK(estimate_time(c, topo).value() == doctest::Approx((p - 1) * alpha + (p - 1) / p * S / B).epsilon(kRel));
    // Unforced, the ring is still the choice (the direct exchange ties it on a switch).
    CHECK(std::string(lower_collective(op, m, Bytes(S), topo).algorithm) == "ring");
  }
}

TEST_CASE("collective: a full mesh chooses the direct exchange, 2 (n/p) / B_link for all-reduce") {
  // 8 GPUs, one 64 GB/s link per ordered pair. A ring uses one outgoing link per GPU: 1.75 n on
  // it, T_ring = 14 alpha + 1.75 n / 64e9. Direct: reduce-scatter then all-gather, each phase
  // sends n/p to each of the 7 peers over its own link: n/8 on every one of the 56 links.
  // T_direct = 2 * (n/8) / 64e9 + latency, where each phase pays the pairwise (p-1) alpha:
  // 2 * 7 * 0.6 us = 8.4 us. n = 1 GiB: 2 * 2^27 / 64e9 = 4.194304 ms.
  Topology topo(full_mesh(), 1);
  const auto m = iota(8);
  const double n = kGiB, p = 8, alpha = 0.6e-6, B = 64e9;
  LoweredCollective c = lower_collective(CollectiveOp::all_reduce, m, Bytes(n), topo);
  CHECK(std::string(c.algorithm) == "direct");
  REQUIRE(c.phases.size() == 2);
  for (const auto& ph : c.phases) {
    CHECK(ph.link_bytes.size() == 56);
    for (const auto& [l, b] : ph.link_bytes) CHECK(b == doctest::Approx(n / p).epsilon(kRel));
  }
  const double bw_term = 2 * (n / p) / B;
  CHECK(bw_term == doctest::Approx(4.194304e-3).epsilon(kRel));
  CHECK(estimate_time(c, topo).value() == doctest::Approx(bw_term + 2 * (p - 1) * alpha).epsilon(kRel));

  // The ring, forced, is 7x slower in bandwidth: 1.75 n / B vs 0.25 n / B.
  CollectiveTuning ring;
  ring.force_algorithm = "ring";
  LoweredCollective r = lower_collective(CollectiveOp::all_reduce, m, Bytes(n), topo, ring);
  CHECK(estimate_time(r, topo).value() == doctest::Approx(2 * (p - 1) * alpha + 1.75 * n / B).epsilon(kRel));

  // Reduce-scatter on the mesh: one direct phase, n/p per link, T = S/p / B + (p-1) alpha.
  LoweredCollective rs = lower_collective(CollectiveOp::reduce_scatter, m, Bytes(n), topo);
  CHECK(std::string(rs.algorithm) == "direct");
  CHECK(estimate_time(rs, topo).value() == doctest::Approx(n / p / B + (p - 1) * alpha).epsilon(kRel));
}

TEST_CASE("collective: a 2-rank mesh all-reduce reaches busbw = link bandwidth") {
  // p = 2: the ring sends 2(p-1)/p n = n each way over the one link pair; T = 2 alpha + n / B.
  // busbw = algbw * 2(p-1)/p = n / T = B / (1 + 2 alpha B / n): for n = 1 GiB, B = 64 GB/s,
  // 2 alpha B / n = 7.2e-5, so busbw is B to within 1e-4.
  Topology topo(full_mesh(2), 1);
  const auto m = iota(2);
  const double n = kGiB, alpha = 0.6e-6, B = 64e9;
  LoweredCollective c = lower_collective(CollectiveOp::all_reduce, m, Bytes(n), topo);
  const double t = estimate_time(c, topo).value();
  CHECK(t == doctest::Approx(2 * alpha + n / B).epsilon(kRel));
  const double busbw = n / t * busbw_factor(CollectiveOp::all_reduce, 2);
  CHECK(busbw == doctest::Approx(B).epsilon(1e-4));
}

TEST_CASE("collective: tree for tiny messages on many ranks, ring for big ones") {
  // 64 nodes, one rank each (local GPU 0, all on rail 0; 32 nodes per leaf so two leaf groups
  // and cross-group routes go through the core: alpha = 0.6 + 3 * 0.33 = 1.59 us).
  // Ring: 2 * 63 = 126 steps, 2 * 63/64 n on each NIC. Double binary tree: depth 7 levels
  // (2^7 >= 65), 6 steps up + 6 down = 12 steps; an inner node of one tree (a leaf of the other)
  // receives 2 children x n/2 = n per phase: 2 n / B_nic in all.
  //   n = 8 KB:  ring 126 * 1.59 us = 200 us; tree 12 * 1.59 us = 19 us (+ 0.4 us of bytes) -> tree.
  //   n = 1 GiB: ring saves 2 n / 64 / 40e9 = 839 us of bytes, pays 114 * 1.59 = 181 us -> ring.
  Topology topo(nvswitch(), 64);
  const auto m = iota(64, 8);
  const double alpha = 1.59e-6, B = 40e9;
  LoweredCollective small = lower_collective(CollectiveOp::all_reduce, m, Bytes(8192), topo);
  CHECK(std::string(small.algorithm) == "tree");
  REQUIRE(small.phases.size() == 2);
  for (const auto& ph : small.phases) {
    CHECK(ph.latency.value() == doctest::Approx(6 * alpha).epsilon(kRel));
    // NIC links carry at most n; the leaf links carry more (16 children x n/2 cross groups) but
    // have 32 NICs' capacity, so the NICs stay the bottleneck.
    double nic_max = 0;
    for (const auto& [l, b] : ph.link_bytes)
      if (topo.links()[l].cls == LinkClass::nic_up || topo.links()[l].cls == LinkClass::nic_down)
        nic_max = std::max(nic_max, b);
    CHECK(nic_max == doctest::Approx(8192).epsilon(kRel));
  }
  CHECK(estimate_time(small, topo).value() == doctest::Approx(12 * alpha + 2 * 8192 / B).epsilon(kRel));

  LoweredCollective big = lower_collective(CollectiveOp::all_reduce, m, Bytes(kGiB), topo);
  CHECK(std::string(big.algorithm) == "ring");
  CHECK(estimate_time(big, topo).value() ==
        doctest::Approx(126 * alpha + 2.0 * 63 / 64 * kGiB / B).epsilon(kRel));
}

TEST_CASE("collective: hierarchical all-reduce on 2 nodes x 8 GPUs") {
  // k = 8 GPUs per node, m = 2 nodes, n = 1 GiB. A flat 16-rank ring crosses the network on
  // edges 7->8 and 15->0 with 2 * 15/16 n = 1.875 n on a 40 GB/s NIC: ~50 ms. Hierarchical:
  //   phase 1, intra reduce-scatter: each node's ring puts 7/8 n on each port link (32 links),
  //            7 steps x 0.6 us;
  //   phase 2, inter all-reduce on n/8: 8 rings of 2 (GPU j of node 0 <-> GPU j of node 1, same
  //            rail, one leaf): 2 (m-1)/m * n/8 = n/8 on every NIC up and down link (32 links),
  //            2 (m-1) = 2 steps x (0.6 + 0.33) us;
  //   phase 3, intra all-gather: as phase 1.
  //   T = 2 * (7/8 n / 360e9 + 4.2 us) + n/8 / 40e9 + 1.86 us = 5.22 + 3.36 ms + 10.3 us.
  Topology topo(nvswitch(), 2);
  const auto m = iota(16);
  const double n = kGiB;
  LoweredCollective c = lower_collective(CollectiveOp::all_reduce, m, Bytes(n), topo);
  CHECK(std::string(c.algorithm) == "hierarchical");
  REQUIRE(c.phases.size() == 3);
  for (int i : {0, 2}) {
    const TransferPhase& ph = c.phases[static_cast<std::size_t>(i)];
    CHECK(ph.link_bytes.size() == 32);
    for (const auto& [l, b] : ph.link_bytes) {
      CHECK(topo.links()[l].cls == LinkClass::scale_up);
      CHECK(b == doctest::Approx(7.0 / 8 * n).epsilon(kRel));
    }
    CHECK(ph.latency.value() == doctest::Approx(7 * 0.6e-6).epsilon(kRel));
  }
  const TransferPhase& inter = c.phases[1];
  CHECK(inter.link_bytes.size() == 32);
  for (const auto& [l, b] : inter.link_bytes) {
    CHECK((topo.links()[l].cls == LinkClass::nic_up || topo.links()[l].cls == LinkClass::nic_down));
    CHECK(b == doctest::Approx(n / 8).epsilon(kRel));
  }
  CHECK(inter.latency.value() == doctest::Approx(2 * 0.93e-6).epsilon(kRel));
  const double expect = 2 * (7.0 / 8 * n / 360e9 + 7 * 0.6e-6) + n / 8 / 40e9 + 2 * 0.93e-6;
  CHECK(estimate_time(c, topo).value() == doctest::Approx(expect).epsilon(kRel));

  // Hierarchical reduce-scatter: intra RS (7/8 S per port), then inter RS on S/8:
  // (m-1)/m * S/8 = S/16 per NIC link, m - 1 = 1 step.
  LoweredCollective rs = lower_collective(CollectiveOp::reduce_scatter, m, Bytes(n), topo);
  CHECK(std::string(rs.algorithm) == "hierarchical");
  REQUIRE(rs.phases.size() == 2);
  CHECK(rs.phases[1].max_link_bytes == doctest::Approx(n / 16).epsilon(kRel));
  CHECK(rs.phases[1].latency.value() == doctest::Approx(0.93e-6).epsilon(kRel));
}

TEST_CASE("collective: pairwise all-to-all bytes") {
  // Each rank sends n/p of its n-byte buffer to each of the p - 1 others, p - 1 latency steps.
  // NVSwitch, p = 8, n = 64 MiB: each port up link carries 7 * n/8 out, each down link 7 * n/8 in.
  // Full mesh: every directed link carries exactly one n/8 message.
  const double n = 64.0 * 1024 * 1024;
  {
    Topology topo(nvswitch(), 1);
    LoweredCollective c = lower_collective(CollectiveOp::all_to_all, iota(8), Bytes(n), topo);
    CHECK(std::string(c.algorithm) == "direct");
    REQUIRE(c.phases.size() == 1);
    CHECK(c.phases[0].link_bytes.size() == 16);
    for (const auto& [l, b] : c.phases[0].link_bytes) CHECK(b == doctest::Approx(7.0 / 8 * n).epsilon(kRel));
    CHECK(estimate_time(c, topo).value() == doctest::Approx(7 * 0.6e-6 + 7.0 / 8 * n / 360e9).epsilon(kRel));
  }
  {
    Topology topo(full_mesh(), 1);
    LoweredCollective c = lower_collective(CollectiveOp::all_to_all, iota(8), Bytes(n), topo);
    REQUIRE(c.phases.size() == 1);
    CHECK(c.phases[0].link_bytes.size() == 56);
    for (const auto& [l, b] : c.phases[0].link_bytes) CHECK(b == doctest::Approx(n / 8).epsilon(kRel));
    CHECK(total_bytes(c.phases[0]) == doctest::Approx(7 * n).epsilon(kRel));
  }
}

TEST_CASE("collective: send/recv follows the route from members[0] to members[1]") {
  // 2 nodes. GPU 3 -> GPU 11 (both rail 3, one leaf): n bytes on n0.nic3 up and n1.nic3 down,
  // latency = NIC 0.6 us + one switch 0.33 us, plus the overhead. GPU 0 -> GPU 5 in one node:
  // n on up(0) and down(5), latency 0.6 us.
  Topology topo(nvswitch(), 2);
  const double n = 4.0 * 1024 * 1024;
  CollectiveTuning tune;
  tune.software_overhead = Seconds(1e-6);
  {
    const std::vector<DeviceId> m{3, 11};
    LoweredCollective c = lower_collective(CollectiveOp::send_recv, m, Bytes(n), topo, tune);
    REQUIRE(c.phases.size() == 1);
    const Path path = topo.route(3, 11);
    REQUIRE(path.size == 2);
    REQUIRE(c.phases[0].link_bytes.size() == 2);
    std::vector<LinkId> expect_links{path.links[0], path.links[1]};
    std::sort(expect_links.begin(), expect_links.end());
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(c.phases[0].link_bytes[i].first == expect_links[i]);
      CHECK(c.phases[0].link_bytes[i].second == doctest::Approx(n).epsilon(kRel));
    }
    CHECK(topo.link_name(path.links[0]) == "n0.nic3->leaf3");
    CHECK(c.phases[0].latency.value() == doctest::Approx(0.93e-6 + 1e-6).epsilon(kRel));
    CHECK(estimate_time(c, topo).value() == doctest::Approx(0.93e-6 + 1e-6 + n / 40e9).epsilon(kRel));
  }
  {
    const std::vector<DeviceId> m{0, 5};
    LoweredCollective c = lower_collective(CollectiveOp::send_recv, m, Bytes(n), topo);
    REQUIRE(c.phases.size() == 1);
    REQUIRE(c.phases[0].link_bytes.size() == 2);
    CHECK(topo.link_name(c.phases[0].link_bytes[0].first) == "n0.gpu0->n0.switch");
    CHECK(topo.link_name(c.phases[0].link_bytes[1].first) == "n0.switch->n0.gpu5");
    CHECK(estimate_time(c, topo).value() == doctest::Approx(0.6e-6 + n / 360e9).epsilon(kRel));
  }
}

TEST_CASE("collective: busbw factors, single-member groups and forced algorithms") {
  // nccl-tests PERFORMANCE.md: all-reduce 2(p-1)/p; RS, AG, all-to-all (p-1)/p; p2p 1.
  CHECK(busbw_factor(CollectiveOp::all_reduce, 8) == doctest::Approx(1.75).epsilon(kRel));
  CHECK(busbw_factor(CollectiveOp::all_reduce, 2) == doctest::Approx(1.0).epsilon(kRel));
  CHECK(busbw_factor(CollectiveOp::reduce_scatter, 8) == doctest::Approx(0.875).epsilon(kRel));
  CHECK(busbw_factor(CollectiveOp::all_gather, 16) == doctest::Approx(15.0 / 16).epsilon(kRel));
  CHECK(busbw_factor(CollectiveOp::all_to_all, 4) == doctest::Approx(0.75).epsilon(kRel));
  CHECK(busbw_factor(CollectiveOp::send_recv, 2) == doctest::Approx(1.0).epsilon(kRel));

  // One member: nothing to move, no phase, zero time (and no software overhead either).
  Topology topo(nvswitch(), 1);
  const std::vector<DeviceId> one{3};
  CollectiveTuning tune;
  tune.software_overhead = Seconds(5e-6);
  for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather,
                          CollectiveOp::all_to_all}) {
    LoweredCollective c = lower_collective(op, one, Bytes(1e6), topo, tune);
    CHECK(c.phases.empty());
    CHECK(estimate_time(c, topo).value() == 0.0);
  }

  // Forcing an algorithm that does not apply is an input error naming the choices.
  CollectiveTuning hier;
  hier.force_algorithm = "hierarchical";
  CHECK_THROWS_AS(lower_collective(CollectiveOp::all_reduce, iota(8), Bytes(1e6), topo, hier), Error);
  CollectiveTuning tree;
  tree.force_algorithm = "tree";
  LoweredCollective t = lower_collective(CollectiveOp::all_reduce, iota(8), Bytes(1e6), topo, tree);
  CHECK(std::string(t.algorithm) == "tree");
}

// ---------------------------------------------------------------------------------------------
// Simulated vs measured nccl-tests busbw.

namespace {

// The measurements live in tests/data/ (copied with their provenance; tests/data/README.md).
std::string test_data(const std::string& rel) { return std::string(INFLECT_SOURCE_DIR) + "/tests/data/" + rel; }

// The A100 file is a markdown table "| 1K | 0.04 |" whose sizes are nccl-tests' powers of two
// written loosely in decimal (65K = 65536, 132K = 131072, 8G = 8589934592): read the figure with
// K/M/G = 1e3/1e6/1e9 and round to the nearest power of two.
std::vector<std::pair<double, double>> read_a100_table(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::pair<double, double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|') continue;
    std::stringstream ss(line.substr(1));
    std::string size, bw;
    std::getline(ss, size, '|');
    std::getline(ss, bw, '|');
    double v = 0, busbw = 0;
    char unit = 0;
    if (std::sscanf(size.c_str(), " %lf%c", &v, &unit) != 2 || std::sscanf(bw.c_str(), " %lf", &busbw) != 1) continue;
    const double scale = unit == 'K' ? 1e3 : unit == 'M' ? 1e6 : unit == 'G' ? 1e9 : 0;
    if (scale == 0) continue;
    rows.push_back({std::exp2(std::round(std::log2(v * scale))), busbw * 1e9});
  }
  return rows;
}

// DGX A100 as topologies/dgx-a100.yaml: 300 GB/s per port x 0.772, 0.6 us hop, 6.6 us per call.
TopologySpec dgx_a100() {
  TopologySpec s = nvswitch();
  s.name = "test-dgx-a100";
  s.device = "a100-sxm-80g";
  s.intra.port_bandwidth = gb_per_s(300);
  s.intra.efficiency = 0.772;
  s.scale_out.technology = "InfiniBand HDR";
  s.scale_out.nic_bandwidth = gbit_per_s(200);
  s.scale_out.switch_latency = Seconds(0.2e-6);
  return s;
}

// HGX H200 as topologies/hgx-h200.yaml: 450 GB/s per port x 0.816, 0.6 us hop.
TopologySpec hgx_h200() {
  TopologySpec s = nvswitch();
  s.name = "test-hgx-h200";
  s.device = "h200-sxm";
  s.intra.efficiency = 0.816;
  return s;
}

constexpr double kCallOverhead = 6.6e-6;  // dgx-a100.yaml collective_overhead (NCCL base latency)

double simulated_busbw(CollectiveOp op, const Topology& topo, double bytes, const char** algo) {
  CollectiveTuning tune;
  tune.software_overhead = Seconds(kCallOverhead);
  const auto m = iota(8);
  LoweredCollective c = lower_collective(op, m, Bytes(bytes), topo, tune);
  *algo = c.algorithm;
  return bytes / estimate_time(c, topo).value() * busbw_factor(op, 8);
}

}  // namespace

TEST_CASE("collective: dgx-a100 all-reduce busbw vs nccl-tests (Azure ND A100 v4)") {
  // Measured: nccl-tests all_reduce_perf in-place busbw on 8x A100 SXM4 (1 node). Simulated:
  // estimate_time of the chosen lowering on a hand-built DGX A100 node with the yaml's figures,
  // busbw = S / T * 2(p-1)/p. At 8 GiB the ring's bytes dominate: T = 1.75 S / (300e9 * 0.772)
  // + 14 * 0.6 us + 6.6 us, so busbw = 231.6 GB/s * (1 - 7e-6): the efficiency was fitted on this
  // row, so this checks the busbw accounting, not a fit. Small sizes are printed, not asserted.
  const auto rows = read_a100_table(test_data("nccl/a100x8_allreduce_busbw-only_azure-nd_a100_v4.txt"));
  REQUIRE(rows.size() >= 20);
  Topology topo(dgx_a100(), 1);
  std::printf("\n dgx-a100 all-reduce, 8 GPUs: simulated vs measured busbw (nccl-tests, Azure ND A100 v4)\n");
  std::printf(" %14s  %-6s  %10s  %10s  %7s\n", "bytes", "algo", "sim GB/s", "meas GB/s", "sim/meas");
  double last_sim = 0, last_meas = 0;
  for (const auto& [bytes, meas] : rows) {
    const char* algo = "";
    const double sim = simulated_busbw(CollectiveOp::all_reduce, topo, bytes, &algo);
    std::printf(" %14.0f  %-6s  %10.2f  %10.2f  %7.2f\n", bytes, algo, sim / 1e9, meas / 1e9, sim / meas);
    last_sim = sim;
    last_meas = meas;
  }
  CHECK(rows.back().first == 8589934592.0);
  CHECK(last_sim == doctest::Approx(last_meas).epsilon(kMeasuredRel));
}

TEST_CASE("collective: hgx-h200 ring busbw at 16 GiB vs measured (ml-engineering)") {
  // Measured (stas00, 8x H200, 16 GiB, ring): all-reduce 367.2, all-gather 361.4, reduce-scatter
  // 362.9 GB/s. Simulated busbw at 16 GiB: the ring's bytes per port are busbw_factor * S, so
  // busbw = 450 * 0.816 = 367.2 GB/s less the latency share (~1e-6); the intra efficiency was
  // fitted on the all-reduce row, and RS/AG follow from the same link model.
  std::ifstream in(test_data("nccl/h200x8_allreduce-allgather-reducescatter_16GiB_ml-engineering.txt"));
  REQUIRE(in.good());
  Topology topo(hgx_h200(), 1);
  const std::map<std::string, CollectiveOp> ops{{"all-reduce", CollectiveOp::all_reduce},
                                                {"all-gather", CollectiveOp::all_gather},
                                                {"reduce-scatter", CollectiveOp::reduce_scatter}};
  std::printf("\n hgx-h200, 8 GPUs, 16 GiB: simulated vs measured busbw (ring rows)\n");
  std::printf(" %-16s  %-6s  %10s  %10s  %7s\n", "collective", "algo", "sim GB/s", "meas GB/s", "sim/meas");
  int compared = 0;
  std::string line;
  while (std::getline(in, line)) {
    // "| all-reduce, `NCCL_NVLS_ENABLE=0` | Ring | 367.2GBps |  82% |": name, algo, busbw.
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) cells.push_back(cell);
    if (cells.size() < 3 || cells[1].find("Ring") == std::string::npos) continue;  // NVLS is not modelled
    std::string name = cells[0].substr(cells[0].find_first_not_of(' '));
    name = name.substr(0, name.find_first_of(", "));
    const auto op = ops.find(name);
    if (op == ops.end()) continue;
    const double meas = std::stod(cells[2]) * 1e9;
    const char* algo = "";
    const double sim = simulated_busbw(op->second, topo, 16 * kGiB, &algo);
    std::printf(" %-16s  %-6s  %10.2f  %10.2f  %7.3f\n", name.c_str(), algo, sim / 1e9, meas / 1e9, sim / meas);
    CHECK(sim == doctest::Approx(meas).epsilon(kMeasuredRel));
    ++compared;
  }
  CHECK(compared == 3);
}

TEST_CASE("collective: the cost model is the lowest line and equals lowering at every size") {
  // The 64-node group above switches from tree to ring with the size; a 2-node x 8 group has
  // ring, tree and hierarchical; one NVSwitch node has ring and direct. The model, built from
  // one lowering per algorithm, must give estimate_time(lower_collective(...)) at every size.
  Topology topo(nvswitch(), 64);
  const std::vector<std::vector<DeviceId>> groups = {iota(64, 8), iota(16), iota(8), iota(2, 8)};
  for (const auto& g : groups)
    for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather, CollectiveOp::all_to_all}) {
      const CollectiveCostModel model = collective_cost_model(op, g, topo);
      CHECK(!model.lines.empty());
      for (double n : {1.0, 8192.0, 1e6, 3.3e7, kGiB, 20 * kGiB}) {
        CAPTURE(g.size());
        CAPTURE(n);
        const double lowered = estimate_time(lower_collective(op, g, Bytes(n), topo), topo).value();
        CHECK(model.time(Bytes(n)).value() == doctest::Approx(lowered).epsilon(1e-9));
      }
    }
  const auto tree_then_ring = collective_cost_model(CollectiveOp::all_reduce, iota(64, 8), topo);
  CHECK(tree_then_ring.lines.size() >= 2);
  CHECK(collective_cost_model(CollectiveOp::all_reduce, iota(1), topo).time(Bytes(1e9)).value() == 0);
}
