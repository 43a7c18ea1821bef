// Compute model against hand-built devices: every expected figure is worked out in the comment
// first. Measured inputs are quoted from tests/data/microbench/matmul.yaml by entry id.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/device.hpp"

namespace {

using inflect::core::Bandwidth;
using inflect::core::Bytes;
using inflect::core::Error;
using inflect::core::ErrorKind;
using inflect::core::Flops;
using inflect::core::FlopRate;
using inflect::core::KernelClass;
using inflect::core::KernelCost;
using inflect::core::Precision;
using inflect::core::Seconds;
using inflect::core::tflop_per_s;
using inflect::hw::ComputeModel;
using inflect::hw::DeviceSpec;
using inflect::hw::EfficiencyCurve;
using inflect::hw::MeasuringDevice;

constexpr double kExact = 1e-9;          // pure arithmetic, only float rounding
constexpr double kPsRounding = 1e-6;     // durations are rounded once to picoseconds
constexpr double kPlateau = 0.01;        // "near the plateau": within 1 % of the measured rate
constexpr double kLaunch = 1.2e-6;       // the hand-built device's launch overhead, s

struct Measured {
  std::int64_t m, n, k;
  double tflops;
};

// data:microbench/matmul.yaml#azure-gemm-h100-fp8, less the skinny 802816x192x768 row.
const std::vector<Measured> kH100Fp8 = {
    {1024, 1024, 1024, 274.1},   {2048, 2048, 2048, 1011.3},   {4096, 4096, 4096, 1216.9},
    {8192, 8192, 8192, 1290.1},  {16384, 16384, 16384, 1377.3}, {32768, 32768, 32768, 1382.2},
    {1024, 2145, 1024, 410.7},   {6144, 12288, 12288, 1351.4}};

MeasuringDevice h100_bench() {
  MeasuringDevice on;
  on.peak = 1978.9e12;
  on.compute_units = 132;
  on.gemm_tile = 128;
  on.launch_overhead = Seconds(kLaunch);
  return on;
}

EfficiencyCurve sorted_curve(std::vector<EfficiencyCurve::Point> pts) {
  std::sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
  return EfficiencyCurve{pts};
}

// An H100-like device (hardware.md 1.1/1.2 figures) whose fp8 and bf16 GEMM curves are derived from
// the Azure fp8 sweep, as the catalog loader does.
DeviceSpec h100_like() {
  DeviceSpec d;
  d.name = "test-h100";
  d.peak_dense[Precision::fp8] = tflop_per_s(1978.9);
  d.peak_dense[Precision::bf16] = tflop_per_s(989.4);
  d.vector_fp32 = tflop_per_s(66.9);
  d.hbm_bandwidth = Bandwidth(3.35e12);
  d.compute_units = 132;
  d.gemm_tile = 128;
  d.kernel_launch_overhead = Seconds(kLaunch);
  std::vector<EfficiencyCurve::Point> pts;
  for (const auto& s : kH100Fp8) pts.push_back(inflect::hw::gemm_point(s.m, s.n, s.k, tflop_per_s(s.tflops), h100_bench()));
  d.gemm_efficiency = sorted_curve(pts);
  d.gemm_efficiency_by_precision[Precision::fp8] = d.gemm_efficiency;
  d.attention_efficiency = EfficiencyCurve{{{1e12, 0.33}}};
  // data:microbench/matmul.yaml#azure-babelstream-nd_h100_v5: copy 2.90 TB/s over 2 arrays of 2^25
  // doubles, triad 2.97 TB/s over 3.
  MeasuringDevice hbm;
  hbm.peak = 3.35e12;
  hbm.launch_overhead = Seconds(kLaunch);
  d.memory_efficiency = EfficiencyCurve{{inflect::hw::rate_point(536870912.0, 2.90e12, hbm),
                                         inflect::hw::rate_point(805306368.0, 2.97e12, hbm)}};
  return d;
}

KernelCost gemm(std::int64_t m, std::int64_t n, std::int64_t k, Precision p) {
  KernelCost c;
  c.cls = KernelClass::gemm;
  c.precision = p;
  c.m = m;
  c.n = n;
  c.k = k;
  c.flops = Flops(2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k));
  const double bpe = inflect::core::bytes_per_element(p);
  c.bytes = Bytes(bpe * static_cast<double>(m * k + k * n + m * n));
  return c;
}

}  // namespace

