#pragma once
// Power, clock and temperature of each simulated device over simulated time (docs/power.md).
//
// The engine tells the tracker when a compute-stream kernel starts and ends and when the device's
// collectives start or stop moving data; the tracker keeps the device's instantaneous power
// (idle + the running kernel's power at its clock + communication), integrates energy exactly,
// and integrates temperature with the RC model over windows of at most `thermal_step` (average
// power over the window; exact when the power is constant over it). At a kernel's start it picks
// the kernel's clock: the highest one whose power fits the power limit and, while the device is
// hot (from reaching the slowdown temperature until it cools `hysteresis_c` below it), the power
// the cooling removes at the slowdown temperature, (T_slowdown - T_coolant) / R. The clock holds
// for the whole kernel (kernels last microseconds to milliseconds; the RC constant is seconds).
#include <cstdint>
#include <vector>

#include "inflect/core/time.hpp"
#include "inflect/hw/power_model.hpp"

namespace inflect::sim {

/// One simulated device's cooling and starting temperature.
struct DeviceCooling {
  core::Celsius coolant{25};           // inlet air or coolant temperature
  core::ThermalResistance resistance;  // die to coolant
  core::HeatCapacity capacitance;
  core::Celsius start{25};             // temperature at time zero
  bool start_hot = false;              // throttling at time zero (hysteresis carried from a step before)
  /// While hot, the power a kernel may draw; 0 = what the cooling removes at the slowdown
  /// temperature. warm_start regulates it across steps (see docs/power.md).
  core::Watts hot_budget;

  /// The power the cooling removes with the die held at `die`: (die - coolant) / R.
  core::Watts removes_at(core::Celsius die) const { return (die - coolant) / resistance; }
};

struct PowerOptions {
  const hw::PowerModel* model = nullptr;  // null: no power model (clocks fixed, nothing reported)
  core::Watts cap;                        // the power limit every device holds
  std::vector<DeviceCooling> devices;     // one per simulated rank, in graph order
  core::Time thermal_step = core::Time::from_seconds(0.01);
  /// Window of the averaged peak (DevicePower::peak_avg), as power telemetry averages.
  core::Time average_window = core::Time::from_seconds(0.1);
  /// The engine's comm_interference: a kernel overlapped by communication is stretched by
  /// (1 + this) with the same energy, so it draws its dynamic power / (1 + this) meanwhile.
  double comm_interference = 0;
};

/// One device over a run.
struct DevicePower {
  core::Joules energy;
  core::Watts peak;              // instantaneous, at kernel granularity
  core::Watts peak_avg;          // the highest average over any average_window (the run's
                                 // average when it is shorter than one window)
  core::Celsius peak_temp;
  core::Celsius end_temp;
  core::Seconds kernel_time;     // time running compute-stream kernels
  double clock_mhz_s = 0;        // their clock (MHz), integrated over that time
  core::Seconds power_limited;   // kernel time below the max clock because of the power limit
  core::Seconds thermal_limited; // ... because the device was hot
  bool reached_shutdown = false;
  bool end_hot = false;          // still throttling for heat at the end
};

/// Where a device starts the next step of a multi-step run (training.steps, docs/power.md "Steps"),
/// from how it ran the step before (`previous`, over `step`, having started as `before`); `fresh`
/// is its cooling with the start a first step has (the temperature its idle power settles at).
/// A step lasts seconds and the RC constant tens of seconds, so the next step starts at the state
/// a long run of such steps reaches:
///   - a device whose average power settles below its slowdown temperature starts there;
///   - one that would settle above it is regulated, as the driver's thermal slowdown does: it
///     starts at the slowdown temperature, hot, and its kernels may draw a budget that the next
///     steps correct until its average power is what the cooling removes there,
///     P_th = (T_slowdown - T_coolant) / R (the budget's part above idle scaled by the ratio of
///     the wanted to the measured average above idle);
///   - a regulated device whose budget would exceed board power is no longer limited by heat.
/// A step of no length leaves the start as it was (`fresh`).
DeviceCooling warm_start(const hw::PowerModel& model, const DeviceCooling& fresh, const DeviceCooling& before,
                         const DevicePower& previous, core::Time step);

class DevicePowerTracker {
 public:
  DevicePowerTracker() = default;
  /// `slots` devices; options.devices must have that many entries when a model is given.
  void reset(const PowerOptions& options, std::size_t slots);
  bool enabled() const { return model_ != nullptr; }

