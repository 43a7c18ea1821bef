#include "inflect/sim/device_power.hpp"

#include <algorithm>

#include "inflect/core/error.hpp"

namespace inflect::sim {

DeviceCooling warm_start(const hw::PowerModel& model, const DeviceCooling& fresh, const DeviceCooling& before,
                         const DevicePower& previous, core::Time step) {
  DeviceCooling d = fresh;
  if (!(step > core::Time::zero())) return d;
  const auto& th = model.device().thermal;
  const double idle = model.idle_w(), board = model.board_w();
  const double avg = previous.energy_j / step.seconds();
  const double steady = hw::rc_steady(d.coolant_c, avg, d.resistance_c_per_w);
  const double p_th = (th.slowdown_c - d.coolant_c) / d.resistance_c_per_w;
  const double budget = before.hot_budget_w;
  if (budget <= 0) {
    if (steady < th.slowdown_c) {
      d.start_c = steady;
      return d;
    }
    d.hot_budget_w = std::max(p_th, idle);  // first guess: kernels draw what the cooling removes
  } else {
    d.hot_budget_w = avg > idle && budget > idle ? idle + (budget - idle) * (p_th - idle) / (avg - idle) : budget;
    d.hot_budget_w = std::max(d.hot_budget_w, idle);
    if (d.hot_budget_w >= board) {  // heat no longer binds
      d.hot_budget_w = 0;
      d.start_c = th.slowdown_c - th.hysteresis_c;
      return d;
    }
  }
  d.start_c = th.slowdown_c;
  d.start_hot = true;
  return d;
}

void DevicePowerTracker::reset(const PowerOptions& options, std::size_t slots) {
  model_ = options.model;
  opt_ = options;
  state_.assign(model_ ? slots : 0, State{});
  out_.assign(model_ ? slots : 0, DevicePower{});
  if (!model_) return;
  core::check_invariant(options.devices.size() == slots, "one cooling entry per simulated device");
  core::check_invariant(options.thermal_step > core::Time::zero(), "thermal step must be positive");
  comm_slowdown_ = 1 + opt_.comm_interference;
  comm_w_ = model_->communication_w();
  const auto& th = model_->device().thermal;
  for (std::size_t i = 0; i < slots; ++i) {
    State& s = state_[i];
    set_temperature(s, options.devices[i].start_c);
    s.hot = options.devices[i].start_hot || s.temp_c >= th.slowdown_c;
    s.peak_w = model_->idle_w();
    out_[i].peak_c = s.temp_c;
  }
}

double DevicePowerTracker::power_w(std::uint32_t slot) const { return state_[slot].power_w; }

double DevicePowerTracker::clock_mhz(std::uint32_t slot) const {
  const State& s = state_[slot];
  return s.level >= 0 ? model_->clock_mhz(s.level) : 0.0;
}

void DevicePowerTracker::close_average(std::uint32_t slot, core::Time now) {
  State& s = state_[slot];
  out_[slot].peak_avg_w = std::max(out_[slot].peak_avg_w, s.avg_j / (now - s.avg_start).seconds());
  s.avg_start = now;
  s.avg_j = 0;
  s.avg_closed = true;
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
  set_temperature(s, hw::rc_step(s.temp_c, c.coolant_c, s.window_j / dt, c.resistance_c_per_w, c.capacitance_j_per_c, dt));
  o.peak_c = std::max(o.peak_c, s.temp_c);
  if (s.temp_c >= th.shutdown_c) o.reached_shutdown = true;
  if (s.temp_c >= th.slowdown_c) s.hot = true;
  else if (s.hot && s.temp_c <= th.slowdown_c - th.hysteresis_c) s.hot = false;
  s.window_start = now;
  s.window_j = 0;
}

void DevicePowerTracker::count_kernel(std::uint32_t slot, core::Time now) {
  const State& s = state_[slot];
  DevicePower& o = out_[slot];
  const double dt = (now - s.kernel_since).seconds();
  o.kernel_s += dt;
  o.clock_mhz_s += model_->clock_mhz(s.level) * dt;
  if (s.limit == hw::ClockLimit::power) o.power_limited_s += dt;
  else if (s.limit == hw::ClockLimit::thermal) o.thermal_limited_s += dt;
}

double DevicePowerTracker::kernel_start(std::uint32_t slot, core::Time now, const hw::KernelPower& k) {
  settle(slot, now);
  State& s = state_[slot];
  // Below board power the limit is on the whole device: with communication running, what the
  // kernel itself may draw is what is left (its dynamic part is spread over (1 + interference)).
  // At board power the calibrated clock stands (the calibration already ran under that limit).
  // Leakage above the calibration temperature comes off the limit too (power_w counts idle only).
  const double leak = model_->leakage_w(s.temp_c);  // not base_w - idle: that differs in the last bit
  auto kernel_budget = [&](double device_w) {
    device_w -= leak;
    if (!s.comm) return device_w;
    const double idle = model_->idle_w();
    return idle + (device_w - idle - comm_w_) * comm_slowdown_;
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
  s.kernel_since = now;
  s.kernel_w = model_->power_w(k, level) - model_->idle_w();
  refresh(s);
  s.peak_w = std::max(s.peak_w, s.power_w);
  return model_->time_scale(k, level);
}

void DevicePowerTracker::kernel_end(std::uint32_t slot, core::Time now) {
  settle(slot, now);
  State& s = state_[slot];
  if (s.level >= 0) count_kernel(slot, now);
  s.level = -1;
  s.kernel_w = 0;
  s.limit = hw::ClockLimit::none;
  refresh(s);
}

void DevicePowerTracker::communication(std::uint32_t slot, core::Time now, bool active) {
  settle(slot, now);
  State& s = state_[slot];
  s.comm = active;
  refresh(s);
  s.peak_w = std::max(s.peak_w, s.power_w);
}

void DevicePowerTracker::finish(core::Time end) {
  for (std::uint32_t i = 0; i < state_.size(); ++i) {
    settle(i, end);
    update_temperature(i, end);
    State& s = state_[i];
    DevicePower& o = out_[i];
    if (s.level >= 0) {
      count_kernel(i, end);
      s.kernel_since = end;
    }
    o.energy_j = s.energy_j;
    o.peak_w = s.peak_w;
    o.end_c = s.temp_c;
    o.end_hot = s.hot;
    if (!s.avg_closed && end > core::Time::zero()) o.peak_avg_w = o.energy_j / end.seconds();
  }
}

}  // namespace inflect::sim