TEST_CASE("efficiency curve interpolates linearly in log10(x) and clamps") {
  // Points (1e9, 0.2) and (1e11, 0.6): 1e10 is half way in log10, so 0.4; 10^9.5 a quarter: 0.3.
  EfficiencyCurve c{{{1e9, 0.2}, {1e11, 0.6}}};
  CHECK(c.at(1e10) == doctest::Approx(0.4).epsilon(kExact));
  CHECK(c.at(std::pow(10.0, 9.5)) == doctest::Approx(0.3).epsilon(kExact));
  CHECK(c.at(1e9) == doctest::Approx(0.2).epsilon(kExact));
  // Clamped outside the measured range, and for a size of zero.
  CHECK(c.at(1e6) == doctest::Approx(0.2).epsilon(kExact));
  CHECK(c.at(0) == doctest::Approx(0.2).epsilon(kExact));
  CHECK(c.at(1e15) == doctest::Approx(0.6).epsilon(kExact));
  // A single point is a constant.
  EfficiencyCurve one{{{5e9, 0.7}}};
  CHECK(one.at(1) == doctest::Approx(0.7).epsilon(kExact));
  CHECK(one.at(1e20) == doctest::Approx(0.7).epsilon(kExact));
  // An empty curve is a bug in whoever built it.
  EfficiencyCurve empty;
  CHECK_THROWS_AS(empty.at(1.0), Error);
}

TEST_CASE("work_monotone rejects curves that make a bigger kernel finish sooner") {
  // Between 1e9 and 1e10 the efficiency rises by b per decade; x/e grows iff ln(10)*e_left >= b.
  // (0.3 -> 0.9): b = 0.6 <= 2.303*0.3 = 0.69, fine. (0.1 -> 0.9): b = 0.8 > 0.23: at 1e9 the time
  // is 1e9/0.1 = 1e10 units, at 10^9.1 it is 1.26e9/0.18 = 7.0e9, smaller.
  CHECK(EfficiencyCurve{{{1e9, 0.3}, {1e10, 0.9}}}.work_monotone());
  CHECK_FALSE(EfficiencyCurve{{{1e9, 0.1}, {1e10, 0.9}}}.work_monotone());
  CHECK(EfficiencyCurve{{{1e9, 0.9}, {1e10, 0.1}}}.work_monotone());  // falling efficiency: time only grows
}

TEST_CASE("wave quantization worked out by hand on 132 units with 128-wide tiles") {
  // 1024x1024: 8*8 = 64 tiles, one wave of 132 slots: 64/132 = 0.48485.
  CHECK(inflect::hw::wave_quantization(1024, 1024, 1, 128, 132) == doctest::Approx(64.0 / 132).epsilon(kExact));
  // 2048x2048: 256 tiles, 2 waves = 264 slots: 256/264 = 0.96970.
  CHECK(inflect::hw::wave_quantization(2048, 2048, 1, 128, 132) == doctest::Approx(256.0 / 264).epsilon(kExact));
  // 128 x (128*132): exactly 132 tiles, one full wave: 1.
  CHECK(inflect::hw::wave_quantization(128, 128 * 132, 1, 128, 132) == doctest::Approx(1.0).epsilon(kExact));
  // 1000x1000 also launches 64 tiles, but they are partly empty: 1e6 / (132 * 128^2) = 0.46239.
  CHECK(inflect::hw::wave_quantization(1000, 1000, 1, 128, 132) ==
        doctest::Approx(1e6 / (132.0 * 16384)).epsilon(kExact));
  // One row past the tile edge: 2*132 = 264 tiles in 2 waves, 129*16896 used of 264*16384 = 0.50391.
  CHECK(inflect::hw::wave_quantization(129, 128 * 132, 1, 128, 132) ==
        doctest::Approx(129.0 * 16896 / (264.0 * 16384)).epsilon(kExact));
  // A batch of 132 single-tile GEMMs fills one wave exactly.
  CHECK(inflect::hw::wave_quantization(128, 128, 132, 128, 132) == doctest::Approx(1.0).epsilon(kExact));
  // Unknown shape: no quantization.
  CHECK(inflect::hw::wave_quantization(0, 1024, 1, 128, 132) == doctest::Approx(1.0).epsilon(kExact));
}

