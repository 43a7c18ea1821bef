// The collective fit (Eigen least squares on relative error) recovers known parameters from
// synthetic sweeps, keeps every coefficient >= 0, and the profile writer round-trips its figures.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "inflect/calib/collective_check.hpp"
#include "inflect/calib/collective_fit.hpp"
#include "inflect/calib/profile.hpp"
#include "inflect/core/error.hpp"

using inflect::calib::FitPoint;
using inflect::calib::fit_points;
using inflect::calib::fitted_time;
using inflect::core::Bytes;
using inflect::core::Error;
using inflect::core::Seconds;
using namespace inflect::net;

namespace {

// A sweep 8 B .. 8 GiB whose wire time is x = size / 200e9 (a 200 GB/s reference line) and whose
// times follow time = a + s x + c sqrt(x) exactly.
std::vector<FitPoint> synthetic(double a, double s, double c) {
  std::vector<FitPoint> out;
  for (double n = 8; n <= 8.0 * (1 << 30); n *= 2) {
    const double x = n / 200e9;
    out.push_back({Bytes(n), Seconds(a + s * x + c * std::sqrt(x)), x});
  }
  return out;
}

}  // namespace

TEST_CASE("calib fit: recovers latency, efficiency and pipeline coefficient from a synthetic sweep") {
  // 31 rows, noise-free: a = 25 us, s = 1.25 (80% of the model's bandwidth), c = 0.004 s^0.5 (the
  // fill 2 sqrt(P s) of P = 3.2 us). Least squares on relative error returns them to rounding.
  const auto pts = synthetic(25e-6, 1.25, 0.004);
  REQUIRE(pts.size() == 31);
  const CollectiveFit f = fit_points(CollectiveOp::all_reduce, FabricLevel::inter_node, pts, "synthetic");
  CHECK(f.latency.value() == doctest::Approx(25e-6).epsilon(1e-6));
  CHECK(f.scale == doctest::Approx(1.25).epsilon(1e-6));
  CHECK(f.sqrt_coefficient == doctest::Approx(0.004).epsilon(1e-6));
  for (const auto& p : pts) CHECK(fitted_time(f, p) == doctest::Approx(p.measured.value()).epsilon(1e-6));
}

TEST_CASE("calib fit: a pure alpha-beta sweep fits with no pipeline term, and noise moves the fit a little") {
  // time = 10 us + x: the sqrt coefficient must come out 0 (the best feasible fit, never negative).
  const CollectiveFit f = fit_points(CollectiveOp::all_gather, FabricLevel::intra_node, synthetic(10e-6, 1.0, 0), "ab");
  CHECK(f.latency.value() == doctest::Approx(10e-6).epsilon(1e-6));
  CHECK(f.scale == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(f.sqrt_coefficient == doctest::Approx(0).epsilon(1e-9));
  // +-2% alternating noise: each coefficient stays within a few percent, none goes negative.
  auto noisy = synthetic(20e-6, 1.1, 0.002);
  for (std::size_t i = 0; i < noisy.size(); ++i) noisy[i].measured = noisy[i].measured * (i % 2 ? 1.02 : 0.98);
  const CollectiveFit g = fit_points(CollectiveOp::all_reduce, FabricLevel::inter_node, noisy, "noisy");
  CHECK(g.scale == doctest::Approx(1.1).epsilon(0.05));
  CHECK(g.latency.value() >= 0);
  CHECK(g.sqrt_coefficient >= 0);
}

TEST_CASE("calib fit: a negative intercept is refused by the constraint, not returned") {
  // time = 1.2 x - 2 us on rows with x >= 21 us: unconstrained least squares returns a = -2 us.
  // The constrained fit keeps a >= 0 (and c >= 0) and still follows the rows within a few percent.
  std::vector<FitPoint> pts;
  for (double n = 4 << 20; n <= 8.0 * (1 << 30); n *= 2) {
    const double x = n / 200e9;
    pts.push_back({Bytes(n), Seconds(1.2 * x - 2e-6), x});
  }
  const CollectiveFit f = fit_points(CollectiveOp::all_reduce, FabricLevel::intra_node, pts, "neg");
  CHECK(f.latency.value() >= 0);
  CHECK(f.scale > 0);
  CHECK(f.sqrt_coefficient >= 0);
  for (const auto& p : pts) CHECK(fitted_time(f, p) == doctest::Approx(p.measured.value()).epsilon(0.05));
}

TEST_CASE("calib fit: too few rows, or a row without a positive time, are input errors") {
  auto pts = synthetic(1e-5, 1, 0);
  std::vector<FitPoint> two(pts.begin(), pts.begin() + 2);
  CHECK_THROWS_AS(fit_points(CollectiveOp::all_reduce, FabricLevel::intra_node, two, "two"), Error);
  pts[5].measured = Seconds(0);
  CHECK_THROWS_AS(fit_points(CollectiveOp::all_reduce, FabricLevel::intra_node, pts, "zero"), Error);
}

TEST_CASE("calib profile: the YAML names every figure with its unit and provenance") {
  CollectiveProfile p;
  p.name = "my-cluster";
  p.topology = "dgx-h100";
  CollectiveFit f;
  f.op = CollectiveOp::all_reduce;
  f.level = FabricLevel::inter_node;
  f.min_size = Bytes(1 << 20);
  f.latency = Seconds(31e-6);
  f.scale = 0.95;
  f.sqrt_coefficient = 0.0067;
  f.source = "all_reduce.txt: 14 rows";
  p.fits.push_back(f);
  const std::string y = inflect::calib::profile_yaml(p, "made by a test");
  CHECK(y.find("# made by a test") != std::string::npos);
  CHECK(y.find("profile: my-cluster") != std::string::npos);
  CHECK(y.find("topology: dgx-h100") != std::string::npos);
  CHECK(y.find("collective: all_reduce") != std::string::npos);
  CHECK(y.find("level: inter_node") != std::string::npos);
  CHECK(y.find("min_size: 1048576B") != std::string::npos);
  CHECK(y.find("latency: 31us") != std::string::npos);
  CHECK(y.find("source: \"all_reduce.txt: 14 rows\"") != std::string::npos);
}
