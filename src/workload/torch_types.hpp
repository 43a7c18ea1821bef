#pragma once
// The element type PyTorch records for a tensor — an op's "Input type" in a Kineto trace, the
// "Tensor(...)" of a Chakra node's input types — as the precision the device model times it at.
// One table for every importer, so that a trace's GEMMs and attention read their types alike.
#include <optional>
#include <string_view>

#include "inflect/core/precision.hpp"

namespace inflect::workload {

/// "float" (the C++ name PyTorch records for Float), c10's "c10::BFloat16" and "c10::Half", and
/// every "c10::Float8_" kind (e4m3fn, e5m2, ...: c10/core/ScalarType.h); nullopt for any other
/// type, which the device model has no rate for.
inline std::optional<core::Precision> precision_of_torch_type(std::string_view type) {
  if (type == "float") return core::Precision::fp32;
  if (type == "c10::BFloat16") return core::Precision::bf16;
  if (type == "c10::Half") return core::Precision::fp16;
  if (type.starts_with("c10::Float8_")) return core::Precision::fp8;
  return std::nullopt;
}

}  // namespace inflect::workload