TEST_CASE("a measured GEMM becomes a curve point that the model reproduces exactly") {
  // Azure H100 fp8 2048^3 at 1011.3 TFLOP/s: flops 1.71799e10, measured time 16.988 us, 15.788 us
  // after the 1.2 us launch; wave quantization 256/264. eff = 1.71799e10 / (1978.9e12 * 0.9697 *
  // 15.788e-6) = 0.56707, at x = 1.71799e10 / 0.9697 = 1.77167e10 executed FLOPs.
  auto p = inflect::hw::gemm_point(2048, 2048, 2048, tflop_per_s(1011.3), h100_bench());
  CHECK(p.efficiency == doctest::Approx(0.5670684).epsilon(1e-6));
  CHECK(p.x == doctest::Approx(1.77167e10).epsilon(1e-5));
  // Every fitted point comes back as its measured time.
  ComputeModel model(h100_like());
  for (const auto& s : kH100Fp8) {
    const double measured_s = 2.0 * s.m * s.n * s.k / (s.tflops * 1e12);
    CAPTURE(s.m);
    CAPTURE(s.n);
    CHECK(model.duration(gemm(s.m, s.n, s.k, Precision::fp8)).seconds() ==
          doctest::Approx(measured_s).epsilon(kPsRounding));
  }
  // A rate above the peak cannot be a measurement of this device.
  CHECK_THROWS_AS(inflect::hw::gemm_point(8192, 8192, 8192, tflop_per_s(2500), h100_bench()), Error);
}

TEST_CASE("an anchored curve passes through the anchor and is capped by it") {
  // Shape (1e9, 0.3), (1e11, 0.6) is 0.45 at 1e10; anchor (1e10, 0.9) scales by 2: 0.6 at 1e9 and
  // 1.2 at 1e11, capped to 0.9.
  EfficiencyCurve shape{{{1e9, 0.3}, {1e11, 0.6}}};
  EfficiencyCurve c = inflect::hw::anchored_curve(shape, {1e10, 0.9});
  REQUIRE(c.points.size() == 3);
  CHECK(c.at(1e9) == doctest::Approx(0.6).epsilon(kExact));
  CHECK(c.at(1e10) == doctest::Approx(0.9).epsilon(kExact));
  CHECK(c.at(1e11) == doctest::Approx(0.9).epsilon(kExact));
}

TEST_CASE("a big fp8 GEMM on an H100-like device lands near the measured plateau") {
  // 24576^3 lies between the fitted 16384^3 (1377.3) and 32768^3 (1382.2) points; its tiles fill
  // 36864/132 -> 280 waves (0.9974). The model interpolates to ~1381.5 TFLOP/s.
  ComputeModel model(h100_like());
  const double flops = 2.0 * 24576.0 * 24576.0 * 24576.0;
  const double tflops = flops / model.duration(gemm(24576, 24576, 24576, Precision::fp8)).seconds() / 1e12;
  CHECK(tflops == doctest::Approx(1380.0).epsilon(kPlateau));
  CHECK(tflops <= 1382.2 * (1 + kPlateau));
}

TEST_CASE("a tiny GEMM is launch-bound") {
  // 32^3 bf16 on a flat 0.3 curve: one tile padded to 128x128 in a wave of 132 slots executes
  // 132 * 128^2 * 2 * 32 = 1.384e8 FLOPs at 0.3 * 989.4 TFLOP/s = 0.466 us, plus the 1.2 us launch:
  // 1.666 us, of which launch is 72 %. HBM traffic (6 KB) is negligible.
  DeviceSpec d = h100_like();
  d.gemm_efficiency = EfficiencyCurve{{{1e9, 0.3}}};
  d.gemm_efficiency_by_precision.clear();
  ComputeModel model(d);
  const double t = model.duration(gemm(32, 32, 32, Precision::bf16)).seconds();
  CHECK(t == doctest::Approx(1.6663164e-6).epsilon(kPsRounding));
  CHECK(t < 2 * kLaunch);
}

TEST_CASE("a memory-bound op runs at the BabelStream-derived bandwidth") {
  // Copy: 536870912 B at 2.90 TB/s is 185.13 us; the model reproduces it. 4 GiB lies past the
  // triad point (eff 0.89051 of 3.35 TB/s): 1.2 us + 4294967296 / 2.98317e12 = 1440.9 us, i.e.
  // 2.981 TB/s achieved, just above triad's 2.97 because launch is amortised over more bytes.
  ComputeModel model(h100_like());
  KernelCost copy;
  copy.cls = KernelClass::memory;
  copy.bytes = Bytes(536870912.0);
  CHECK(model.duration(copy).seconds() == doctest::Approx(536870912.0 / 2.90e12).epsilon(kPsRounding));
  KernelCost big = copy;
  big.bytes = Bytes(4294967296.0);
  CHECK(model.duration(big).seconds() == doctest::Approx(1.440916935e-3).epsilon(kPsRounding));
  // Elementwise FLOPs do not matter while they are far below the vector rate.
  big.flops = Flops(4294967296.0 / 4);
  CHECK(model.duration(big).seconds() == doctest::Approx(1.440916935e-3).epsilon(kPsRounding));
}

