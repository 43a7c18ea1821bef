#include "inflect/sim/device_power.hpp"

#include <algorithm>

#include "inflect/core/error.hpp"

namespace inflect::sim {

DeviceCooling warm_start(const hw::PowerModel& model, const DeviceCooling& fresh, const DeviceCooling& before,
                         const DevicePower& previous, core::Time step) {
  DeviceCooling d = fresh;
  if (!(step > core::Time::zero())) return d;
  const auto& th = model.device().thermal;
  const core::Celsius slowdown(th.slowdown_c);
  const core::Watts avg = previous.energy / core::Seconds(step.seconds());
  const core::Celsius steady = hw::rc_steady(d.coolant, avg, d.resistance);
  const core::Watts p_th = d.removes_at(slowdown);
  const core::Watts idle = model.idle(), board = model.board(), budget = before.hot_budget;
  if (budget.value() <= 0) {
    if (steady < slowdown) {
      d.start = steady;
      return d;
    }
    d.hot_budget = std::max(p_th, idle);  // first guess: kernels draw what the cooling removes
  } else {
    // The budget's part above idle, scaled by wanted over measured average above idle (in that
    // order of operations: a reordering would move the result's last bit).
    const double i = idle.value(), b = budget.value(), a = avg.value(), p = p_th.value();
    d.hot_budget = a > i && b > i ? core::Watts(i + (b - i) * (p - i) / (a - i)) : budget;
    d.hot_budget = std::max(d.hot_budget, idle);
    if (d.hot_budget >= board) {  // heat no longer binds
      d.hot_budget = core::Watts(0);
      d.start = slowdown - core::Celsius(th.hysteresis_c);
      return d;
    }
  }
  d.start = slowdown;
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
  comm_w_ = model_->communication().value();
  idle_w_ = model_->idle().value();
  const auto& th = model_->device().thermal;
  for (std::size_t i = 0; i < slots; ++i) {
    State& s = state_[i];
    set_temperature(s, options.devices[i].start.value());
    s.hot = options.devices[i].start_hot || s.temp_c >= th.slowdown_c;
    s.peak_w = idle_w_;
    out_[i].peak_temp = core::Celsius(s.temp_c);
  }
}

double DevicePowerTracker::clock_mhz(std::uint32_t slot) const {
  const State& s = state_[slot];
  return s.level >= 0 ? model_->clock_mhz(s.level) : 0.0;
}

void DevicePowerTracker::close_average(std::uint32_t slot, core::Time now) {
  State& s = state_[slot];
  out_[slot].peak_avg = std::max(out_[slot].peak_avg, core::Watts(s.avg_j / (now - s.avg_start).seconds()));
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
  set_temperature(s, hw::rc_step(core::Celsius(s.temp_c), c.coolant, core::Watts(s.window_j / dt), c.resistance,
                                 c.capacitance, core::Seconds(dt))
                         .value());
  o.peak_temp = std::max(o.peak_temp, core::Celsius(s.temp_c));
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
  o.kernel_time += core::Seconds(dt);
  o.clock_mhz_s += model_->clock_mhz(s.level) * dt;
  if (s.limit == hw::ClockLimit::power) o.power_limited += core::Seconds(dt);
  else if (s.limit == hw::ClockLimit::thermal) o.thermal_limited += core::Seconds(dt);
}

double DevicePowerTracker::kernel_start(std::uint32_t slot, core::Time now, const hw::KernelPower& k) {
  settle(slot, now);
  State& s = state_[slot];
  // Below board power the limit is on the whole device: with communication running, what the
  // kernel itself may draw is what is left (its dynamic part is spread over (1 + interference)).
  // At board power the calibrated clock stands (the calibration already ran under that limit).
  // Leakage above the calibration temperature comes off the limit too (power_w counts idle only).
  const double leak = model_->leakage(core::Celsius(s.temp_c)).value();  // not base_w - idle: that differs in the last bit
  auto kernel_budget = [&](double device_w) {
    device_w -= leak;
    if (!s.comm) return core::Watts(device_w);
    return core::Watts(idle_w_ + (device_w - idle_w_ - comm_w_) * comm_slowdown_);
  };
  int level = opt_.cap >= model_->board() && leak == 0 ? k.cal_level : model_->level_under(k, kernel_budget(opt_.cap.value()));
  s.limit = level < model_->top_level() ? hw::ClockLimit::power : hw::ClockLimit::none;
  if (s.hot) {
    // While hot, the device may draw what its cooling removes at the slowdown temperature.
    const DeviceCooling& c = opt_.devices[slot];
    const double budget = c.hot_budget.value() > 0 ? c.hot_budget.value()
                                                   : c.removes_at(core::Celsius(model_->device().thermal.slowdown_c)).value();
    const int hot_level = model_->level_under(k, kernel_budget(budget));
    if (hot_level < level) {
      level = hot_level;
      s.limit = hw::ClockLimit::thermal;
    }
  }
  s.level = level;
  s.kernel_since = now;
  s.kernel_w = model_->power(k, level).value() - idle_w_;
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
    o.energy = core::Joules(s.energy_j);
    o.peak = core::Watts(s.peak_w);
    o.end_temp = core::Celsius(s.temp_c);
    o.end_hot = s.hot;
    if (!s.avg_closed && end > core::Time::zero()) o.peak_avg = core::Watts(s.energy_j / end.seconds());
  }
}

}  // namespace inflect::sim
