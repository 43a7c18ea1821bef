// Knee, threshold and crossover detection on synthetic curves whose answers are worked out by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "inflect/analysis/inflection.hpp"

using namespace inflect::analysis;

namespace {

Series series(const std::string& name, const std::vector<std::pair<double, double>>& pts) {
  Series s;
  s.name = name;
  for (const auto& [x, y] : pts) {
    ScalingPoint p;
    p.scale = x;
    p.throughput = y;
    p.step_time = inflect::core::Seconds(1);
    p.breakdown.compute = inflect::core::Seconds(1);
    s.points.push_back(p);
  }
  return s;
}

bool has(const std::vector<Finding>& fs, FindingKind k) {
  for (const auto& f : fs)
    if (f.kind == k) return true;
  return false;
}

}  // namespace

TEST_CASE("kneedle: a curve linear to x=4 then shallow has its knee at x=4") {
  // x = 0..8, y rises by 2 per step to 8 at x=4, then by 0.5. Normalised (x/8, y/10), the difference
  // d = y_n - x_n is 0, .075, .15, .225, .3, .225, .15, .075, 0: one local maximum at x=4 (0.3). The
  // threshold is 0.3 - S/(n-1) = 0.3 - 1/8 = 0.175, and d(6) = 0.15 falls below it: knee at x=4.
  const std::vector<double> x{0, 1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> y{0, 2, 4, 6, 8, 8.5, 9, 9.5, 10};
  const auto k = kneedle(x, y, 1.0);
  REQUIRE(k.size() == 1);
  CHECK(x[k[0]] == 4);
  // S = 3 asks for a drop of 3/8 = 0.375 below 0.3, which the curve never makes: no knee.
  CHECK(kneedle(x, y, 3.0).empty());
}

TEST_CASE("kneedle: straight and convex curves have no knee, too few points have none") {
  CHECK(kneedle({1, 2, 3, 4, 5}, {2, 4, 6, 8, 10}, 1.0).empty());    // d = 0 everywhere
  CHECK(kneedle({1, 2, 3, 4, 5}, {1, 2, 4, 8, 16}, 1.0).empty());    // d <= 0, no interior maximum
  CHECK(kneedle({1, 2}, {1, 5}, 1.0).empty());
}

TEST_CASE("scaling metrics along an axis that is not the device count divide by the devices") {
  // A micro-batch scan on 8 GPUs: throughput 320k, 350k, 400k at micro-batch 1, 2, 4. Per device
  // is throughput / 8 (40k, 43.75k, 50k), not throughput / micro-batch; efficiency stays "against
  // linear in the scale": 350/(2*320) = 54.7%, 400/(4*320) = 31.25%.
  auto s = series("mb", {{1, 320e3}, {2, 350e3}, {4, 400e3}});
  for (auto& p : s.points) p.devices = 8;
  const auto m = scaling_metrics(s);
  CHECK(m[0].per_device == doctest::Approx(40e3));
  CHECK(m[2].per_device == doctest::Approx(50e3));
  CHECK(m[1].efficiency == doctest::Approx(350.0 / 640));
  CHECK(m[2].efficiency == doctest::Approx(0.3125));
  CHECK(m[1].doubling_gain == doctest::Approx(350.0 / 320 - 1));
}

TEST_CASE("series findings: doubling gain and efficiency floor at the hand-computed points") {
  // Throughput 100, 190, 300, 360 at 128..1024: gains per doubling 90%, 57.9%, 20%; per-device
  // 0.781, 0.742, 0.586, 0.352, so efficiency 100%, 95%, 75%, 45%.
  const auto s = series("plan", {{128, 100}, {256, 190}, {512, 300}, {1024, 360}});
  const auto m = scaling_metrics(s);
  CHECK(m[1].doubling_gain == doctest::Approx(0.9));
  CHECK(m[2].doubling_gain == doctest::Approx(300.0 / 190 - 1));
  CHECK(m[3].efficiency == doctest::Approx(0.45));
  CHECK(m[1].marginal_per_device == doctest::Approx(90.0 / 128));
  InflectionOptions o;
  o.min_doubling_gain = 0.6;
  o.efficiency_floor = 0.7;
  const auto fs = series_findings(s, o, "GPUs");
  bool gain = false, floor = false;
  for (const auto& f : fs) {
    if (f.kind == FindingKind::doubling_gain) {
      gain = true;
      CHECK(f.from_scale == 256);  // 256 -> 512 is the first doubling under 60%
      CHECK(f.to_scale == 512);
    }
    if (f.kind == FindingKind::efficiency_floor) {
      floor = true;
      CHECK(f.scale == 1024);  // 75% at 512 passes, 45% at 1024 does not
    }
  }
  CHECK(gain);
  CHECK(floor);
  // Unset thresholds are not checked.
  CHECK_FALSE(has(series_findings(s, InflectionOptions{}, "GPUs"), FindingKind::doubling_gain));
}

TEST_CASE("series findings: a doubling-gain drop says which overhead grew, with its shares") {
  auto s = series("fsdp", {{256, 100}, {512, 120}});
  s.points[0].breakdown.exposed_comm.dp = inflect::core::Seconds(0.04);  // 4% of a 1 s step
  s.points[1].breakdown.exposed_comm.dp = inflect::core::Seconds(0.31);  // 31%
  InflectionOptions o;
  o.min_doubling_gain = 0.6;
  const auto fs = series_findings(s, o, "GPUs");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].why == "exposed DP communication rises from 4% to 31% of the step between 256 and 512 GPUs");
}

