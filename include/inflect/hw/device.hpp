#pragma once
// A device's specification: the figures a user might dispute, loaded from calibration/devices/*.yaml.
// Every figure carries its source in `sources` (key = field name, value = citation).
#include <map>
#include <string>
#include <vector>

#include "inflect/core/precision.hpp"
#include "inflect/core/units.hpp"

namespace inflect::hw {

/// A measured efficiency (fraction of a peak, 0..1] as a function of a size variable x (FLOPs of a
/// GEMM, bytes of a memory-bound op). Interpolated linearly in log10(x), clamped at both ends.
struct EfficiencyCurve {
  struct Point {
    double x = 0;
    double efficiency = 0;
  };
  std::vector<Point> points;  // sorted by x, at least one
  double at(double x) const;
};

struct DeviceSpec {
  std::string name;          // catalog key, e.g. "h100-sxm"
  std::string display_name;  // e.g. "NVIDIA H100 SXM5 80GB"
  std::string vendor;        // "nvidia" | "amd"
  /// Dense (no sparsity) tensor peak per precision; a precision missing here is unsupported.
  std::map<core::Precision, core::FlopRate> peak_dense;
  /// Non-tensor (vector) FP32 rate, for elementwise work that is not memory bound.
  core::FlopRate vector_fp32;
  core::Bytes hbm_capacity;
  core::Bandwidth hbm_bandwidth;
  core::Watts board_power;
  /// Scale-up (NVLink / Infinity Fabric) bandwidth per direction, whole device.
  core::Bandwidth scale_up_bandwidth;
  int compute_units = 0;  // SMs or CUs
  double max_clock_mhz = 0;
  /// Fixed cost added to every kernel (launch + tail), seconds.
  core::Seconds kernel_launch_overhead;
  /// Fraction of the dense peak a GEMM reaches, by the GEMM's FLOPs (shape effects on top: see
  /// ComputeModel).
  EfficiencyCurve gemm_efficiency;
  /// Fraction of the dense peak a fused (flash-style) attention kernel reaches, by its FLOPs.
  EfficiencyCurve attention_efficiency;
  /// Fraction of HBM bandwidth a streaming kernel reaches, by bytes moved.
  EfficiencyCurve memory_efficiency;
  /// GEMM tile edge (elements) used for wave-quantization: a GEMM launches ceil(M/t)*ceil(N/t)
  /// tiles over `compute_units` units.
  int gemm_tile = 128;
  std::map<std::string, std::string> sources;
  std::string file;  // where it was loaded from ("<embedded>/h100-sxm.yaml" or a path)

  /// Dense peak at `p`; throws core::Error(input) if the device does not support it.
  core::FlopRate peak(core::Precision p) const;
};

}  // namespace inflect::hw
