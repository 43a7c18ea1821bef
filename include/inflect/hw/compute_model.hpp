#pragma once
// How long a kernel takes on a device: roofline against the device's peaks, times measured
// efficiency that depends on the kernel's shape, plus a per-kernel launch overhead. There is no
// global efficiency factor: every efficiency comes from the device data (see DeviceSpec).
#include <cstdint>

#include "inflect/core/kernel_cost.hpp"
#include "inflect/core/time.hpp"
#include "inflect/core/units.hpp"
#include "inflect/hw/device.hpp"

namespace inflect::hw {

using core::KernelClass;
using core::KernelCost;

class ComputeModel {
 public:
  explicit ComputeModel(const DeviceSpec& device);
  /// Duration of one kernel at the device's nominal clock.
  core::Time duration(const KernelCost& k) const;
  /// The efficiency (achieved / dense peak) a GEMM of this shape reaches, for reports and tests.
  double gemm_efficiency(const KernelCost& k) const;
  const DeviceSpec& device() const { return device_; }

 private:
  DeviceSpec device_;
};

}  // namespace inflect::hw
