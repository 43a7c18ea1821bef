// The device power tracker on activity profiles worked out by hand: energy, peak power, the
// clock a kernel gets under a cap and while hot, and the RC temperature it reaches.
#include <doctest/doctest.h>

#include <cmath>

#include "inflect/hw/power_model.hpp"
#include "inflect/sim/device_power.hpp"
#include "../support/toy_cluster.hpp"

using namespace inflect;
using core::Time;

namespace {

// The toy device: idle 100 W, board 700 W, communication 50 W, clocks 100..1000 MHz in 50 MHz
// steps, voltage 0.5 of max up to 500 MHz then linear to 1.
const hw::PowerModel& toy_power() {
  static const hw::DeviceSpec d = test::toy_device();
  static const hw::PowerModel pm(d);
  return pm;
}

// A fully clock-bound kernel of 1 s with 300 J of core energy at the max clock: 400 W there,
// under board power, so it holds the max clock by default.
hw::KernelPower one_second_kernel() {
  hw::KernelPower k;
  k.t_cal = core::Seconds(1);
  k.clock_share = 1;
  k.core_energy = core::Joules(300);
  return toy_power().calibrate(k);
}

sim::PowerOptions options(double cap_w, double start_c, double interference = 0) {
  sim::PowerOptions o;
  o.model = &toy_power();
  o.cap = core::Watts(cap_w);
  o.comm_interference = interference;
  sim::DeviceCooling c;
  c.coolant = core::Celsius(25);
  c.resistance = core::ThermalResistance(0.05);
  c.capacitance = core::HeatCapacity(100);  // tau = 5 s
  c.start = core::Celsius(start_c);
  o.devices = {c};
  return o;
}

Time s(double v) { return Time::from_seconds(v); }

}  // namespace

TEST_CASE("device power: energy of a known activity profile") {
  // 0-1 s a kernel (400 W); 0.5-1.5 s communication (+50 W); idle (100 W) to 2 s:
  //   0-0.5: 400 x 0.5 = 200 J; 0.5-1: 450 x 0.5 = 225 J; 1-1.5: 150 x 0.5 = 75 J; 1.5-2: 50 J.
  sim::DevicePowerTracker t;
  t.reset(options(700, 25), 1);
  const hw::KernelPower k = one_second_kernel();
  CHECK(toy_power().clock_mhz(k.cal_level) == 1000);
  CHECK(t.kernel_start(0, s(0), k) == 1.0);
  t.communication(0, s(0.5), true);
  t.kernel_end(0, s(1));
  t.communication(0, s(1.5), false);
  t.finish(s(2));
  const auto& d = t.devices()[0];
  CHECK(d.energy.value() == doctest::Approx(550));
  CHECK(d.peak.value() == doctest::Approx(450));
  // The 100 ms windows inside 0.5-1 s all average 450 W; none averages more.
  CHECK(d.peak_avg.value() == doctest::Approx(450));
  CHECK(d.kernel_time.value() == doctest::Approx(1));
  CHECK(d.clock_mhz_s == doctest::Approx(1000));
  CHECK(d.power_limited.value() == 0);
  CHECK(d.thermal_limited.value() == 0);
}

TEST_CASE("device power: an overlapped kernel spreads its energy over its stretched time") {
  // With interference 0.25 the kernel draws 300 / 1.25 = 240 W above idle while communication
  // runs: 0.5-1 s is 100 + 240 + 50 = 390 W, so 200 + 195 + 75 + 50 = 520 J.
  sim::DevicePowerTracker t;
  t.reset(options(700, 25, 0.25), 1);
  (void)t.kernel_start(0, s(0), one_second_kernel());
  t.communication(0, s(0.5), true);
  t.kernel_end(0, s(1));
  t.communication(0, s(1.5), false);
  t.finish(s(2));
  CHECK(t.devices()[0].energy.value() == doctest::Approx(520));
}

