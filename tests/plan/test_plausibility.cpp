// plan::plausibility_warnings on the toy cluster (NIC 10 GB/s = 80 Gb/s, hops of 0 s, the toy
// device's board power), each bound crossed just past its edge.
#include <doctest/doctest.h>

#include <string>

#include "inflect/plan/plausibility.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("plausibility: the toy cluster is plausible, and each bound warns just past its edge") {
  plan::Experiment e = inflect::test::toy_gpt_experiment();
  e.cluster.device.board_power = core::Watts(700);
  CHECK(plan::plausibility_warnings(e).empty());

  SUBCASE("a NIC above 3.2 Tb/s (400 GB/s) or below 1 Gb/s (125 MB/s)") {
    e.cluster.topology.scale_out.nic_bandwidth = core::Bandwidth(400e9);  // exactly 3.2 Tb/s: plausible
    CHECK(plan::plausibility_warnings(e).empty());
    e.cluster.topology.scale_out.nic_bandwidth = core::Bandwidth(401e9);
    REQUIRE(plan::plausibility_warnings(e).size() == 1);
    CHECK(contains(plan::plausibility_warnings(e)[0], "scale_out.nic_bandwidth 3208 Gb/s"));  // 401e9 * 8 / 1e9
    e.cluster.topology.scale_out.nic_bandwidth = core::Bandwidth(400.0 / 8);  // `400` read as bytes/s: 400 b/s
    REQUIRE(plan::plausibility_warnings(e).size() == 1);
    CHECK(contains(plan::plausibility_warnings(e)[0], "1 Gb/s to 3.2 Tb/s"));
  }
  SUBCASE("a latency over 1 ms") {
    e.cluster.topology.intra.hop_latency = core::Seconds(1e-3);  // exactly 1 ms: plausible
    CHECK(plan::plausibility_warnings(e).empty());
    e.cluster.topology.intra.hop_latency = core::Seconds(0.6);  // `0.6` read as seconds
    e.cluster.topology.scale_out.switch_latency = core::Seconds(2e-3);
    const auto w = plan::plausibility_warnings(e);
    REQUIRE(w.size() == 2);
    CHECK(contains(w[0], "scale_out.switch_latency 2000 us"));
    CHECK(contains(w[1], "intra.hop_latency 600000 us"));
  }
  SUBCASE("a device over 2 kW") {
    e.cluster.device.board_power = core::Watts(2000);  // exactly 2 kW: plausible
    CHECK(plan::plausibility_warnings(e).empty());
    e.cluster.device.board_power = core::Watts(2800);
    REQUIRE(plan::plausibility_warnings(e).size() == 1);
    CHECK(contains(plan::plausibility_warnings(e)[0], "board_power 2800 W is over 2 kW"));
  }
}
