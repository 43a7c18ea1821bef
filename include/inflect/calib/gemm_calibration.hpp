#pragma once
// A GEMM sweep measured on the user's device, made into that device's GEMM efficiency curve: the
// catalog device's file with the sweep added as a measurement and the sweep's precision's curve
// built from it (the catalog's own format and derivation, docs/devices.md). The result is a
// device file (`cluster.device_file`, or a calibrated profile's device).
#include <string>
#include <vector>

#include "inflect/calib/gemm_sweep.hpp"
#include "inflect/hw/device.hpp"

namespace inflect::calib {

/// One measured GEMM and whether the curve keeps it.
struct GemmUse {
  const GemmPoint* point = nullptr;
  double executed_flops = 0;  // 2mnk / wave quantization on the device: the curve's x
  std::string excluded;       // why not (empty: kept)
};

/// Which points of `sweep` a curve can hold on `device`: ordered by executed FLOPs, a point that
/// finishes sooner than a smaller GEMM kept before it (a 1-D curve cannot hold both, and the
/// catalog loader rejects such a curve) or at the same executed FLOPs as one kept is excluded,
/// with the reason. Every point must be of one precision.
std::vector<GemmUse> usable_gemm_points(const GemmSweep& sweep, const hw::DeviceSpec& device);

/// `device_yaml` (the catalog device's file) renamed to `name`, with the sweep appended to
/// gemm.measurements (id `measurement_id`, its source `source`, excluded points kept and marked)
/// and gemm.curves.<precision> built from it alone. Throws core::Error(input) when no point is
/// usable or the device has no peak for the sweep's precision.
std::string device_with_gemm_sweep(const std::string& device_yaml, const hw::DeviceSpec& device, const GemmSweep& sweep,
                                   const std::string& name, const std::string& measurement_id, const std::string& source);

}  // namespace inflect::calib
