#include "inflect/hw/compute_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "inflect/core/error.hpp"

namespace inflect::hw {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

[[noreturn]] void bad_measurement(const std::string& what) {
  throw core::Error(core::ErrorKind::input, what);
}

}  // namespace

double gemm_flops(const KernelCost& k) {
  if (k.flops.value() > 0) return k.flops.value();
  return 2.0 * static_cast<double>(k.m) * static_cast<double>(k.n) * static_cast<double>(k.k) *
         static_cast<double>(std::max<std::int64_t>(k.batch, 1));
}

double wave_quantization(std::int64_t m, std::int64_t n, std::int64_t batch, int tile, int units) {
  if (m <= 0 || n <= 0 || batch <= 0 || tile <= 0 || units <= 0) return 1.0;
  const std::int64_t t = tile;
  const std::int64_t tiles = batch * ceil_div(m, t) * ceil_div(n, t);
  const std::int64_t waves = ceil_div(tiles, units);
  const double used = static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n);
  const double launched = static_cast<double>(waves) * static_cast<double>(units) * static_cast<double>(t * t);
  return used / launched;
}

EfficiencyCurve::Point gemm_point(std::int64_t m, std::int64_t n, std::int64_t k, core::FlopRate achieved,
                                  const MeasuringDevice& on) {
  if (m <= 0 || n <= 0 || k <= 0 || achieved.value() <= 0 || on.peak <= 0)
    bad_measurement(fmt::format("GEMM {}x{}x{} at {} TFLOP/s: shape, rate and peak must be positive", m, n, k,
                                achieved.value() / 1e12));
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double wq = wave_quantization(m, n, 1, on.gemm_tile, on.compute_units);
  const double busy = flops / achieved.value() - on.launch_overhead.value();
  if (!(busy > 0))
    bad_measurement(fmt::format("GEMM {}x{}x{}: measured time {:.3g} s does not exceed the launch overhead {:.3g} s",
                                m, n, k, flops / achieved.value(), on.launch_overhead.value()));
  const double eff = flops / (on.peak * wq * busy);
  if (!(eff <= 1.0))
    bad_measurement(fmt::format("GEMM {}x{}x{} at {} TFLOP/s implies efficiency {:.3f} > 1 of the executed tiles "
                                "(peak {} TFLOP/s, wave quantization {:.3f}); check the peak, tile or compute units",
                                m, n, k, achieved.value() / 1e12, eff, on.peak / 1e12, wq));
  return {flops / wq, eff};
}

EfficiencyCurve::Point rate_point(double size, double achieved, const MeasuringDevice& on) {
  if (!(size > 0) || !(achieved > 0) || !(on.peak > 0))
    bad_measurement(fmt::format("measurement of size {} at rate {}: size, rate and peak must be positive", size, achieved));
  const double busy = size / achieved - on.launch_overhead.value();
  if (!(busy > 0))
    bad_measurement(fmt::format("measurement of size {}: measured time {:.3g} s does not exceed the launch overhead",
                                size, size / achieved));
  const double eff = size / (on.peak * busy);
  if (!(eff <= 1.0))
    bad_measurement(fmt::format("measurement of size {} at rate {:.4g} implies efficiency {:.3f} > 1 of peak {:.4g}", size,
                                achieved, eff, on.peak));
  return {size, eff};
}

EfficiencyCurve anchored_curve(const EfficiencyCurve& shape, EfficiencyCurve::Point anchor) {
  const double scale = anchor.efficiency / shape.at(anchor.x);
  EfficiencyCurve out;
  bool placed = false;
  for (const auto& p : shape.points) {
    if (!placed && anchor.x <= p.x) {
      out.points.push_back(anchor);
      placed = true;
      if (anchor.x == p.x) continue;  // the anchor replaces a shape point at the same size
    }
    out.points.push_back({p.x, std::min(p.efficiency * scale, anchor.efficiency)});
  }
  if (!placed) out.points.push_back(anchor);
  return out;
}

ComputeModel::ComputeModel(const DeviceSpec& device) : device_(device) {}

double ComputeModel::gemm_efficiency(const KernelCost& k) const {
  const double wq = wave_quantization(k.m, k.n, std::max<std::int64_t>(k.batch, 1), device_.gemm_tile,
                                      device_.compute_units);
  return device_.gemm_curve(k.precision).at(gemm_flops(k) / wq) * wq;
}

core::Time ComputeModel::duration(const KernelCost& k) const {
  return timing(k).duration();
}

KernelTiming ComputeModel::timing(const KernelCost& k) const {
  double compute_s = 0;
  switch (k.cls) {
    case KernelClass::gemm: {
      const double flops = gemm_flops(k);
      if (flops > 0) compute_s = flops / (device_.peak(k.precision).value() * gemm_efficiency(k));
      break;
    }
    case KernelClass::attention:
    case KernelClass::attention_backward: {
      const bool own = k.cls == KernelClass::attention_backward && !device_.attention_backward_efficiency.points.empty();
      const EfficiencyCurve& curve = own ? device_.attention_backward_efficiency : device_.attention_efficiency;
      if (k.flops.value() > 0) compute_s = k.flops.value() / (device_.peak(k.precision).value() * curve.at(k.flops.value()));
      break;
    }
    case KernelClass::memory:
      // Elementwise arithmetic runs on the vector units, in fp32 whatever the storage precision.
      if (k.flops.value() > 0) compute_s = k.flops.value() / device_.vector_fp32.value();
      break;
  }
  double memory_s = 0;
  if (k.bytes.value() > 0)
    memory_s = k.bytes.value() / (device_.hbm_bandwidth.value() * device_.memory_efficiency.at(k.bytes.value()));
  return KernelTiming{device_.kernel_launch_overhead.value(), compute_s, memory_s};
}

}  // namespace inflect::hw