TEST_CASE("device power: the clock chosen under a cap, worked by hand") {
  // Cap 250 W: at f the kernel draws 100 + 300 v(f)^2 f / 1000 W.
  //   800 MHz: v = 0.8,  100 + 300 * 0.64   * 0.8  = 253.6 W > 250
  //   750 MHz: v = 0.75, 100 + 300 * 0.5625 * 0.75 = 226.6 W <= 250: 750 MHz, 1000/750 as long.
  sim::DevicePowerTracker t;
  t.reset(options(250, 25), 1);
  const double scale = t.kernel_start(0, s(0), one_second_kernel());
  CHECK(scale == doctest::Approx(1000.0 / 750.0));
  CHECK(t.clock_mhz(0) == 750);
  CHECK(t.power(0).value() == doctest::Approx(100 + 300 * 0.5625 * 0.75));
  t.kernel_end(0, s(scale));
  t.finish(s(2));
  CHECK(t.devices()[0].power_limited.value() == doctest::Approx(scale));
}

TEST_CASE("device power: a hot device holds what its cooling removes at the slowdown temperature") {
  // The toy slows down at 90 C. Coolant 25 C, R 0.05 C/W: the cooling removes (90 - 25) / 0.05 =
  // 1300 W at 90 C, more than the kernel draws; with the device starting at 91 C (hot) and a
  // slowdown of 40 C instead, the budget is (40 - 25) / 0.05 = 300 W:
  //   900 MHz: v = 0.9,  100 + 300 * 0.81   * 0.9  = 318.7 W > 300
  //   850 MHz: v = 0.85, 100 + 300 * 0.7225 * 0.85 = 284.2 W <= 300
  hw::DeviceSpec d = test::toy_device();
  d.thermal.slowdown_c = 40;
  d.thermal.shutdown_c = 60;
  const hw::PowerModel pm(d);
  sim::PowerOptions o = options(700, 41);
  o.model = &pm;
  sim::DevicePowerTracker t;
  t.reset(o, 1);
  const double scale = t.kernel_start(0, s(0), pm.calibrate(one_second_kernel()));
  CHECK(t.clock_mhz(0) == 850);
  CHECK(scale == doctest::Approx(1000.0 / 850.0));
  t.kernel_end(0, s(1));
  t.finish(s(1));
  CHECK(t.devices()[0].thermal_limited.value() == doctest::Approx(1));
  CHECK(t.devices()[0].power_limited.value() == 0);
}

TEST_CASE("device power: temperature under a constant load follows the RC solution") {
  // 400 W from 25 C with R 0.05, C 100 (tau 5 s): after 5 s, 25 + 20 (1 - 1/e) = 37.64 C; the
  // tracker integrates in 10 ms windows of constant power, which is exact.
  sim::DevicePowerTracker t;
  t.reset(options(700, 25), 1);
  hw::KernelPower k = one_second_kernel();
  k.t_cal = core::Seconds(5);
  k.core_energy = core::Joules(1500);  // 300 W above idle for 5 s
  k = toy_power().calibrate(k);
  (void)t.kernel_start(0, s(0), k);
  t.kernel_end(0, s(5));
  t.finish(s(5));
  CHECK(t.devices()[0].end_temp.value() == doctest::Approx(25 + 20 * (1 - std::exp(-1.0))));
  CHECK(t.devices()[0].peak_temp.value() == doctest::Approx(t.devices()[0].end_temp.value()));
  CHECK_FALSE(t.devices()[0].reached_shutdown);
}

