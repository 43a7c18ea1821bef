// calib::parse_gemm_sweep: columns by name and unit, both figures filled in, errors at file:line.
#include <doctest/doctest.h>

#include <string>

#include "inflect/calib/gemm_sweep.hpp"
#include "inflect/core/error.hpp"

using inflect::calib::parse_gemm_sweep;
using inflect::core::Error;
using inflect::core::ErrorKind;
using inflect::core::Precision;

namespace {

constexpr double kRel = 1e-12;

std::string error_of(const std::string& text, std::optional<Precision> dtype = std::nullopt) {
  try {
    (void)parse_gemm_sweep(text, "sweep.csv", dtype);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    return inflect::core::format_error(e);
  }
  return "";
}

}  // namespace

TEST_CASE("gemm sweep: time in us, TFLOP/s derived") {
  const auto s = parse_gemm_sweep(
      "# bf16 sweep on one H200\n"
      "M,N,K,dtype,time_us,note\n"
      "4096,4096,4096,bf16,200,\"square, warm\"\n"
      "8192,2304,6912,torch.float16,100.5,\n",
      "sweep.csv");
  REQUIRE(s.points.size() == 2);
  const auto& p = s.points[0];
  CHECK(p.line == 3);
  CHECK(p.m == 4096);
  CHECK(p.n == 4096);
  CHECK(p.k == 4096);
  CHECK(p.dtype == Precision::bf16);
  CHECK(p.time.value() == doctest::Approx(200e-6).epsilon(kRel));
  // 2 * 4096^3 = 137438953472 FLOP in 200 us = 687.19 TFLOP/s.
  CHECK(p.tflops == doctest::Approx(2.0 * 4096.0 * 4096.0 * 4096.0 / 200e-6 / 1e12).epsilon(kRel));
  CHECK(s.points[1].dtype == Precision::fp16);
}

TEST_CASE("gemm sweep: units in brackets, TFLOP/s only, aliases of precisions") {
  const auto ms = parse_gemm_sweep("m, n, k, precision, Time [ms]\n1024, 1024, 1024, half, 0.01\n", "a.csv");
  CHECK(ms.points[0].time.value() == doctest::Approx(1e-5).epsilon(kRel));
  CHECK(ms.points[0].dtype == Precision::fp16);
  const auto s = parse_gemm_sweep("M\tN\tK\ttype\ttime (s)\n2048\t2048\t2048\tfloat32\t0.001\n", "b.tsv");
  CHECK(s.points[0].dtype == Precision::fp32);
  CHECK(s.points[0].time.value() == doctest::Approx(1e-3).epsilon(kRel));
  // 8192^3 fp8 at 1245 TFLOP/s: 2 * 8192^3 / 1245e12 = 0.8832 ms.
  const auto t = parse_gemm_sweep("M,N,K,dtype,TFLOPS\n8192,8192,8192,float8_e4m3fn,1245.0\n", "c.csv");
  CHECK(t.points[0].dtype == Precision::fp8);
  CHECK(t.points[0].tflops == 1245.0);
  CHECK(t.points[0].time.value() == doctest::Approx(2.0 * 8192.0 * 8192.0 * 8192.0 / 1245e12).epsilon(kRel));
  // Both: the time is used and the TFLOP/s agrees (687.19 written 687.2).
  const auto both = parse_gemm_sweep("M,N,K,dtype,time_us,tflops\n4096,4096,4096,bf16,200,687.2\n", "d.csv");
  CHECK(both.points[0].tflops == doctest::Approx(687.194767).epsilon(1e-6));
  // No dtype column: the precision given for the file.
  const auto given = parse_gemm_sweep("M,N,K,time_us\n4096,4096,4096,200\n", "e.csv", Precision::tf32);
  CHECK(given.points[0].dtype == Precision::tf32);
  CHECK(inflect::calib::parse_gemm_dtype("BFloat16") == Precision::bf16);
  CHECK(inflect::calib::parse_gemm_dtype("e5m2") == Precision::fp8);
  CHECK_FALSE(inflect::calib::parse_gemm_dtype("int8"));
}

