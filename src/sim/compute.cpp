#include "sim/compute.hpp"

#include <fmt/format.h>

#include "inflect/core/error.hpp"

namespace inflect::sim {

using core::Time;

namespace {
hw::KernelPower with_duration(hw::KernelPower p, Time t) {
  p.t_cal = core::Seconds(t.seconds());
  return p;
}
}  // namespace

Time kernel_duration(const workload::Kernel& k, const hw::ComputeModel& model) {
  if (k.recorded) return *k.recorded;  // measured: the device model has no say
  if (k.parts.empty()) return model.duration(k.cost);
  Time sum = Time::zero();
  for (const auto& part : k.parts) sum += model.duration(part);
  return sum;
}

Compute::Compute(const workload::ExecutionGraph& g, const hw::ComputeModel& model, const EngineOptions& opt,
                 const RankTemplates& t, RankState& state, core::EventQueue& q)
    : g_(g), opt_(opt), t_(t), state_(state), q_(q), speeds_(g, model, t, opt.variability) {
  kernel_time_.reserve(g.kernels().size());
  for (const auto& k : g.kernels()) kernel_flops_.push_back(k.cost.flops.value());
  for (const auto& k : g.kernels()) {
    kernel_time_.push_back(kernel_duration(k, model));
    // from_seconds saturates at Time::max() ("never"); a kernel that long is an input far out of
    // range (a graph JSON's 1e308 FLOPs), refused here by name rather than by the engine's clock.
    if (kernel_time_.back() == Time::max())
      throw core::Error(core::ErrorKind::input,
                        fmt::format("kernel '{}' ({:.3g} FLOP, {:.3g} B) would take longer than the 106 days "
                                    "simulated time can represent",
                                    k.name, k.cost.flops.value(), k.cost.bytes.value()));
  }
  if (opt.power.model) {
    kernel_power_.reserve(g.kernels().size());
    for (const auto& k : g.kernels()) {
      hw::KernelPower p = k.parts.empty() ? opt.power.model->profile(k.cost, model) : opt.power.model->profile(k.parts, model);
      // A recorded kernel ran for its measured time: its energy is its work's (none when the trace
      // names no FLOPs or bytes: idle power), spread over that time; the share that follows the
      // clock is the model's for that work.
      if (k.recorded) p = opt.power.model->calibrate(with_duration(p, *k.recorded));
      kernel_power_.push_back(p);
    }
  }
  power_.reset(opt.power, t.slots());
}

void Compute::sample_all(Time now) {
  if (!power_.enabled()) return;
  for (Slot s(0); s.value() < t_.slots(); s = Slot(s.value() + 1)) sample_device(s, now);
}

std::vector<DevicePower> Compute::finish_power(Time makespan) {
  if (!power_.enabled()) return {};
  power_.finish(makespan);
  return power_.devices();
}

}  // namespace inflect::sim
