// The compute model against the H200 traces it was NOT built from (calibration/traces/h200): the
// bf16 curve takes its shape from the trace's square GEMMs and its level from one GEMM sustained
// at the power limit, so the transformer-shaped GEMMs of the same sweep (QKV, projection, FC1,
// FC2 at hidden 2304..12288 and 512..16384 tokens), the other precisions' non-square GEMMs, the
// non-causal attention passes (the curves hold the causal ones) and the triad streams are held out. Printed per group: mean and
// largest error of predicted against measured time. The bands asserted are what the model does
// today with room (a regression guard, not a fit). The sweep's short runs read 3-10% above what
// the same GEMM sustains (the limiter had not caught them), so the model, anchored to the
// sustained rate, is expected to run a few percent slow on them.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/power_model.hpp"
#include "inflect/io/device_catalog.hpp"

namespace {

using inflect::core::Bytes;
using inflect::core::Flops;
using inflect::core::KernelClass;
using inflect::core::KernelCost;
using inflect::core::Precision;

constexpr double kHostBound = 20e-6;  // torch's dispatch time per call on that host (README there)

nlohmann::json load_trace() {
  std::ifstream in(std::string(INFLECT_SOURCE_DIR) + "/calibration/traces/h200/2026-12-04/results.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

KernelCost gemm(double m, double n, double k, Precision p) {
  KernelCost c;
  c.cls = KernelClass::gemm;
  c.precision = p;
  c.m = static_cast<std::int64_t>(m);
  c.n = static_cast<std::int64_t>(n);
  c.k = static_cast<std::int64_t>(k);
  c.flops = Flops(2 * m * n * k);
  const double e = inflect::core::bytes_per_element(p);
  c.bytes = Bytes(e * (m * k + k * n) + 2 * m * n);  // inputs in p, output in bf16/fp16 (fp32 for tf32/fp32: below)
  if (p == Precision::tf32 || p == Precision::fp32) c.bytes = Bytes(4 * (m * k + k * n + m * n));
  return c;
}

struct Errors {
  std::vector<double> e;  // (predicted - measured) / measured
  void add(double predicted, double measured) { e.push_back((predicted - measured) / measured); }
  double mean() const {
    double s = 0;
    for (double x : e) s += x;
    return e.empty() ? 0 : s / static_cast<double>(e.size());
  }
  double worst() const {
    double w = 0;
    for (double x : e) w = std::abs(x) > std::abs(w) ? x : w;
    return w;
  }
};

}  // namespace

TEST_CASE("compute model against the H200 traces it was not built from (held-out shapes)") {
  const auto t = load_trace();
  const auto& sec = t["sections"];
  const inflect::hw::ComputeModel h200(inflect::io::find_device("h200-sxm"));
  std::map<std::string, Errors> groups;

  for (const auto& r : sec["gemm_bf16"]["rows"]) {
    const std::string kind = r["kind"];
    const double s = r["seconds"];
    if (kind == "square" || kind == "mamf-best-h100" || s < kHostBound) continue;
    const double pred = h200.duration(gemm(r["m"], r["n"], r["k"], Precision::bf16)).seconds();
    groups["bf16 " + kind].add(pred, s);
    groups["bf16 all transformer GEMMs"].add(pred, s);
    const auto& dev = inflect::io::find_device("h200-sxm");
    const double wq = inflect::hw::wave_quantization(r["m"], r["n"], 1, dev.gemm_tile, dev.compute_units);
    groups[wq >= 0.95 ? "bf16 whole waves (wq >= 0.95)" : "bf16 partial waves (wq < 0.95)"].add(pred, s);
  }
  for (const auto& [name, p] : std::vector<std::pair<std::string, Precision>>{
           {"fp16", Precision::fp16}, {"fp8", Precision::fp8}, {"tf32", Precision::tf32}}) {
    for (const auto& r : sec["gemm_other"][name]) {
      if (!r.contains("kind") || r["seconds"].get<double>() < kHostBound) continue;  // squares built the curves
      groups[name + " transformer GEMMs"].add(h200.duration(gemm(r["m"], r["n"], r["k"], p)).seconds(), r["seconds"]);
    }
  }
  for (const auto& r : sec["attention"]["rows"]) {
    if (r["causal"].get<bool>()) continue;  // the causal passes built the curves
    const double qkv = 2.0 * r["batch"].get<double>() * r["heads"].get<double>() * r["seq"].get<double>() * 128;
    KernelCost c;
    c.precision = Precision::bf16;
    c.cls = KernelClass::attention;
    c.flops = Flops(r["fwd_flops"].get<double>());
    c.bytes = Bytes(qkv * 4);  // q, k, v read; o written
    groups["attention forward (non-causal)"].add(h200.duration(c).seconds(), r["fwd_seconds"]);
    c.cls = KernelClass::attention_backward;
    c.flops = Flops(r["bwd_flops"].get<double>());
    c.bytes = Bytes(qkv * 7);  // q, k, v, o, do read; dq, dk, dv written
    groups["attention backward (non-causal)"].add(h200.duration(c).seconds(), r["bwd_seconds"]);
  }
  for (const auto& r : sec["memory"]["rows"]) {
    if (r["kernel"] != "triad" || r["array_bytes"].get<double>() <= 16.0 * (1 << 20)) continue;  // L2-resident
    KernelCost c;
    c.cls = KernelClass::memory;
    c.precision = Precision::bf16;
    c.bytes = Bytes(r["bytes_moved"].get<double>());
    groups["triad stream"].add(h200.duration(c).seconds(), r["seconds"]);
  }

  std::ostringstream table;
  table << "\ncompute model vs H200 trace (held out), error = (predicted - measured) / measured\n";
  table << fmt::format("{:<32} {:>6} {:>9} {:>9}\n", "group", "points", "mean", "worst");
  for (const auto& [name, g] : groups)
    table << fmt::format("{:<32} {:>6} {:>+8.1f}% {:>+8.1f}%\n", name, g.e.size(), 100 * g.mean(), 100 * g.worst());
  MESSAGE(table.str());

  // Where the 128-square tile fills whole waves the model is within 25% of every shape. Where it
  // does not, the model over-charges wave quantization (up to 1.9x on 1024x2304x9216, measured at
  // 705 TFLOP/s where two 128-tile waves would allow 365): Hopper's cuBLAS picks other tiles,
  // clusters and stream-K per shape. A known limitation, printed above, guarded loosely here.
  const Errors& all = groups["bf16 all transformer GEMMs"];
  CHECK(all.e.size() >= 80);
  CHECK(std::abs(all.mean()) <= 0.15);
  CHECK(std::abs(groups["bf16 whole waves (wq >= 0.95)"].worst()) <= 0.25);
  CHECK(std::abs(groups["bf16 partial waves (wq < 0.95)"].worst()) <= 1.0);
  // tf32 (the tf32 curve is its squares' short runs) is printed, not guarded.
  for (const char* g : {"fp16 transformer GEMMs", "fp8 transformer GEMMs", "triad stream", "attention forward (non-causal)",
                        "attention backward (non-causal)"}) {
    CAPTURE(g);
    REQUIRE(groups.count(g) == 1);
    CHECK(std::abs(groups[g].mean()) <= 0.20);
  }
}

// The power model against the trace's sustained GEMMs at the 700 W limit (power_by_shape): only
// the 8192^3 bf16 run pinned the energy per FLOP (power.calibration); the other shapes, the zero
// data and fp8 are held out. Printed: the clock the model gives each GEMM at board power against
// the clock NVML read. The large bf16 GEMMs come within 6%. The model clocks the smaller ones
// 8-20% low: it charges their operand bytes at the streaming copy's 115 pJ/byte, while the
// benchmark re-ran one GEMM on the same operands, whose 32 MB weight matrix (512x6912x2304)
// then stays in the 60 MB L2 — less HBM traffic than a training step's. fp8 runs 13% higher in the
// model than measured: the model prices an fp8 FLOP at half a bf16 one (same datapath power at
// twice the rate); the device spent more. Asserted loosely (regression guard): within 25%.
TEST_CASE("power model against the H200 trace's sustained GEMMs (held-out shapes)") {
  const auto& dev = inflect::io::find_device("h200-sxm");
  const inflect::hw::ComputeModel compute(dev);
  const inflect::hw::PowerModel power(dev);
  // Mean SM clock NVML read over each row's window, as calibration/traces/h200/summarize.py prints
  // it (summary.txt); restated here rather than re-deriving it from telemetry.csv.
  struct Row { double m, n, k; Precision p; const char* data; double mhz; };
  const std::vector<Row> rows = {{16384, 16384, 16384, Precision::bf16, "randn", 1480}, {8192, 8192, 8192, Precision::bf16, "randn", 1503},
                                 {4096, 4096, 4096, Precision::bf16, "randn", 1525}, {2048, 2048, 13312, Precision::bf16, "randn", 1539},
                                 {2048, 9216, 2304, Precision::bf16, "randn", 1515}, {512, 6912, 2304, Precision::bf16, "randn", 1848},
                                 {8192, 8192, 8192, Precision::fp8, "randn", 1396}};
  std::ostringstream table;
  table << "\npower model vs H200 trace: clock at the 700 W limit (MHz)\n";
  for (const Row& r : rows) {
    const auto prof = power.profile(gemm(r.m, r.n, r.k, r.p), compute);
    const double model = power.clock_mhz(prof.cal_level);
    table << fmt::format("{:>6.0f}x{:<6.0f}x{:<6.0f} {:<5} model {:>5.0f}  measured {:>5.0f}  {:+.1f}%\n", r.m, r.n, r.k,
                         r.p == Precision::fp8 ? "fp8" : "bf16", model, r.mhz, 100 * (model - r.mhz) / r.mhz);
    CHECK(std::abs(model - r.mhz) / r.mhz <= 0.25);
  }
  MESSAGE(table.str());
}
