#include "inflect/hw/power_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "inflect/core/error.hpp"

namespace inflect::hw {
namespace {

[[noreturn]] void bad(const DeviceSpec& d, const std::string& what) {
  throw core::Error(core::ErrorKind::input, fmt::format("device '{}' power data: {}", d.name, what));
}

}  // namespace

PowerModel::PowerModel(const DeviceSpec& d) : device_(d) {
  const PowerSpec& p = d.power;
  idle_w_ = p.idle.value();
  board_w_ = d.board_power.value();
  comm_w_ = p.communication.value();
  calibration_temp_c_ = 25 + board_w_ * d.thermal.resistance_air_c_per_w;
  if (!(idle_w_ > 0 && idle_w_ < board_w_)) bad(d, fmt::format("idle {} W must be in (0, board power {} W)", idle_w_, board_w_));
  if (!(p.min_power_cap.value() <= board_w_))
    bad(d, fmt::format("min_power_cap {} W must not exceed board power {} W", p.min_power_cap.value(), board_w_));
  if (!(p.clock_step_mhz > 0) || !(p.min_clock_mhz > 0) || !(p.min_clock_mhz <= d.max_clock_mhz))
    bad(d, fmt::format("clock grid {} MHz to {} MHz in steps of {} MHz is not a grid", p.min_clock_mhz, d.max_clock_mhz,
                       p.clock_step_mhz));
  if (!(p.voltage_floor > 0 && p.voltage_floor <= 1) || !(p.voltage_knee_mhz >= 0 && p.voltage_knee_mhz < d.max_clock_mhz))
    bad(d, "voltage_floor must be in (0, 1] and voltage_knee_mhz below max_clock_mhz");
  if (!(p.memory_clock_share >= 0 && p.memory_clock_share <= 1)) bad(d, "memory_clock_share must be in [0, 1]");
  // The grid counts down from the max clock, so the max clock is always a level.
  for (double f = d.max_clock_mhz; f >= p.min_clock_mhz - 1e-9; f -= p.clock_step_mhz) clocks_.push_back(f);
  std::reverse(clocks_.begin(), clocks_.end());
  for (double f : clocks_) vsq_.push_back(voltage_ratio(f) * voltage_ratio(f));
  // The calibration GEMM drew the board power at its clock: its FLOPs carry board - idle.
  auto peak = d.peak_dense.find(p.calibration_precision);
  if (peak == d.peak_dense.end()) bad(d, "the calibration precision is not one the device supports");
  if (!(p.calibration_rate.value() > 0 && p.calibration_rate < peak->second))
    bad(d, "the calibration rate must be positive and below the dense peak");
  if (!(p.calibration_clock_mhz >= p.min_clock_mhz && p.calibration_clock_mhz <= d.max_clock_mhz))
    bad(d, "the calibration clock must lie on the clock range");
  const double v = voltage_ratio(p.calibration_clock_mhz);
  // Its bytes: A (m x k) and B (k x n) read once, C (m x n) written once, at the precision's size.
  const double m = static_cast<double>(p.calibration_m), n = static_cast<double>(p.calibration_n),
               kk = static_cast<double>(p.calibration_k);
  const double seconds = 2 * m * n * kk / p.calibration_rate.value();
  const double bytes = (m * kk + kk * n + m * n) * core::bytes_per_element(p.calibration_precision);
  const double byte_w = bytes * (p.hbm_pj_per_byte + p.onchip_pj_per_byte * v * v) * 1e-12 / seconds;
  if (!(seconds > 0) || !(board_w_ - idle_w_ - byte_w > 0))
    bad(d, fmt::format("the calibration GEMM's traffic alone ({:.0f} W) leaves nothing of board - idle for its FLOPs", byte_w));
  // Its FLOPs carry the rest; referred to the max clock's voltage and to the full rate (the peak).
  const double j_per_flop_vmax = (board_w_ - idle_w_ - byte_w) / p.calibration_rate.value() / (v * v);
  full_rate_w_ = j_per_flop_vmax * peak->second.value();
}

double PowerModel::voltage_ratio(double mhz) const {
  const PowerSpec& p = device_.power;
  if (mhz <= p.voltage_knee_mhz) return p.voltage_floor;
  const double x = (mhz - p.voltage_knee_mhz) / (device_.max_clock_mhz - p.voltage_knee_mhz);
  return p.voltage_floor + (1 - p.voltage_floor) * std::min(1.0, x);
}

KernelPower PowerModel::profile(const KernelCost& k, const ComputeModel& compute) const {
  return profile(std::vector<KernelCost>{k}, compute);
}

KernelPower PowerModel::profile(const std::vector<KernelCost>& parts, const ComputeModel& compute) const {
  KernelPower out;
  double bound = 0;
  for (const KernelCost& k : parts) {
    const KernelTiming t = compute.timing(k);
    out.t_cal += core::Seconds(t.duration().seconds());
    // Compute-bound: the compute part follows the clock; memory-bound: a small share of it.
    bound += t.compute_s >= t.memory_s ? t.compute_s : device_.power.memory_clock_share * t.memory_s;
    // Vector-unit FLOPs (memory-class kernels) are at the vector peak, the others at the tensor peak.
    const double rate = k.cls == KernelClass::memory ? device_.vector_fp32.value() : device_.peak(k.precision).value();
    const double flop_j = full_rate_w_ / rate;
    const double flops = k.cls == KernelClass::gemm ? gemm_flops(k) : k.flops.value();
    out.core_energy += core::Joules(flops * flop_j + k.bytes.value() * device_.power.onchip_pj_per_byte * 1e-12);
    out.hbm_energy += core::Joules(k.bytes.value() * device_.power.hbm_pj_per_byte * 1e-12);
  }
  const double t_cal = out.t_cal.value();
  out.clock_share = t_cal > 0 ? std::min(1.0, bound / t_cal) : 0;
  return calibrate(out);
}

KernelPower PowerModel::calibrate(KernelPower k) const {
  // f_cal: the highest level whose power at the calibrated duration fits the board power.
  k.cal_level = 0;
  const double t_cal = k.t_cal.value(), core_j = k.core_energy.value(), hbm_j = k.hbm_energy.value();
  if (t_cal <= 0) {
    k.cal_level = top_level();
    return k;
  }
  for (int l = top_level(); l >= 0; --l) {
    const double p = idle_w_ + (core_j * vsq_[static_cast<std::size_t>(l)] + hbm_j) / t_cal;
    if (p <= board_w_ * (1 + 1e-12)) {
      k.cal_level = l;
      break;
    }
  }
  k.cal_power = core::Watts(0);  // so that power() computes it rather than returning the cached value
  k.cal_power = power(k, k.cal_level);
  return k;
}

double PowerModel::time_scale(const KernelPower& k, int level) const {
  if (level >= k.cal_level) return 1.0;
  return (1 - k.clock_share) + k.clock_share * clock_mhz(k.cal_level) / clock_mhz(level);
}

core::Watts PowerModel::power(const KernelPower& k, int level) const {
  if (k.t_cal.value() <= 0) return idle();
  if (level == k.cal_level && k.cal_power.value() > 0) return k.cal_power;
  const double t = k.t_cal.value() * time_scale(k, level);
  return core::Watts(idle_w_ + (k.core_energy.value() * vsq_[static_cast<std::size_t>(level)] + k.hbm_energy.value()) / t);
}

int PowerModel::level_under(const KernelPower& k, core::Watts budget) const {
  // power() rises with the level (more energy per op, less time), so bisect for the last fit.
  if (power(k, k.cal_level) <= budget) return k.cal_level;
  int lo = 0, hi = k.cal_level;  // invariant: hi does not fit; answer in [0, hi)
  if (power(k, 0) > budget) return 0;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (power(k, mid) <= budget) lo = mid;
    else hi = mid;
  }
  return lo;
}

core::Celsius rc_step(core::Celsius t0, core::Celsius coolant, core::Watts power, core::ThermalResistance r,
                      core::HeatCapacity c, core::Seconds dt) {
  const core::Celsius t_inf = rc_steady(coolant, power, r);
  // -(dt / RC): negating is exact, so this is the bare-double -dt / (R C) to the bit.
  return t_inf + (t0 - t_inf) * std::exp(-(dt / (r * c)));
}

}  // namespace inflect::hw
