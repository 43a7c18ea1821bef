#pragma once
// GEMM sweeps as CSV: one timed matrix multiply per row, the shape (M, N, K), the precision and
// either the time or the achieved rate. The header row names the columns (any order, any case, other
// columns ignored):
//   M, N, K                      the shape: C[M,N] = A[M,K] x B[K,N], whole numbers > 0
//   dtype (or precision, type)   fp32/float32/float, tf32, bf16/bfloat16, fp16/float16/half,
//                                fp8/float8_e4m3fn/e4m3/e5m2 (a "torch." prefix is dropped)
//   time_us, time_ms, time_s     the time of one GEMM, the unit in the name (time_us) or in brackets
//                                (time [us], time (ms)); latency, duration, elapsed, runtime too
//   tflops (or TFLOP/s)          achieved TFLOP/s (2MNK / time / 1e12), when there is no time column
// Both figures are filled in from the one given; when the file has both, the time is used and the
// TFLOP/s is checked against it (within 5%: a unit mixed up shows as a factor of 1000). Blank lines
// and lines starting with '#' are skipped; fields may be "quoted".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inflect/core/precision.hpp"
#include "inflect/core/units.hpp"

namespace inflect::calib {

struct GemmPoint {
  int line = 0;  // 1-based line of the file
  std::int64_t m = 0, n = 0, k = 0;
  core::Precision dtype = core::Precision::bf16;
  core::Seconds time;  // of one GEMM
  double tflops = 0;   // achieved TFLOP/s, 2MNK / time / 1e12 (bare, as the report's TFLOP/s is)
};

struct GemmSweep {
  std::string file;
  std::vector<GemmPoint> points;  // in file order; never empty
};

/// Parses a GEMM sweep CSV. `dtype`, when given, is the precision of every row of a file that has no
/// dtype column. Throws core::Error(input) at file:line for a missing column, a value that is not a
/// number, a shape or time that is not positive, or a row of the wrong width.
GemmSweep parse_gemm_sweep(std::string_view text, std::string_view file_name,
                           std::optional<core::Precision> dtype = std::nullopt);

/// A precision as GEMM sweeps write it ("bf16", "bfloat16", "torch.float16", "half", "float8_e4m3fn",
/// ...); nullopt for anything else.
std::optional<core::Precision> parse_gemm_dtype(std::string_view s);

/// Whether a CSV is a GEMM sweep rather than another log: its header row (the first line that is
/// neither blank nor a `#` comment, split as parse_gemm_sweep splits it) names M, N and K.
bool looks_like_gemm_sweep(std::string_view text);

}  // namespace inflect::calib
