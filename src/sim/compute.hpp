#pragma once
// Kernels: how long each takes, and what slows a compute-stream kernel while it runs.
//
// A compute op's duration is hw::ComputeModel::duration of its kernel (or the sum over a fused
// block's parts), computed once per kernel, times its device's speed factor when devices vary
// (sim/speeds). With a hw::PowerModel (EngineOptions::power) a
// compute-stream kernel's duration is scaled by the clock the DevicePowerTracker picks at its start
// (the power limit, and while the device is hot the power its cooling removes); at the default
// limit the scale is exactly 1, so calibrated durations stand. While a collective of its rank moves
// data, a compute-stream kernel progresses at 1/(1 + comm_interference): it runs as a
// core::Activity whose rate changes when its rank's communication starts or stops, and its
// completion is rescheduled then (completions predicted before are dropped as stale), so the
// slowdown is exact in time and independent of how kernels are fused.
#include <vector>

#include "inflect/core/event_queue.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/sim/device_power.hpp"
#include "inflect/sim/engine.hpp"
#include "sim/ids.hpp"
#include "sim/rank_state.hpp"
#include "sim/rank_templates.hpp"
#include "sim/speeds.hpp"

namespace inflect::sim {

class Compute {
  using Time = core::Time;

 public:
  Compute(const workload::ExecutionGraph& g, const hw::ComputeModel& model, const EngineOptions& opt, const RankTemplates& t,
          RankState& state, core::EventQueue& q);

  /// Starts kernel `t`, the head op of rank `slot`'s stream `key`, at `now` and schedules its
  /// completion.
  void start_kernel(StreamKey key, Slot slot, const OpTemplate& t, Time now);
  /// A completion event for stream `key`'s head kernel: false when it is stale (the kernel was
  /// rescheduled since; under interference a stale completion may even arrive after the stream has
  /// moved on).
  bool kernel_done(StreamKey key, Time now);
  /// A compute-stream kernel of `slot` ended at `now`: the power tracker's part.
  void kernel_ended(Slot slot, Time now) {
    if (!power_.enabled()) return;
    apply_comm(slot, now);
    power_.kernel_end(slot.value(), now);
    sample_device(slot, now);
  }

  // Whether a rank's collectives move data matters to its power and to its running kernel's
  // speed. Half of a TP-heavy step's transitions undo one another within an instant (a
  // reduce-scatter ends and the next all-gather starts at once), so a crossing of zero is noted
  // and applied at the end of the instant (apply_pending), or before the rank's next kernel starts
  // or ends, whichever is first: the power and interference models see the same sequence of
  // states, without the pairs that change nothing.
  void comm_started(Slot slot) {
    if (state_.slots[slot].comm_active++ == 0) comm_crossed(slot);
  }
  void comm_ended(Slot slot) {
    if (--state_.slots[slot].comm_active == 0) comm_crossed(slot);
  }
  /// The instant's crossings of zero that were not undone within it.
  void apply_pending(Time now) {
    for (std::size_t i = 0; i < pending_comm_.size(); ++i) apply_comm(pending_comm_[i], now);
    pending_comm_.clear();
  }

  /// Tells the observer every device's power, clock and temperature (the idle state at the start).
  void sample_all(Time now);
  /// The power tracker's totals at the end of the run (with a power model).
  std::vector<DevicePower> finish_power(Time makespan);

 private:
  void comm_crossed(Slot slot) {
    if (!power_.enabled() && opt_.comm_interference <= 0) return;
    SlotState& sl = state_.slots[slot];
    if (sl.comm_pending) return;
    sl.comm_pending = true;
    pending_comm_.push_back(slot);
  }
  void apply_comm(Slot slot, Time now);
  void comm_state_changed(Slot slot, Time now);
  void schedule_running(Slot slot);
  // Tells the observer the device's power, clock and temperature after a change.
  void sample_device(Slot slot, Time now) {
    if (!opt_.observer) return;
    const std::uint32_t s = slot.value();
    opt_.observer->on_device(g_, DeviceSample{g_.simulated_ranks()[s], now, power_.power(s), power_.clock_mhz(s),
                                              power_.temperature(s)});
  }

