#pragma once
// Numeric precision of a compute op or tensor, shared by workload (what an op is) and hw (how fast
// a device runs it).
#include <optional>
#include <string_view>

namespace inflect::core {

enum class Precision : unsigned char { fp32, tf32, bf16, fp16, fp8 };

/// Bytes per element of a tensor held in this precision (tf32 is stored as fp32).
constexpr double bytes_per_element(Precision p) {
  switch (p) {
    case Precision::fp32: case Precision::tf32: return 4;
    case Precision::bf16: case Precision::fp16: return 2;
    case Precision::fp8: return 1;
  }
  return 4;
}

std::string_view to_string(Precision p);
/// Parses "fp32", "tf32", "bf16", "fp16", "fp8"; nullopt otherwise.
std::optional<Precision> parse_precision(std::string_view s);
inline constexpr std::string_view kPrecisionNames = "fp32, tf32, bf16, fp16, fp8";

}  // namespace inflect::core
