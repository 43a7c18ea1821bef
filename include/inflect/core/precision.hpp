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

/// The precision everything but the linear layers' GEMMs is held in when training at `p`:
/// activations, attention, norms and element-wise kernels, and the messages between ranks. An FP8
/// recipe (Transformer Engine's, as Megatron-Core, NeMo and torchtitan run it) casts only the
/// inputs of its linear GEMMs to FP8 and keeps everything else, weights included, in BF16 (TE
/// docs, "Using FP8 with Transformer Engine": fp8_autocast affects only TE's linear modules;
/// attention in FP8 is the opt-in fp8_dpa). Every other precision holds activations in itself.
constexpr Precision activation_precision(Precision p) { return p == Precision::fp8 ? Precision::bf16 : p; }

/// Weights (and activations) stored in 4 bytes: fp32, and tf32, which is stored as fp32. Such a
/// run keeps no separate master copy and writes no 16-bit weight after the optimizer.
constexpr bool stored_as_fp32(Precision p) { return bytes_per_element(p) == 4; }

std::string_view to_string(Precision p);
/// Parses "fp32", "tf32", "bf16", "fp16", "fp8"; nullopt otherwise.
std::optional<Precision> parse_precision(std::string_view s);
inline constexpr std::string_view kPrecisionNames = "fp32, tf32, bf16, fp16, fp8";

}  // namespace inflect::core