TEST_CASE("attention runs at its own efficiency of the precision's peak") {
  // 1.0995e12 FLOPs at 0.33 * 989.4 TFLOP/s = 3.3675 ms, + 1.2 us launch.
  ComputeModel model(h100_like());
  KernelCost a;
  a.cls = KernelClass::attention;
  a.precision = Precision::bf16;
  a.flops = Flops(1.099511627776e12);
  CHECK(model.duration(a).seconds() ==
        doctest::Approx(1.099511627776e12 / (0.33 * 989.4e12) + kLaunch).epsilon(kPsRounding));
}

TEST_CASE("attention backward uses its own curve where the device has one, else the forward's") {
  // Same 1.0995e12 FLOPs. Without backward points: the forward's 0.33. With a backward curve at
  // 0.25: 1.0995e12 / (0.25 * 989.4e12) = 4.4451 ms, + 1.2 us launch. The forward is unchanged.
  inflect::hw::DeviceSpec d = h100_like();
  KernelCost a;
  a.cls = KernelClass::attention_backward;
  a.precision = Precision::bf16;
  a.flops = Flops(1.099511627776e12);
  CHECK(ComputeModel(d).duration(a).seconds() ==
        doctest::Approx(1.099511627776e12 / (0.33 * 989.4e12) + kLaunch).epsilon(kPsRounding));
  d.attention_backward_efficiency.points = {{1e9, 0.25}};
  CHECK(ComputeModel(d).duration(a).seconds() ==
        doctest::Approx(1.099511627776e12 / (0.25 * 989.4e12) + kLaunch).epsilon(kPsRounding));
  a.cls = KernelClass::attention;
  CHECK(ComputeModel(d).duration(a).seconds() ==
        doctest::Approx(1.099511627776e12 / (0.33 * 989.4e12) + kLaunch).epsilon(kPsRounding));
}

TEST_CASE("GEMM time is monotone non-decreasing in m, n and k") {
  // Property over a grid that straddles tile (128) and wave (132 tiles) edges: growing any one
  // dimension never shortens the kernel. Would fail with tiles/(waves*units) alone (no partial-
  // tile term) or with a curve keyed by useful instead of executed FLOPs.
  ComputeModel model(h100_like());
  const std::array<std::int64_t, 18> grid = {1,    7,    64,   127,  128,  129,  255,   256,   1000,
                                             1024, 1025, 2048, 4095, 4096, 8192, 12288, 16384, 32768};
  int checked = 0;
  for (Precision p : {Precision::fp8, Precision::bf16}) {
    for (std::size_t i = 0; i < grid.size(); ++i)
      for (std::size_t j = 0; j < grid.size(); ++j)
        for (std::size_t l = 0; l + 1 < grid.size(); ++l) {
          const auto a = grid[i], b = grid[j], lo = grid[l], hi = grid[l + 1];
          CAPTURE(a);
          CAPTURE(b);
          CAPTURE(lo);
          CHECK(model.duration(gemm(lo, a, b, p)) <= model.duration(gemm(hi, a, b, p)));
          CHECK(model.duration(gemm(a, lo, b, p)) <= model.duration(gemm(a, hi, b, p)));
          CHECK(model.duration(gemm(a, b, lo, p)) <= model.duration(gemm(a, b, hi, p)));
          checked += 3;
        }
  }
  CHECK(checked == 2 * 18 * 18 * 17 * 3);
}

TEST_CASE("an unsupported precision is an input error naming what the device has") {
  DeviceSpec d = h100_like();
  d.peak_dense.erase(Precision::fp8);
  ComputeModel model(d);
  try {
    (void)model.duration(gemm(1024, 1024, 1024, Precision::fp8));
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    CHECK(std::string(e.what()).find("no dense fp8 peak; supported: bf16") != std::string::npos);
  }
}
