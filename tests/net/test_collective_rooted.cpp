// Broadcast and reduce, the rooted collectives: NCCL runs them on rings only, as a chain from the
// root (broadcast) or to it (reduce) along each channel's ring (NVIDIA/nccl src/device/broadcast.h,
// reduce.h; src/graph/tuning.cc skips every other algorithm for them). The root is members[0].
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"
#include "net_fixtures.hpp"

using inflect::core::Bytes;
using inflect::core::Error;
using inflect::core::ErrorKind;
using inflect::core::gb_per_s;
using inflect::core::gbit_per_s;
using inflect::core::Seconds;
using namespace inflect::net;

namespace {

constexpr double kRel = 1e-9;  // short sums and products of the inputs: a few ulps
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The NVSwitch node of net_fixtures.hpp.
using fixtures::nvswitch;

std::vector<DeviceId> iota(int n) {
  std::vector<DeviceId> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

std::map<LinkId, double> loads(const LoweredCollective& c) {
  std::map<LinkId, double> out;
  for (const auto& ph : c.phases)
    for (const auto& [l, b] : ph.link_bytes) out[l] += b;
  return out;
}

double load(const std::map<LinkId, double>& m, LinkId l) {
  auto it = m.find(l);
  return it == m.end() ? 0 : it->second;
}

// A device's NVLink port up (to the switch) and down: the first and last link of a route through
// the switch.
LinkId up(const Topology& t, DeviceId d) { return t.route(d, d % 8 == 0 ? d + 1 : d - 1).links[0]; }
LinkId down(const Topology& t, DeviceId d) {
  const Path p = t.route(d % 8 == 0 ? d + 1 : d - 1, d);
  return p.links[static_cast<std::size_t>(p.size - 1)];
}

}  // namespace

TEST_CASE("rooted collectives: broadcast over one NVSwitch node is a chain of p - 1 edges of n") {
  // p = 8, root 0, one ring 0 -> 1 -> ... -> 7 (-> 0, the edge into the root, carries nothing).
  // Edge i -> i+1 crosses up(i) and down(i+1): up(0..6) and down(1..7) carry n each, 14 links;
  // up(7) and down(0) nothing. B = 450 x 0.8 = 360 GB/s; p - 1 = 7 steps of one crossing (0.6 us).
  // T = 7 x 0.6 us + n / 360e9 = 4.2 us + 2.98262 ms at n = 1 GiB (busbw = algbw = n / T).
  Topology topo(nvswitch(), 1);
  const double n = kGiB;
  const LoweredCollective c = lower_collective(CollectiveOp::broadcast, iota(8), Bytes(n), topo);
  CHECK(std::string(c.algorithm) == "ring");
  CHECK(std::string(c.protocol) == "simple");
  REQUIRE(c.phases.size() == 1);
  CHECK(c.phases[0].link_bytes.size() == 14);
  for (const auto& [l, b] : c.phases[0].link_bytes) CHECK(b == doctest::Approx(n).epsilon(kRel));
  const auto m = loads(c);
  CHECK(load(m, up(topo, 7)) == 0);
  CHECK(load(m, down(topo, 0)) == 0);
  CHECK(load(m, up(topo, 0)) == doctest::Approx(n).epsilon(kRel));
  CHECK(load(m, down(topo, 7)) == doctest::Approx(n).epsilon(kRel));
  const double expect = 7 * 0.6e-6 + n / 360e9;
  CHECK(estimate_time(c, topo).value() == doctest::Approx(expect).epsilon(kRel));

  // Reduce: the same ring, data towards the root: 1 -> 2 -> ... -> 7 -> 0, the edge out of the root
  // (0 -> 1) carries nothing: up(0) and down(1) idle, the other 14 links n. The same time.
  const LoweredCollective r = lower_collective(CollectiveOp::reduce, iota(8), Bytes(n), topo);
  CHECK(std::string(r.algorithm) == "ring");
  const auto mr = loads(r);
  CHECK(mr.size() == 14);
  CHECK(load(mr, up(topo, 0)) == 0);
  CHECK(load(mr, down(topo, 1)) == 0);
  CHECK(load(mr, down(topo, 0)) == doctest::Approx(n).epsilon(kRel));
  CHECK(estimate_time(r, topo).value() == doctest::Approx(expect).epsilon(kRel));

  // The root is members[0]: rooted at device 5, the idle links move with it.
  const std::vector<DeviceId> from5{5, 6, 7, 0, 1, 2, 3, 4};
  const auto m5 = loads(lower_collective(CollectiveOp::broadcast, from5, Bytes(n), topo));
  CHECK(load(m5, down(topo, 5)) == 0);
  CHECK(load(m5, up(topo, 4)) == 0);
  CHECK(load(m5, down(topo, 0)) == doctest::Approx(n).epsilon(kRel));
}

TEST_CASE("rooted collectives: broadcast over 2 nodes x 8 runs one rail-aligned chain per channel") {
  // 16 devices, root 0. As the ring all-reduce (test_collective.cpp), one channel per rail c: it
  // enters each node at local c, visits the others, the last hands to local c (PXN) which sends on
  // rail c to the next node; the buffer is split over the 8 channels (n/8 each, NCCL's
  // ncclCollCbdPart). In every channel the edge into device 0 is cut:
  //   channel 0: 0 is where the ring enters node 0, so the cut edge crosses nodes: 15 -> 8 (PXN)
  //              and 8 -> 0 on rail 0 carry nothing (node 1's rail-0 NIC sends nothing);
  //   channel c > 0: the edge 7 -> 0 inside node 0.
  // NICs: node 0 sends n/8 on each of its 8 rails; node 1 on rails 1..7: 30 NIC links of n/8.
  // NVLink ports: each channel's cycle in a node crosses every port once each way with n/8: n per
  // port less the cuts, at most n. Port n / 360e9 < NIC (n/8) / 40e9 = n / 320e9: the NIC bounds.
  // Steps p - 1 = 15, nodes - 1 = 1 across: T = 14 x intra route + 1 x inter route + n / 320e9.
  Topology topo(nvswitch(), 2);
  const double n = kGiB;
  const LoweredCollective c = lower_collective(CollectiveOp::broadcast, iota(16), Bytes(n), topo);
  CHECK(std::string(c.algorithm) == "ring");
  const auto m = loads(c);
  int nic_links = 0;
  double max_port = 0;
  for (const auto& [l, b] : m) {
    const LinkClass cls = topo.links()[l].cls;
    CHECK(cls != LinkClass::leaf_up);  // rail-aligned: nothing crosses the spine
    if (cls == LinkClass::nic_up || cls == LinkClass::nic_down) {
      CHECK(b == doctest::Approx(n / 8).epsilon(kRel));
      ++nic_links;
    } else if (cls == LinkClass::scale_up) {
      max_port = std::max(max_port, b);
    }
  }
  CHECK(nic_links == 30);
  CHECK(max_port == doctest::Approx(n).epsilon(kRel));
  CHECK(load(m, topo.nic_tx(topo.nic_of(8))) == 0);  // channel 0's cut edge 8 -> 0
  CHECK(load(m, topo.nic_rx(topo.nic_of(0))) == 0);
  CHECK(load(m, topo.nic_tx(topo.nic_of(9))) == doctest::Approx(n / 8).epsilon(kRel));
  CHECK(load(m, up(topo, 15)) == doctest::Approx(7 * n / 8).epsilon(kRel));  // channel 0's PXN 15 -> 8 cut
  CHECK(load(m, up(topo, 7)) == doctest::Approx(n / 8).epsilon(kRel));       // 7 -> 0 cut in channels 1..7
  const double intra = topo.route(0, 1).latency.value(), inter = topo.route(0, 8).latency.value();
  const double expect = 14 * intra + inter + n / 320e9;
  CHECK(estimate_time(c, topo).value() == doctest::Approx(expect).epsilon(kRel));

  // Reduce cuts the edge out of 0: in channel 1 that is the crossing 0 -> (PXN) 1 -> 9 on rail 1,
  // elsewhere 0 -> 1 inside node 0. 30 NIC links of n/8 again, the same time.
  const LoweredCollective r = lower_collective(CollectiveOp::reduce, iota(16), Bytes(n), topo);
  const auto mr = loads(r);
  int nic_r = 0;
  for (const auto& [l, b] : mr)
    if (topo.links()[l].cls == LinkClass::nic_up || topo.links()[l].cls == LinkClass::nic_down) ++nic_r;
  CHECK(nic_r == 30);
  CHECK(load(mr, topo.nic_tx(topo.nic_of(1))) == 0);
  CHECK(load(mr, topo.nic_tx(topo.nic_of(8))) == doctest::Approx(n / 8).epsilon(kRel));
  CHECK(estimate_time(r, topo).value() == doctest::Approx(expect).epsilon(kRel));
}

TEST_CASE("rooted collectives: one member per node chains across the rail, p - 1 network hops") {
  // 4 nodes, device 3 of each (rail 3): 3 -> 11 -> 19 -> 27, the edge 27 -> 3 cut. Each NIC of
  // nodes 0..2 sends n, of nodes 1..3 receives n. T = 3 x inter route + n / 40e9.
  Topology topo(nvswitch(), 4);
  const std::vector<DeviceId> m{3, 11, 19, 27};
  const double n = 64e6;
  const LoweredCollective c = lower_collective(CollectiveOp::broadcast, m, Bytes(n), topo);
  const auto l = loads(c);
  CHECK(load(l, topo.nic_tx(topo.nic_of(27))) == 0);
  CHECK(load(l, topo.nic_tx(topo.nic_of(19))) == doctest::Approx(n).epsilon(kRel));
  const double inter = topo.route(3, 11).latency.value();
  CHECK(estimate_time(c, topo).value() == doctest::Approx(3 * inter + n / 40e9).epsilon(kRel));
}

TEST_CASE("rooted collectives: a chain pays the pipeline fill under Simple, the ring all-gather not") {
  // A library with ring Simple only: base 8 us, 3 us a step, chunk-pipelined. One node of 8:
  //   broadcast: 8 + 7 x 3 us + x + 2 sqrt(21 us x), x = n / 360e9 (a chain from one source: the
  //              chunks cross the 7 hops in turn);
  //   all-gather of S = 8n/7 (the same (p-1)/p S = n per edge): 8 + 7 x 3 us + x, no fill.
  TopologySpec spec = nvswitch();
  CollectiveLibrary lib;
  lib.name = "ring-simple";
  lib.costs[static_cast<std::size_t>(Algorithm::ring)][static_cast<std::size_t>(Protocol::simple)] =
      ProtocolCost{Seconds(8e-6), Seconds(3e-6), Seconds(10e-6), 1, true};
  spec.collectives.library = lib;
  Topology topo(spec, 1);
  const double n = kGiB, x = n / 360e9, P = 21e-6;
  const double bc = estimate_time(lower_collective(CollectiveOp::broadcast, iota(8), Bytes(n), topo), topo).value();
  CHECK(bc == doctest::Approx(8e-6 + P + x + 2 * std::sqrt(P * x)).epsilon(kRel));
  const double ag = estimate_time(lower_collective(CollectiveOp::all_gather, iota(8), Bytes(8 * n / 7), topo), topo).value();
  CHECK(ag == doctest::Approx(8e-6 + P + x).epsilon(kRel));
  const double rd = estimate_time(lower_collective(CollectiveOp::reduce, iota(8), Bytes(n), topo), topo).value();
  CHECK(rd == doctest::Approx(bc).epsilon(kRel));
  // The search's cost model gives the same time.
  CHECK(collective_cost_model(CollectiveOp::broadcast, iota(8), topo).time(Bytes(n)).value() ==
        doctest::Approx(bc).epsilon(kRel));
}

TEST_CASE("rooted collectives: names, busbw, a group of one, and algorithms NCCL does not run them on") {
  CHECK(std::string(to_string(CollectiveOp::broadcast)) == "broadcast");
  CHECK(std::string(to_string(CollectiveOp::reduce)) == "reduce");
  // nccl-tests broadcast.cu / reduce.cu: busBw = algBw (factor 1).
  CHECK(busbw_factor(CollectiveOp::broadcast, 8) == 1);
  CHECK(busbw_factor(CollectiveOp::reduce, 16) == 1);

  Topology topo(nvswitch(), 2);
  for (CollectiveOp op : {CollectiveOp::broadcast, CollectiveOp::reduce}) {
    CAPTURE(to_string(op));
    // A group of one moves nothing and takes no time, software overhead included.
    CollectiveTuning overhead;
    overhead.software_overhead = Seconds(5e-6);
    const LoweredCollective one = lower_collective(op, std::vector<DeviceId>{3}, Bytes(1e9), topo, overhead);
    CHECK(one.phases.empty());
    CHECK(estimate_time(one, topo).value() == 0);
    CHECK(collective_cost_model(op, std::vector<DeviceId>{3}, topo).time(Bytes(1e9)).value() == 0);
    // Forcing the ring is the free choice.
    CollectiveTuning ring;
    ring.algorithm = Algorithm::ring;
    CHECK(estimate_time(lower_collective(op, iota(16), Bytes(1e8), topo, ring), topo).value() ==
          estimate_time(lower_collective(op, iota(16), Bytes(1e8), topo), topo).value());
    // Any other algorithm is an input error, as NCCL_ALGO without ring is for NCCL ("No
    // algorithm/protocol available", ncclInvalidUsage).
    for (Algorithm a : {Algorithm::tree, Algorithm::nvls, Algorithm::pat, Algorithm::direct, Algorithm::p2p}) {
      CollectiveTuning forced;
      forced.algorithm = a;
      try {
        (void)lower_collective(op, iota(16), Bytes(1e8), topo, forced);
        FAIL("accepted " << to_string(a));
      } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::input);
        CHECK(std::string(e.what()).find("runs on rings only") != std::string::npos);
      }
    }
  }
}