TEST_CASE("crossovers: interpolated in log2(scale) from the log throughput ratio") {
  // a/b = 100/120, 180/200, 300/280: the ratio's log changes sign between 256 and 512.
  // r(256) = ln(0.9) = -0.10536, r(512) = ln(300/280) = 0.06899; t = 0.10536 / 0.17435 = 0.6043,
  // so the crossover sits at 2^(8 + 0.6043) = 389 GPUs, and a is ahead after it.
  const auto a = series("low-comm", {{128, 100}, {256, 180}, {512, 300}});
  const auto b = series("high-comm", {{128, 120}, {256, 200}, {512, 280}});
  const auto fs = crossovers(a, b, "GPUs");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].kind == FindingKind::crossover);
  CHECK(fs[0].series == "low-comm");
  CHECK(fs[0].other == "high-comm");
  const double r0 = std::log(0.9), r1 = std::log(300.0 / 280);
  CHECK(fs[0].scale == doctest::Approx(std::exp2(8 + r0 / (r0 - r1))));
  CHECK(fs[0].scale == doctest::Approx(389.3).epsilon(0.001));
  CHECK(fs[0].from_scale == 256);
  CHECK(fs[0].to_scale == 512);
  // Symmetric in the argument order.
  const auto back = crossovers(b, a, "GPUs");
  REQUIRE(back.size() == 1);
  CHECK(back[0].series == "low-comm");
  CHECK(back[0].scale == doctest::Approx(fs[0].scale));
}

TEST_CASE("crossovers: a lead within kCrossoverMargin (0.5%) is a tie, not a crossing") {
  // 9.636e5 against 9.635e5 (0.01%) on one side: no crossover, whatever the other side.
  const auto a = series("x", {{128, 9.635e5}, {256, 9.7e5}});
  const auto b = series("y", {{128, 9.636e5}, {256, 9.5e5}});
  for (const auto& f : crossovers(a, b, "GPUs")) CHECK(f.kind != FindingKind::crossover);
  // b leads by 2% at 128, the two tie at 256 (0.2%), a leads by 3% at 512: one crossing, from the
  // last decisive point (128) to the next (512), interpolated between them in log2(scale):
  // r(128) = ln(1/1.02) = -0.0198, r(512) = ln(1.03) = 0.02956; t = 0.4012; 2^(7 + 2 t) = 223 GPUs.
  const auto c = series("c", {{128, 100}, {256, 200.4}, {512, 412}});
  const auto d = series("d", {{128, 102}, {256, 200}, {512, 400}});
  const auto fs = crossovers(c, d, "GPUs");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].series == "c");
  CHECK(fs[0].from_scale == 128);
  CHECK(fs[0].to_scale == 512);
  const double r0 = std::log(100.0 / 102), r1 = std::log(412.0 / 400);
  CHECK(fs[0].scale == doctest::Approx(std::exp2(7 + 2 * r0 / (r0 - r1))));
}

