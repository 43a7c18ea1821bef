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
  /// Efficiency at x: linear in log10(x) between points, clamped to the end points outside them
  /// (and for x <= 0). Throws core::Error(internal) on an empty curve: loaders never build one.
  double at(double x) const;
  /// True when x / at(x) never decreases in x, i.e. a bigger kernel is never predicted to finish
  /// sooner than a smaller one of the same kind. Loaders reject curves for which this is false.
  bool work_monotone() const;
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
  /// Slowdown of compute that overlaps communication on the device (the collective's kernels
  /// hold SMs/CUs and HBM bandwidth): a kernel overlapped takes (1 + this) times as long.
  double comm_interference = 0;
  /// Fraction of the dense peak a GEMM's launched tiles reach, keyed by the FLOPs those tiles
  /// execute (the GEMM's FLOPs / wave_quantization). Tile and wave effects come on top: see
  /// ComputeModel and docs/devices.md.
  EfficiencyCurve gemm_efficiency;
  /// Per-precision GEMM curves where the catalog gives one (it gives one for every supported
  /// precision); a precision missing here falls back to `gemm_efficiency`. Keyed like the above.
  std::map<core::Precision, EfficiencyCurve> gemm_efficiency_by_precision;
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
  /// The GEMM efficiency curve for `p`: gemm_efficiency_by_precision[p] if present, else
  /// gemm_efficiency.
  const EfficiencyCurve& gemm_curve(core::Precision p) const;
};

}  // namespace inflect::hw