TEST_CASE("device power: leakage above the calibration temperature comes off the limit") {
  // The toy: calibration temperature 25 + 700 W x 0.05 C/W = 60 C. With 2 W/C of leakage a device
  // at 80 C leaks 40 W more: idle draw 140 W, and under a 250 W cap the kernel gets 210 W:
  //   650 MHz: v = 0.65, 100 + 300 * 0.4225 * 0.65 = 182.4 W <= 210
  //   700 MHz: v = 0.7,  100 + 300 * 0.49   * 0.7  = 202.9 W <= 210
  //   750 MHz: v = 0.75, 100 + 300 * 0.5625 * 0.75 = 226.6 W > 210: 700 MHz (750 when cool).
  hw::DeviceSpec d = test::toy_device();
  d.power.leakage_w_per_c = 2;
  const hw::PowerModel pm(d);
  CHECK(pm.calibration_temp().value() == doctest::Approx(60));
  CHECK(pm.leakage(core::Celsius(80)).value() == doctest::Approx(40));
  CHECK(pm.leakage(core::Celsius(50)).value() == 0);
  sim::PowerOptions o = options(250, 80);
  o.model = &pm;
  sim::DevicePowerTracker t;
  t.reset(o, 1);
  CHECK(t.power(0).value() == doctest::Approx(140));
  (void)t.kernel_start(0, s(0), pm.calibrate(one_second_kernel()));
  CHECK(t.clock_mhz(0) == 700);
  sim::PowerOptions cool = options(250, 50);
  cool.model = &pm;
  t.reset(cool, 1);
  (void)t.kernel_start(0, s(0), pm.calibrate(one_second_kernel()));
  CHECK(t.clock_mhz(0) == 750);
}

TEST_CASE("device power: where the next step starts (warm start), worked by hand") {
  // Coolant 25 C, R = 0.2 C/W: the cooling removes P_th = (90 - 25) / 0.2 = 325 W at the 90 C
  // slowdown temperature. Idle 100 W, board 700 W, hysteresis 3 C. Steps of 2 s.
  sim::DeviceCooling fresh;
  fresh.coolant = core::Celsius(25);
  fresh.resistance = core::ThermalResistance(0.2);
  fresh.capacitance = core::HeatCapacity(100);
  fresh.start = hw::rc_steady(fresh.coolant, core::Watts(100), fresh.resistance);  // idle: 45 C
  const Time step = s(2);
  auto ran = [](double avg_w) {
    sim::DevicePower p;
    p.energy = core::Watts(avg_w) * core::Seconds(2);
    return p;
  };
  const hw::PowerModel& pm = toy_power();

  SUBCASE("a device that settles below slowdown starts where it settles") {
    // 200 W average: 25 + 200 x 0.2 = 65 C.
    const auto d = sim::warm_start(pm, fresh, fresh, ran(200), step);
    CHECK(d.start.value() == doctest::Approx(65));
    CHECK_FALSE(d.start_hot);
    CHECK(d.hot_budget.value() == 0);
  }
  SUBCASE("one that would settle above it starts hot, its kernels allowed what the cooling removes") {
    // 500 W would settle at 125 C: start at 90 C, hot, budget max(P_th, idle) = 325 W.
    const auto d = sim::warm_start(pm, fresh, fresh, ran(500), step);
    CHECK(d.start.value() == 90);
    CHECK(d.start_hot);
    CHECK(d.hot_budget.value() == doctest::Approx(325));
  }
  SUBCASE("the budget is corrected by the measured average") {
    // Under a 325 W budget the device averaged 400 W: 300 W above idle where 225 W was wanted, so
    // the budget's 225 W above idle scale by 225 / 300: 100 + 225 x 0.75 = 268.75 W.
    sim::DeviceCooling before = fresh;
    before.hot_budget = core::Watts(325);
    const auto d = sim::warm_start(pm, fresh, before, ran(400), step);
    CHECK(d.hot_budget.value() == doctest::Approx(268.75));
    CHECK(d.start.value() == 90);
    CHECK(d.start_hot);
  }
  SUBCASE("a budget past board power: heat no longer binds") {
    // Budget 650 W, average 200 W: 100 + 550 x 225 / 100 = 1337.5 W >= 700 W board: unlimited,
    // starting where throttling would have ended (90 - 3 = 87 C).
    sim::DeviceCooling before = fresh;
    before.hot_budget = core::Watts(650);
    const auto d = sim::warm_start(pm, fresh, before, ran(200), step);
    CHECK(d.hot_budget.value() == 0);
    CHECK(d.start.value() == 87);
    CHECK_FALSE(d.start_hot);
  }
  SUBCASE("a step of no length leaves the first step's start") {
    const auto d = sim::warm_start(pm, fresh, fresh, ran(500), Time::zero());
    CHECK(d.start == fresh.start);
    CHECK_FALSE(d.start_hot);
  }
}
