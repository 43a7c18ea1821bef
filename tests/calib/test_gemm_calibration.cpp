// A measured GEMM sweep becomes the device's curve for its precision: the catalog device's file
// with the sweep added as a measurement (shapes and rates as the catalog writes them) and the
// precision's curve built from it; rows a curve by size cannot hold are kept but excluded, with why.
#include <doctest/doctest.h>

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <string>

#include "inflect/calib/gemm_calibration.hpp"
#include "inflect/calib/gemm_sweep.hpp"
#include "inflect/core/error.hpp"

using namespace inflect;

namespace {

std::string catalog_file(const std::string& name) {
  std::ifstream in(std::string(INFLECT_SOURCE_DIR) + "/calibration/devices/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What the calibration reads of a device: its name, bf16 peak, SMs and tile.
hw::DeviceSpec h100_like() {
  hw::DeviceSpec d;
  d.name = "h100-sxm";
  d.peak_dense[core::Precision::bf16] = core::FlopRate(989e12);
  d.compute_units = 132;
  d.gemm_tile = 128;
  return d;
}

}  // namespace

TEST_CASE("calib gemm: a sweep becomes the precision's curve, rows a 1-D curve cannot hold are excluded") {
  // Four bf16 GEMMs on 132 SMs with 128-wide tiles. Executed FLOPs (2mnk / wave quantization):
  // 2048^3 17.7 G (256 tiles, 2 waves, wq 0.97), 4096^3 141.7 G, 8192^3 1.13 T; the skinny
  // 16384x64x16384 34.4 G over wq = 128 tiles x 64/128 / 132 = 0.485: 70.9 G, between 2048^3 and
  // 4096^3, yet it runs 0.08 ms (90% of the peak on its executed tiles), under 2048^3's 0.1 ms: a
  // curve by size cannot hold both, the later one is excluded. The others keep their order.
  // Each is alone in its quarter decade of executed FLOPs, so none is binned away. A fifth row,
  // 256^3 in 5 us, is the sweep's fastest: rows within 25% of it time the call and are excluded.
  const std::string csv =
      "M,N,K,dtype,time_ms\n"
      "2048,2048,2048,bf16,0.1\n"
      "4096,4096,4096,bf16,0.2\n"
      "8192,8192,8192,bf16,1.4\n"
      "16384,64,16384,bf16,0.08\n"
      "256,256,256,bf16,0.005\n";
  const calib::GemmSweep sweep = calib::parse_gemm_sweep(csv, "mine.csv");
  const auto uses = calib::usable_gemm_points(sweep, h100_like());
  REQUIRE(uses.size() == 5);
  // 2048^3 at 0.1 ms reaches 17% of the peak, 4096^3 at 0.2 ms 70%: a rise of 0.53 over 0.9 decade,
  // steeper than ln(10) x 0.17 = 0.39, so between them the curve would have a larger GEMM finish
  // sooner (hw::EfficiencyCurve::work_monotone): 4096^3 is excluded; 8192^3 (79%, 1.8 decades from
  // 2048^3: 0.34 per decade) is kept. The skinny GEMM, after 2048^3 by size yet faster, is excluded.
  CHECK(uses[0].excluded.empty());
  CHECK(uses[1].excluded.find("a larger GEMM would finish sooner than a smaller one along the curve (after line 2)") !=
        std::string::npos);
  CHECK(uses[2].excluded.empty());
  CHECK(uses[3].excluded.find("a larger GEMM would finish sooner than a smaller one along the curve (after line 2)") !=
        std::string::npos);
  // 256^3 at 5 us is the sweep's floor: the call's time, not the kernel's.
  CHECK(uses[4].excluded.find("host- or launch-bound") != std::string::npos);

  const std::string out = calib::device_with_gemm_sweep(catalog_file("h100-sxm.yaml"), h100_like(), sweep, "my-h100",
                                                        "my-h100-bf16-sweep", "mine.csv, measured 2026-12-04");
  const YAML::Node doc = YAML::Load(out);
  CHECK(doc["name"].as<std::string>() == "my-h100");
  const YAML::Node ms = doc["gemm"]["measurements"];
  const YAML::Node mine = ms[ms.size() - 1];
  CHECK(mine["id"].as<std::string>() == "my-h100-bf16-sweep");
  CHECK(mine["dtype"].as<std::string>() == "bf16");
  REQUIRE(mine["points"].size() == 5);
  CHECK(mine["points"][1]["shape"].as<std::string>() == "4096x4096x4096");
  // 2 x 4096^3 / 0.2 ms = 687.2 TFLOP/s, written though excluded (with why).
  CHECK(mine["points"][1]["rate"].as<std::string>() == "687.195TFLOP/s");
  CHECK(mine["points"][1]["excluded"]);
  CHECK(!mine["points"][2]["excluded"]);
  CHECK(doc["gemm"]["curves"]["bf16"]["shape"].as<std::string>() == "my-h100-bf16-sweep");
  // The other precisions' curves are the catalog's.
  CHECK(doc["gemm"]["curves"]["fp8"]["shape"].as<std::string>() == "azure-gemm-h100-fp8");
}

TEST_CASE("calib gemm: mixed precisions and a precision the device lacks are input errors") {
  const auto mixed = calib::parse_gemm_sweep("M,N,K,dtype,time_ms\n1024,1024,1024,bf16,0.01\n1024,1024,1024,fp8,0.01\n", "m.csv");
  CHECK_THROWS_AS(calib::usable_gemm_points(mixed, h100_like()), core::Error);
  const auto fp8 = calib::parse_gemm_sweep("M,N,K,dtype,time_ms\n1024,1024,1024,fp8,0.01\n", "f.csv");
  CHECK_THROWS_AS(calib::device_with_gemm_sweep(catalog_file("h100-sxm.yaml"), h100_like(), fp8, "x", "x", "x"), core::Error);
}
