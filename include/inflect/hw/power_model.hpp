#pragma once
// What a kernel draws and how fast it runs at each clock the power limiter may choose, and the
// lumped thermal model of a device. docs/power.md derives every rule; the figures are device data
// (DeviceSpec::power, DeviceSpec::thermal).
//
// The anchor is the compute model itself: its durations are what the device does at its default
// power limit (board power) and nominal temperature, because the measurements behind them were
// taken so. The power model only predicts departures from that point:
//
//   energy   E(f) = core_j * v(f)^2 + hbm_j            v = V(f)/V(f_max), core energy ~ C V^2
//   time     t(f) = t_cal * ((1 - s) + s * f_cal / f)   s = the share of t_cal bound to the clock
//   power    P(f) = idle + E(f) / t(f)                  rises with f: E grows, t shrinks
//
// f_cal, the clock a kernel runs at under board power, is the highest clock of the grid at which
// idle + E(f) / t_cal <= board power. Under a lower limit B the kernel runs at the highest clock
// f <= f_cal with P(f) <= B (the lowest clock when none fits). So at the default limit every
// kernel keeps its calibrated duration, and the calibration GEMM (a big GEMM, power-limited)
// draws exactly the board power at its measured clock.
//
// Worked example (tests/hw/test_power_model.cpp): idle 100 W, board 500 W, a kernel of 1 ms
// fully clock-bound with core_j = 0.5 J at max clock 2000 MHz, floor voltage 0.5 below a knee at
// 1000 MHz. At 2000 MHz P = 100 + 0.5/1e-3 = 600 W > 500; at 1800 MHz v = 0.9, t = 1 ms (f_cal
// = 1800 if it fits): P = 100 + 0.5*0.81/1e-3 = 505 W, still over; at 1750 MHz v = 0.875,
// P = 100 + 0.5*0.765625/1e-3 = 482.8 W: f_cal = 1750 on a 50 MHz grid.
#include <cstdint>
#include <vector>

#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/device.hpp"

namespace inflect::hw {

/// One kernel's power profile, computed once per kernel.
struct KernelPower {
  core::Seconds t_cal;       // its duration under board power (ComputeModel::duration)
  double clock_share = 0;    // s: share of t_cal that scales with 1 / clock
  core::Joules core_energy;  // dynamic core energy at the max clock's voltage
  core::Joules hbm_energy;   // HBM energy, independent of the core clock
  int cal_level = 0;         // grid level it runs at under board power
  core::Watts cal_power;     // power() at cal_level (set by calibrate; engines ask for it per kernel)
};

/// Why a kernel runs below the device's maximum clock.
enum class ClockLimit : unsigned char { none, power, thermal };

class PowerModel {
 public:
  /// Throws core::Error(input) when the device's power data is missing or inconsistent.
  explicit PowerModel(const DeviceSpec& device);

  /// Profile of one kernel, or of a fused block of kernels run back to back at one clock (the
  /// limiter averages over milliseconds; a block's kernels share its clock).
  KernelPower profile(const KernelCost& k, const ComputeModel& compute) const;
  KernelPower profile(const std::vector<KernelCost>& parts, const ComputeModel& compute) const;

  /// Clock grid: level 0 is the minimum clock, levels() - 1 the maximum. Clocks are MHz (a bare
  /// double: no frequency type, and nothing mixes them with another dimension).
  int levels() const { return static_cast<int>(clocks_.size()); }
  int top_level() const { return levels() - 1; }
  double clock_mhz(int level) const { return clocks_[static_cast<std::size_t>(level)]; }
  /// V(f) / V(f_max).
  double voltage_ratio(double mhz) const;
  /// t(f) / t_cal at a level.
  double time_scale(const KernelPower& k, int level) const;
  /// Device power while the kernel runs at a level (idle included, communication not).
  core::Watts power(const KernelPower& k, int level) const;
  /// The highest level <= k.cal_level whose power fits `budget`; 0 when none does.
  int level_under(const KernelPower& k, core::Watts budget) const;
  /// Sets k.cal_level from its other fields (profile() calls it; tests build profiles by hand).
  KernelPower calibrate(KernelPower k) const;

  /// The temperature the calibration measurements are taken to have run at: the device at board
  /// power in an air-cooled node with a 25 C inlet (25 + board power x resistance_air).
  core::Celsius calibration_temp() const { return core::Celsius(calibration_temp_c_); }
  /// Static power above its calibration level at die temperature `temp` (none below it, so a
  /// cool device keeps its calibrated clocks).
  core::Watts leakage(core::Celsius temp) const {
    const double t = temp.value();
    return core::Watts(t > calibration_temp_c_ ? device_.power.leakage_w_per_c * (t - calibration_temp_c_) : 0.0);
  }
  core::Watts idle() const { return core::Watts(idle_w_); }
  core::Watts board() const { return core::Watts(board_w_); }
  core::Watts communication() const { return core::Watts(comm_w_); }
  const DeviceSpec& device() const { return device_; }

 private:
  DeviceSpec device_;
  std::vector<double> clocks_;   // ascending
  std::vector<double> vsq_;      // voltage_ratio(clock)^2 per level
  double idle_w_ = 0, board_w_ = 0, comm_w_ = 0, calibration_temp_c_ = 0;
  /// Dynamic power of full-rate work at the max clock's voltage: a FLOP at precision p costs
  /// full_rate_w_ / peak(p) joules (the same datapath power at a different rate: an fp8 FLOP half
  /// a bf16 one), a vector FLOP full_rate_w_ / vector_fp32.
  double full_rate_w_ = 0;
};

/// Temperature after `dt` at constant power: the exact solution of C dT/dt = P - (T - T_c)/R,
///   T(dt) = T_inf + (T0 - T_inf) exp(-dt / (R C)),  T_inf = T_c + P R.
core::Celsius rc_step(core::Celsius t0, core::Celsius coolant, core::Watts power, core::ThermalResistance r,
                      core::HeatCapacity c, core::Seconds dt);
/// The temperature a constant power settles at: T_c + P R.
inline core::Celsius rc_steady(core::Celsius coolant, core::Watts power, core::ThermalResistance r) { return coolant + power * r; }

}  // namespace inflect::hw