TEST_CASE("crossovers: curves that never cross give one lead finding with the margin range") {
  const auto a = series("h200", {{128, 110}, {256, 220}});
  const auto b = series("h100", {{128, 100}, {256, 190}});
  const auto fs = crossovers(a, b, "GPUs");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].kind == FindingKind::lead);
  CHECK(fs[0].series == "h200");
  CHECK(fs[0].what.find("by 10.0% to 15.8%") != std::string::npos);  // 110/100, 220/190
}

TEST_CASE("series findings: infeasible scales are reported with their reason") {
  auto s = series("fsdp", {{128, 1}, {256, 2}});
  s.infeasible.push_back({512, "invalid: global_batch not divisible"});
  const auto fs = series_findings(s, InflectionOptions{}, "GPUs");
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].kind == FindingKind::infeasible);
  CHECK(fs[0].scale == 512);
  CHECK(fs[0].why.find("divisible") != std::string::npos);
}

TEST_CASE("inflection verdict: every series gets one, knee or no knee, computed from the curve") {
  // No knee: 100, 199, 396, 780 tokens/s at 16..128 GPUs; efficiency 100%, 99.5%, 99%, 97.5%
  // (780/128 over 100/16). Kneedle on log2: x_n = 0, 1/3, 2/3, 1; y_n = 0, .146, .435, 1; d <= 0
  // inside, so no knee; the largest whole percent below 97.5% is 97.
  const auto flat = series("tp1", {{16, 100}, {32, 199}, {64, 396}, {128, 780}});
  CHECK(inflection_verdict(flat, InflectionOptions{}, "GPUs", true) ==
        "no knee between 16 and 128 GPUs: efficiency stays above 97% (Kneedle, S = 1)");
  // A knee: 100, 200, 400, 440, 460 at 16..256. x_n = 0, .25, .5, .75, 1; y_n = 0, .278, .833, .944,
  // 1; d = 0, .028, .333, .194, 0: a maximum at 64 GPUs, and d(256) = 0 falls below .333 - 1/4.
  // 64 -> 128 buys 440/400 - 1 = 10%; efficiency (400/64)/(100/16) = 100% -> (440/128)/(100/16) = 55%.
  auto bent = series("fsdp", {{16, 100}, {32, 200}, {64, 400}, {128, 440}, {256, 460}});
  bent.points[3].breakdown.exposed_comm.dp = inflect::core::Seconds(0.4);  // 40% of a 1 s step
  CHECK(inflection_verdict(bent, InflectionOptions{}, "GPUs", true) ==
        "knee at 64 GPUs (Kneedle, S = 1): going on to 128 GPUs buys 10% more throughput, efficiency 100% -> 55%, "
        "because exposed DP communication rises from 0% to 40% of the step between 64 and 128 GPUs");
  // Along an axis that is not the device count, efficiency against linear means nothing: the
  // throughput change instead (135/100 - 1 = +35%). d = 0, -.105, .048, 0: .048 never falls by 1/3.
  const auto mb = series("mb", {{1, 100}, {2, 108}, {4, 125}, {8, 135}});
  CHECK(inflection_verdict(mb, InflectionOptions{}, "training.micro_batch", false) ==
        "no knee between 1 and 8 training.micro_batch: throughput goes from 100 to 135 tokens/s, +35% (Kneedle, S = 1)");
  CHECK(inflection_verdict(series("two", {{128, 1}, {256, 2}}), InflectionOptions{}, "GPUs", true) ==
        "no knee can be told: Kneedle needs 3 points, the series has 2 (128 and 256 GPUs)");
  CHECK(inflection_verdict(series("none", {}), InflectionOptions{}, "GPUs", true) ==
        "no knee can be told: the series has no simulated point");
}

TEST_CASE("format_scale groups thousands") {
  CHECK(format_scale(1024) == "1,024");
  CHECK(format_scale(16384) == "16,384");
  CHECK(format_scale(128) == "128");
  CHECK(format_scale(389.25) == "389.2");
}