  const workload::ExecutionGraph& g_;
  const EngineOptions& opt_;
  const RankTemplates& t_;
  RankState& state_;
  core::EventQueue& q_;
  std::vector<Time> kernel_time_;
  std::vector<double> kernel_flops_;
  std::vector<hw::KernelPower> kernel_power_;  // with a power model
  Speeds speeds_;                              // device variability (EngineOptions::variability)
  DevicePowerTracker power_;
  std::vector<Slot> pending_comm_;
};

// The per-kernel path, inline: the event loop (engine.cpp) runs it for every kernel.

inline void Compute::start_kernel(StreamKey key, Slot slot, const OpTemplate& t, core::Time now) {
  SlotState& sl = state_.slots[slot];
  core::Time dur = kernel_time_[t.payload];
  sl.times.flops += kernel_flops_[t.payload];
  if (speeds_.enabled()) {
    // The device's (or the slowest stood-for device's) speed, before clocks and interference.
    const core::Time varied = speeds_.duration(slot, state_.streams[key].head, t.payload, dur);
    if (t.on_compute_stream) sl.times.device_slowdown += varied - dur;
    dur = varied;
  }
  if (t.on_compute_stream) {
    apply_comm(slot, now);
    if (power_.enabled()) {
      // The clock the power limit and temperature allow; 1 at the calibrated clock (exact).
      const double scale = power_.kernel_start(slot.value(), now, kernel_power_[t.payload]);
      sample_device(slot, now);
      if (scale != 1.0) {
        const core::Time base = dur;
        dur = core::Time::ps(static_cast<Time::rep>(static_cast<double>(dur.count_ps()) * scale + 0.5));
        sl.times.throttle += dur - base;
      }
    }
    if (opt_.comm_interference > 0) {
      // Progress at 1/(1 + interference) while a collective of this rank moves data; the
      // completion moves when that changes (comm_state_changed), and compute time is counted at
      // the end.
      RunningKernel& run = sl.run;
      run.top = state_.streams[key].head;
      run.slowed = sl.comm_on;
      run.work.start(now, static_cast<double>(dur.count_ps()),
                     KernelSlowdown{run.slowed ? 1.0 + opt_.comm_interference : 1.0});
      run.base = dur;
      schedule_running(slot);
      return;
    }
    sl.times.compute += dur;
  }
  push_event(q_, now + dur, EventKind::compute_done, key.value());
}

inline void Compute::schedule_running(Slot slot) {
  RunningKernel& run = state_.slots[slot].run;
  run.end = run.work.end();
  push_event(q_, run.end, EventKind::compute_done, t_.keys().key(slot, t_.op(run.top).stream).value());
}

// The rank's communication state changed: settle the running kernel's progress at the old rate
// and reschedule its completion at the new one (the old completion event goes stale).
inline void Compute::comm_state_changed(Slot slot, core::Time now) {
  SlotState& sl = state_.slots[slot];
  RunningKernel& run = sl.run;
  if (run.top.is_none() || run.slowed == sl.comm_on) return;
  run.slowed = sl.comm_on;
  run.work.set_rate(now, KernelSlowdown{run.slowed ? 1.0 + opt_.comm_interference : 1.0});
  schedule_running(slot);
}

inline bool Compute::kernel_done(StreamKey key, core::Time now) {
  if (opt_.comm_interference <= 0 || static_cast<int>(t_.keys().stream(key)) != t_.compute_stream()) return true;
  SlotState& sl = state_.slots[t_.keys().slot(key)];
  RunningKernel& run = sl.run;
  if (run.top != state_.streams[key].head || run.end != now) return false;  // superseded by a reschedule
  run.top = TemplateOp::none();
  const core::Time took = now - state_.streams[key].started;
  sl.times.compute += took;
  if (took > run.base) sl.times.interference += took - run.base;
  return true;
}

inline void Compute::apply_comm(Slot slot, core::Time now) {
  SlotState& sl = state_.slots[slot];
  if (!sl.comm_pending) return;
  sl.comm_pending = false;
  const bool on = sl.comm_active > 0;
  if (on == sl.comm_on) return;
  sl.comm_on = on;
  if (opt_.comm_interference > 0) comm_state_changed(slot, now);
  if (power_.enabled()) {
    power_.communication(slot.value(), now, on);
    sample_device(slot, now);
  }
}

}  // namespace inflect::sim
