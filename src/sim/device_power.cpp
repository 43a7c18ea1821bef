#include "inflect/sim/device_power.hpp"

#include <algorithm>

#include "inflect/core/error.hpp"

namespace inflect::sim {

void DevicePowerTracker::reset(const PowerOptions& options, std::size_t slots) {
  model_ = options.model;
  opt_ = options;
  state_.assign(model_ ? slots : 0, State{});
  out_.assign(model_ ? slots : 0, DevicePower{});
  if (!model_) return;
  core::check_invariant(options.devices.size() == slots, "one cooling entry per simulated device");
  core::check_invariant(options.thermal_step > core::Time::zero(), "thermal step must be positive");
  const auto& th = model_->device().thermal;
  for (std::size_t i = 0; i < slots; ++i) {
    state_[i].temp_c = options.devices[i].start_c;
    state_[i].hot = options.devices[i].start_hot || state_[i].temp_c >= th.slowdown_c;
    out_[i].peak_c = state_[i].temp_c;
    out_[i].peak_w = model_->idle_w();
  }
}

double DevicePowerTracker::current_w(const State& s) const {
  const double base = model_->idle_w() + model_->leakage_w(s.temp_c);
  if (!s.comm) return base + s.kernel_w;
  return base + s.kernel_w / (1 + opt_.comm_interference) + model_->communication_w();
}

double DevicePowerTracker::power_w(std::uint32_t slot) const { return current_w(state_[slot]); }

double DevicePowerTracker::clock_mhz(std::uint32_t slot) const {
  const State& s = state_[slot];
  return s.level >= 0 ? model_->clock_mhz(s.level) : 0.0;
}

void DevicePowerTracker::settle(std::uint32_t slot, core::Time now) {
  State& s = state_[slot];
  DevicePower& o = out_[slot];
  if (now > s.last) {
    const double dt = (now - s.last).seconds();
    const double j = current_w(s) * dt;
    o.energy_j += j;
    s.window_j += j;
    s.avg_j += j;
    if (now - s.avg_start >= opt_.average_window) {
      o.peak_avg_w = std::max(o.peak_avg_w, s.avg_j / (now - s.avg_start).seconds());
      s.avg_start = now;
      s.avg_j = 0;
      s.avg_closed = true;
    }
    if (s.level >= 0) {
      o.kernel_s += dt;
      o.clock_mhz_s += model_->clock_mhz(s.level) * dt;
      if (s.limit == hw::ClockLimit::power) o.power_limited_s += dt;
      else if (s.limit == hw::ClockLimit::thermal) o.thermal_limited_s += dt;
    }
    s.last = now;
  }
  if (now - s.window_start >= opt_.thermal_step) update_temperature(slot, now);
}

void DevicePowerTracker::update_temperature(std::uint32_t slot, core::Time now) {
  State& s = state_[slot];
  DevicePower& o = out_[slot];
  if (now <= s.window_start) return;
  const double dt = (now - s.window_start).seconds();
  const DeviceCooling& c = opt_.devices[slot];
  const auto& th = model_->device().thermal;
  // Within a window the temperature moves monotonically towards coolant + P R, so its peak over
  // the window is at one of the ends; the start was counted by the window before.
  s.temp_c = hw::rc_step(s.temp_c, c.coolant_c, s.window_j / dt, c.resistance_c_per_w, c.capacitance_j_per_c, dt);
  o.peak_c = std::max(o.peak_c, s.temp_c);
  if (s.temp_c >= th.shutdown_c) o.reached_shutdown = true;
  if (s.temp_c >= th.slowdown_c) s.hot = true;
  else if (s.hot && s.temp_c <= th.slowdown_c - th.hysteresis_c) s.hot = false;
  s.window_start = now;
  s.window_j = 0;
}

double DevicePowerTracker::kernel_start(std::uint32_t slot, core::Time now, const hw::KernelPower& k) {
  settle(slot, now);
  State& s = state_[slot];
  // Below board power the limit is on the whole device: with communication running, what the
  // kernel itself may draw is what is left (its dynamic part is spread over (1 + interference)).
  // At board power the calibrated clock stands (the calibration already ran under that limit).
  // Leakage above the calibration temperature comes off the limit too (power_w counts idle only).
  const double leak = model_->leakage_w(s.temp_c);
  auto kernel_budget = [&](double device_w) {
    device_w -= leak;
    if (!s.comm) return device_w;
    const double idle = model_->idle_w();
    return idle + (device_w - idle - model_->communication_w()) * (1 + opt_.comm_interference);
  };
  int level = opt_.cap_w >= model_->board_w() && leak == 0 ? k.cal_level : model_->level_under(k, kernel_budget(opt_.cap_w));
  s.limit = level < model_->top_level() ? hw::ClockLimit::power : hw::ClockLimit::none;
  if (s.hot) {
    // While hot, the device may draw what its cooling removes at the slowdown temperature.
    const DeviceCooling& c = opt_.devices[slot];
    const double budget =
        c.hot_budget_w > 0 ? c.hot_budget_w : (model_->device().thermal.slowdown_c - c.coolant_c) / c.resistance_c_per_w;
    const int hot_level = model_->level_under(k, kernel_budget(budget));
    if (hot_level < level) {
      level = hot_level;
      s.limit = hw::ClockLimit::thermal;
    }
  }
  s.level = level;
  s.kernel_w = model_->power_w(k, level) - model_->idle_w();
  out_[slot].peak_w = std::max(out_[slot].peak_w, current_w(s));
  return model_->time_scale(k, level);
}

void DevicePowerTracker::kernel_end(std::uint32_t slot, core::Time now) {
  settle(slot, now);
  State& s = state_[slot];
  s.level = -1;
  s.kernel_w = 0;
  s.limit = hw::ClockLimit::none;
}

void DevicePowerTracker::communication(std::uint32_t slot, core::Time now, bool active) {
  settle(slot, now);
  State& s = state_[slot];
  s.comm = active;
  out_[slot].peak_w = std::max(out_[slot].peak_w, current_w(s));
}

void DevicePowerTracker::finish(core::Time end) {
  for (std::uint32_t i = 0; i < state_.size(); ++i) {
    settle(i, end);
    update_temperature(i, end);
    out_[i].end_c = state_[i].temp_c;
    out_[i].end_hot = state_[i].hot;
    if (!state_[i].avg_closed && end > core::Time::zero()) out_[i].peak_avg_w = out_[i].energy_j / end.seconds();
  }
}

}  // namespace inflect::sim