TEST_CASE("rooted collectives: a calibrated profile without a broadcast fit leaves the model's time") {
  // Fits are by collective and level: an all-reduce fit must not touch a broadcast, which keeps the
  // library model's time; a broadcast fit replaces it (latency + scale x, x the model's wire time).
  TopologySpec spec = nvswitch();
  const Topology plain(spec, 1);
  const double n = 256e6;
  const double model = estimate_time(lower_collective(CollectiveOp::broadcast, iota(8), Bytes(n), plain), plain).value();

  CollectiveFit ar;
  ar.op = CollectiveOp::all_reduce;
  ar.level = FabricLevel::intra_node;
  ar.latency = Seconds(30e-6);
  ar.scale = 1.3;
  ar.source = "test";
  spec.collectives.profile.fits = {ar};
  const Topology with_ar(spec, 1);
  CHECK(estimate_time(lower_collective(CollectiveOp::broadcast, iota(8), Bytes(n), with_ar), with_ar).value() ==
        doctest::Approx(model).epsilon(kRel));
  CHECK(collective_cost_model(CollectiveOp::reduce, iota(8), with_ar).time(Bytes(n)).value() ==
        doctest::Approx(model).epsilon(kRel));

  CollectiveFit bc = ar;
  bc.op = CollectiveOp::broadcast;
  bc.latency = Seconds(20e-6);
  bc.scale = 1.25;
  spec.collectives.profile.fits.push_back(bc);
  const Topology with_bc(spec, 1);
  // x = n / 360e9 (the ideal ring's wire time per byte); T = 20 us + 1.25 x.
  CHECK(estimate_time(lower_collective(CollectiveOp::broadcast, iota(8), Bytes(n), with_bc), with_bc).value() ==
        doctest::Approx(20e-6 + 1.25 * n / 360e9).epsilon(kRel));
  // The reduce has none still.
  CHECK(estimate_time(lower_collective(CollectiveOp::reduce, iota(8), Bytes(n), with_bc), with_bc).value() ==
        doctest::Approx(model).epsilon(kRel));
}