TEST_CASE("gemm sweep: errors name file:line") {
  const std::string h = "M,N,K,dtype,time_us\n";
  CHECK(error_of("M,N,dtype,time_us\n1,2,bf16,3\n") ==
        "sweep.csv:1: the header has no column K; expected a header row naming M, N, K, dtype and the time (time_us, "
        "time_ms, time_s, or time [us]) or tflops");
  CHECK(error_of("M,N,K,dtype\n1,2,3,bf16\n")
            .starts_with("sweep.csv:1: the header has no column time (time_us, time_ms, time_s) or tflops"));
  CHECK(error_of("M,N,K,dtype,time\n1,2,3,bf16,4\n") ==
        "sweep.csv:1: time column 'time' does not say its unit: name it time_us, time_ms, time_s or 'time [us]'");
  CHECK(error_of(h + "4096,4096,4096,bf16,200\n4096,4096,x,bf16,200\n") == "sweep.csv:3: K 'x' is not a number");
  CHECK(error_of(h + "0,4096,4096,bf16,200\n") == "sweep.csv:2: M '0' is not a whole number > 0");
  CHECK(error_of(h + "4096.5,4096,4096,bf16,200\n") == "sweep.csv:2: M '4096.5' is not a whole number > 0");
  CHECK(error_of(h + "4096,4096,4096,bf16,-200\n") == "sweep.csv:2: time '-200' is not > 0");
  CHECK(error_of(h + "4096,4096,4096,bf16\n") == "sweep.csv:2: a row of 4 fields; the header has 5");
  CHECK(error_of(h + "4096,4096,4096,int8,200\n")
            .starts_with("sweep.csv:2: dtype 'int8' is not a precision; valid: fp32, tf32"));
  CHECK(error_of(h + "4096,\"4096,4096,bf16,200\n") ==
        "sweep.csv:2: a quoted field is not closed (\" without its closing \")");
  CHECK(error_of("M,N,K,dtype,time_ms,tflops\n4096,4096,4096,bf16,200,687.2\n")
            .starts_with("sweep.csv:2: tflops '687.2' disagrees with the time"));
  CHECK(error_of("M,N,K,time_us\n4096,4096,4096,200\n") ==
        "sweep.csv:1: the header has no dtype column (bf16, fp16, ...) and no precision was given for the file");
  CHECK(error_of("") ==
        "sweep.csv:1: the file is empty: expected a header row naming M, N, K, dtype and the time "
        "(time_us, time_ms, time_s, or time [us]) or tflops");
  CHECK(error_of(h) == "sweep.csv:1: no rows under the header");
}

TEST_CASE("gemm sweep: the docs' example, the H200 trace's bf16 sweep as CSV") {
  // docs/calibration.md, "GEMM sweeps": rows of calibration/traces/h200/2026-12-04/results.json,
  // section gemm_bf16 (time in us).
  const auto s = parse_gemm_sweep(
      "# H200, bf16, torch.matmul, randn data\n"
      "M,N,K,dtype,time_us,shape\n"
      "2048,2048,2048,bf16,23.966,square\n"
      "4096,4096,4096,bf16,179.745,square\n"
      "4096,6912,2304,bf16,195.558,qkv\n"
      "4096,9216,2304,bf16,257.659,fc1\n"
      "8192,8192,8192,bf16,1546.949,square\n",
      "h200_bf16.csv");
  REQUIRE(s.points.size() == 5);
  // 2 * 4096^3 / 179.745 us = 764.6 TFLOP/s (the trace's own figure: 764.63).
  CHECK(s.points[1].tflops == doctest::Approx(764.63).epsilon(1e-4));
  CHECK(s.points[4].line == 7);
}

TEST_CASE("gemm sweep: a CSV is told from a telemetry log by its header naming M, N and K") {
  using inflect::calib::looks_like_gemm_sweep;
  CHECK(looks_like_gemm_sweep("# H200 bf16\nM,N,K,dtype,time_us\n1024,1024,1024,bf16,10\n"));
  CHECK(looks_like_gemm_sweep("m\tn\tk\ttflops\n"));
  CHECK(looks_like_gemm_sweep("M, N, K [elements], precision, Time [ms]\n"));
  CHECK(!looks_like_gemm_sweep("t_mono,power_mw,energy_mj,sm_mhz,temp_c\n32.4,79735,1,345,40\n"));
  CHECK(!looks_like_gemm_sweep("M,N,dtype,time_us\n"));  // no K
  CHECK(!looks_like_gemm_sweep("\"M,N,K\n"));           // an unclosed quote: not a header it can read
  CHECK(!looks_like_gemm_sweep("# only comments\n\n"));
}