  /// A kernel starts on `slot` at `now`: returns its duration's scale (1 at the calibrated clock).
  double kernel_start(std::uint32_t slot, core::Time now, const hw::KernelPower& k);
  void kernel_end(std::uint32_t slot, core::Time now);
  /// The device's collectives started (active) or stopped moving data.
  void communication(std::uint32_t slot, core::Time now, bool active);
  /// Closes the run at `end` (every device idles from its last change to the end).
  void finish(core::Time end);

  /// Each device's figures over the run; complete after finish().
  const std::vector<DevicePower>& devices() const { return out_; }
  /// Instantaneous figures of a device, for trace counters.
  core::Watts power(std::uint32_t slot) const { return core::Watts(state_[slot].power_w); }
  double clock_mhz(std::uint32_t slot) const;
  core::Celsius temperature(std::uint32_t slot) const { return core::Celsius(state_[slot].temp_c); }

 private:
  // Everything an event touches sits in one 128-byte State per device (two cache lines; the
  // engine calls in here several times per kernel on every device), as plain doubles in the units
  // their names say (converted to unit types at the public edges above). The power drawn now is
  // kept, refreshed when a kernel starts or ends, communication starts or stops, or the
  // temperature moves, so that settling is one multiply-add per energy total. Kernel-time figures
  // are added once per kernel (its clock holds for the whole kernel), not at every settle.
  struct alignas(64) State {
    core::Time last;          // when the power last changed (energy settled to here)
    core::Time window_start;  // thermal window
    core::Time avg_start;     // averaging window (peak_avg)
    core::Time kernel_since;  // when the running kernel started
    double power_w = 0;       // drawn now: idle + leakage + kernel + communication
    double base_w = 0;        // idle + leakage at temp_c
    double energy_j = 0;
    double window_j = 0;      // energy in the thermal window
    double avg_j = 0;
    double peak_w = 0;
    double kernel_w = 0;      // running kernel's dynamic power (above idle); 0 when none
    double temp_c = 0;
    int level = -1;           // running kernel's clock level; -1 when none
    hw::ClockLimit limit = hw::ClockLimit::none;
    bool comm = false;
    bool hot = false;
    bool avg_closed = false;  // a whole averaging window has passed
  };
  void settle(std::uint32_t slot, core::Time now) {
    State& s = state_[slot];
    if (now > s.last) {
      const double j = s.power_w * (now - s.last).seconds();
      s.energy_j += j;
      s.window_j += j;
      s.avg_j += j;
      if (now - s.avg_start >= opt_.average_window) close_average(slot, now);
      s.last = now;
    }
    if (now - s.window_start >= opt_.thermal_step) update_temperature(slot, now);
  }
  void close_average(std::uint32_t slot, core::Time now);
  void update_temperature(std::uint32_t slot, core::Time now);
  /// The die temperature moved: leakage, so the idle-plus-leakage base and the power drawn, follow.
  void set_temperature(State& s, double temp_c) const {
    s.temp_c = temp_c;
    s.base_w = idle_w_ + model_->leakage(core::Celsius(temp_c)).value();
    refresh(s);
  }
  /// Recomputes power_w from the state (after kernel_w, comm or temp_c changed).
  void refresh(State& s) const {
    s.power_w = s.comm ? s.base_w + s.kernel_w / comm_slowdown_ + comm_w_ : s.base_w + s.kernel_w;
  }
  /// Adds the running kernel's time from kernel_since to `now` to the device's kernel figures.
  void count_kernel(std::uint32_t slot, core::Time now);

  const hw::PowerModel* model_ = nullptr;
  PowerOptions opt_;
  double comm_slowdown_ = 1;  // 1 + interference: a kernel beside communication draws its dynamic power / this
  double comm_w_ = 0, idle_w_ = 0;  // the model's watts, read per kernel
  std::vector<State> state_;
  std::vector<DevicePower> out_;
};

}  // namespace inflect::sim
