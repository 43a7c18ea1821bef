#pragma once
// How long a kernel takes on a device: roofline against the device's peaks, times measured
// efficiency that depends on the kernel's shape, plus a per-kernel launch overhead. There is no
// global efficiency factor: every efficiency comes from the device data (see DeviceSpec).
#include <algorithm>
#include <cstdint>

#include "inflect/core/kernel_cost.hpp"
#include "inflect/core/time.hpp"
#include "inflect/core/units.hpp"
#include "inflect/hw/device.hpp"

namespace inflect::hw {

using core::KernelClass;
using core::KernelCost;

/// Fraction of the launched tile area a GEMM uses, counting both partial tiles and the idle units
/// of the last wave: (batch*m*n) / (waves * units * tile^2), where tiles = batch*ceil(m/tile)*
/// ceil(n/tile) and waves = ceil(tiles/units). In (0, 1]; 1 when any argument is <= 0 (shape
/// unknown). Why the partial-tile term: without it a GEMM one row past a tile boundary would be
/// predicted faster than the one just below it.
double wave_quantization(std::int64_t m, std::int64_t n, std::int64_t batch, int tile, int units);

/// The device a measurement was taken on, as far as deriving an efficiency from it needs.
struct MeasuringDevice {
  double peak = 0;             // the peak the measurement is a fraction of (FLOP/s or bytes/s)
  int compute_units = 0;       // GEMM only
  int gemm_tile = 0;           // GEMM only
  core::Seconds launch_overhead;  // included in the measured time
};

/// The curve point a measured GEMM gives: x = executed FLOPs (2mnk / wave_quantization) and the
/// efficiency that makes ComputeModel reproduce the measured time exactly, i.e.
/// eff = flops / (peak * wq * (flops/achieved - launch)). Throws core::Error(input) when the
/// measured time does not exceed the launch overhead or the efficiency would exceed 1.
EfficiencyCurve::Point gemm_point(std::int64_t m, std::int64_t n, std::int64_t k, core::FlopRate achieved,
                                  const MeasuringDevice& on);
/// The same for a kernel without shape effects (attention by FLOPs, streaming by bytes): x = size,
/// eff = size / (peak * (size/achieved - launch)), with achieved and peak in the same unit per s.
EfficiencyCurve::Point rate_point(double size, double achieved, const MeasuringDevice& on);
/// A borrowed curve shape anchored to one measurement: every point scaled by
/// anchor.efficiency / shape.at(anchor.x), capped at anchor.efficiency (the anchor is a best-shape
/// measurement, so nothing is assumed to beat it), and the anchor inserted, so the result passes
/// through it exactly.
EfficiencyCurve anchored_curve(const EfficiencyCurve& shape, EfficiencyCurve::Point anchor);

/// A kernel's FLOPs: k.flops, or for a GEMM given only by shape 2*m*n*k*batch.
double gemm_flops(const KernelCost& k);

/// The parts of a kernel's duration (seconds): it takes launch + max(compute, memory).
struct KernelTiming {
  double launch_s = 0;
  double compute_s = 0;  // FLOPs against the (efficiency-scaled) peak
  double memory_s = 0;   // bytes against the (efficiency-scaled) HBM bandwidth
  /// launch + max(compute, memory), rounded once to picoseconds.
  core::Time duration() const { return core::Time::from_seconds(launch_s + std::max(compute_s, memory_s)); }
};

class ComputeModel {
 public:
  explicit ComputeModel(const DeviceSpec& device);
  /// Duration of one kernel at the device's nominal clock: launch overhead + max(compute time,
  /// memory time), rounded once to picoseconds. GEMM FLOPs are k.flops, or 2*m*n*k*batch when
  /// k.flops is zero. Throws core::Error(input) when the device lacks k.precision.
  core::Time duration(const KernelCost& k) const;
  /// What duration() is made of, before rounding (the power model needs which part is bound).
  KernelTiming timing(const KernelCost& k) const;
  /// The efficiency (achieved / dense peak) a GEMM of this shape reaches, for reports and tests:
  /// gemm_curve(precision).at(flops / wq) * wq, wq = wave_quantization(m, n, batch).
  double gemm_efficiency(const KernelCost& k) const;
  const DeviceSpec& device() const { return device_; }

 private:
  DeviceSpec device_;
};

}  // namespace inflect::hw
