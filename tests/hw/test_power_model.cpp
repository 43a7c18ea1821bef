// The power model worked out by hand: the clock a kernel gets under board power and under a cap,
// the time it then takes, the calibration GEMM drawing exactly the board power, and the RC model.
#include <doctest/doctest.h>

#include <cmath>

#include "inflect/core/error.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/power_model.hpp"
#include "../support/toy_cluster.hpp"

using namespace inflect;

namespace {

// The header's worked example: idle 100 W, board 500 W, clocks 100..2000 MHz in 50 MHz steps,
// voltage 0.5 of max up to 1000 MHz, then linear to 1 at 2000 MHz.
hw::DeviceSpec example_device() {
  hw::DeviceSpec d = test::toy_device();
  d.board_power = core::Watts(500);
  d.max_clock_mhz = 2000;
  d.power.idle = core::Watts(100);
  d.power.min_clock_mhz = 100;
  d.power.clock_step_mhz = 50;
  d.power.voltage_floor = 0.5;
  d.power.voltage_knee_mhz = 1000;
  d.power.calibration_clock_mhz = 2000;
  return d;
}

hw::KernelPower clock_bound_kernel(const hw::PowerModel& pm) {
  hw::KernelPower k;
  k.t_cal = core::Seconds(1e-3);
  k.clock_share = 1;
  k.core_energy = core::Joules(0.5);
  return pm.calibrate(k);
}

}  // namespace

TEST_CASE("power model: voltage follows the floor, then rises linearly to the max clock") {
  const hw::PowerModel pm(example_device());
  CHECK(pm.voltage_ratio(500) == doctest::Approx(0.5));
  CHECK(pm.voltage_ratio(1000) == doctest::Approx(0.5));
  CHECK(pm.voltage_ratio(1500) == doctest::Approx(0.75));
  CHECK(pm.voltage_ratio(2000) == doctest::Approx(1.0));
  CHECK(pm.clock_mhz(pm.top_level()) == 2000);
  CHECK(pm.clock_mhz(0) == 100);
  CHECK(pm.levels() == 39);  // 100, 150, ..., 2000
}

TEST_CASE("power model: the clock a kernel holds under board power, worked by hand") {
  const hw::PowerModel pm(example_device());
  const hw::KernelPower k = clock_bound_kernel(pm);
  // 2000 MHz: 100 + 0.5 J / 1 ms = 600 W > 500. 1800: v = 0.9, 100 + 500*0.81 = 505 W > 500.
  // 1750: v = 0.875, 100 + 500*0.765625 = 482.8 W <= 500: the calibrated clock.
  CHECK(pm.clock_mhz(k.cal_level) == 1750);
  CHECK(pm.power(k, k.cal_level).value() == doctest::Approx(482.8125));
  CHECK(pm.time_scale(k, k.cal_level) == 1.0);
  // A limit at or above what it draws changes nothing.
  CHECK(pm.level_under(k, core::Watts(500)) == k.cal_level);
}

TEST_CASE("power model: the clock chosen under a cap, and the time it then takes") {
  const hw::PowerModel pm(example_device());
  const hw::KernelPower k = clock_bound_kernel(pm);
  // Under 400 W, at f (<= 1750) the kernel takes 1 ms * 1750 / f with energy 0.5 v(f)^2:
  //   1650 MHz: v = 0.825, 100 + 500 * 0.680625 * 1650/1750 = 420.9 W > 400
  //   1600 MHz: v = 0.8,   100 + 500 * 0.64     * 1600/1750 = 392.6 W <= 400
  const int l = pm.level_under(k, core::Watts(400));
  CHECK(pm.clock_mhz(l) == 1600);
  CHECK(pm.power(k, l).value() == doctest::Approx(100 + 500 * 0.64 * 1600.0 / 1750.0));
  CHECK(pm.time_scale(k, l) == doctest::Approx(1750.0 / 1600.0));
  // A cap nothing fits: the lowest clock.
  CHECK(pm.level_under(k, core::Watts(100)) == 0);
  // A memory-bound kernel (10% of its time follows the clock) slows far less at the same clock.
  hw::KernelPower m = k;
  m.clock_share = 0.1;
  CHECK(pm.time_scale(m, l) == doctest::Approx(0.9 + 0.1 * 1750.0 / 1600.0));
}

TEST_CASE("power model: inconsistent device data is an input error") {
  hw::DeviceSpec d = example_device();
  d.power.idle = core::Watts(600);  // above the board power
  CHECK_THROWS_AS(hw::PowerModel{d}, core::Error);
  d = example_device();
  d.power.calibration_rate = core::tflop_per_s(1000);  // above the 100 TFLOP/s peak
  CHECK_THROWS_AS(hw::PowerModel{d}, core::Error);
}

TEST_CASE("RC model: steady state and time constant, worked by hand") {
  // 700 W into 0.07 C/W from 25 C coolant settles at 25 + 49 = 74 C; tau = R C = 31.5 s.
  using core::Celsius, core::Watts, core::Seconds;
  const core::ThermalResistance r(0.07);
  const core::HeatCapacity c(450);
  CHECK(hw::rc_steady(Celsius(25), Watts(700), r).value() == doctest::Approx(74));
  CHECK((r * c).value() == doctest::Approx(31.5));
  CHECK(hw::rc_step(Celsius(25), Celsius(25), Watts(700), r, c, Seconds(1e6)).value() == doctest::Approx(74));
  // After one time constant, 1 - 1/e of the way: 25 + 49 * 0.632 = 55.97 C.
  CHECK(hw::rc_step(Celsius(25), Celsius(25), Watts(700), r, c, Seconds(31.5)).value() ==
        doctest::Approx(25 + 49 * (1 - std::exp(-1.0))));
  // Two half steps equal one whole step (the exact solution composes).
  const Celsius half = hw::rc_step(hw::rc_step(Celsius(40), Celsius(25), Watts(300), r, c, Seconds(5)), Celsius(25), Watts(300), r, c, Seconds(5));
  CHECK(half.value() == doctest::Approx(hw::rc_step(Celsius(40), Celsius(25), Watts(300), r, c, Seconds(10)).value()));
}