TEST_CASE("rooted collectives property: reduce takes what broadcast takes, and more bandwidth never slows either") {
  // On these symmetric groups the reduce is the broadcast run backwards: the same chain length and
  // the same bottleneck.
  int checked = 0;
  for (int nodes : {1, 2, 4})
    for (double n : {8.0, 65536.0, 1e6, 3.3e7, kGiB, 16 * kGiB}) {
      CAPTURE(nodes);
      CAPTURE(n);
      TopologySpec spec = nvswitch();
      const Topology base(spec, nodes);
      TopologySpec nic = spec;
      nic.scale_out.nic_bandwidth = nic.scale_out.nic_bandwidth * 2.0;
      TopologySpec port = spec;
      port.intra.port_bandwidth = port.intra.port_bandwidth * 1.5;
      const Topology more_nic(nic, nodes), more_port(port, nodes);
      const auto m = iota(8 * nodes);
      const double bc = estimate_time(lower_collective(CollectiveOp::broadcast, m, Bytes(n), base), base).value();
      const double rd = estimate_time(lower_collective(CollectiveOp::reduce, m, Bytes(n), base), base).value();
      CHECK(rd == doctest::Approx(bc).epsilon(kRel));
      for (CollectiveOp op : {CollectiveOp::broadcast, CollectiveOp::reduce}) {
        CHECK(estimate_time(lower_collective(op, m, Bytes(n), more_nic), more_nic).value() <= bc * (1 + 1e-12));
        CHECK(estimate_time(lower_collective(op, m, Bytes(n), more_port), more_port).value() <= bc * (1 + 1e-12));
      }
      ++checked;
    }
  CHECK(checked == 18);
}
