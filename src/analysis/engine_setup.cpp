#include "analysis/engine_setup.hpp"

#include <fmt/format.h>

#include "inflect/net/collective.hpp"

namespace inflect::analysis {

sim::EngineOptions engine_options(const plan::ClusterSpec& c, const hw::PowerModel& power) {
  sim::EngineOptions eo;
  eo.tuning = net::CollectiveTuning::of(c.topology);  // the topology's or the experiment's choice
  eo.comm_interference = c.device.comm_interference;
  eo.power.model = &power;
  eo.power.cap = core::Watts(c.power_cap());
  eo.power.comm_interference = eo.comm_interference;
  return eo;
}

sim::DeviceCooling base_cooling(const plan::ClusterSpec& c, const hw::PowerModel& power) {
  const auto& th = c.device.thermal;
  sim::DeviceCooling d;
  d.coolant = core::Celsius(c.inlet());
  d.resistance = core::ThermalResistance(c.topology.cooling.kind == net::CoolingKind::air ? th.resistance_air_c_per_w
                                                                                          : th.resistance_liquid_c_per_w);
  d.capacitance = core::HeatCapacity(th.capacitance_j_per_c);
  d.start = hw::rc_steady(d.coolant, power.idle(), d.resistance);
  return d;
}

Breakdown breakdown_of(const sim::RankTimes& t, bool across_sites) {
  auto s = [](core::Time x) { return core::Seconds(x.seconds()); };
  auto exposed = [&](workload::ParallelDim d) { return s(t.exposed[static_cast<std::size_t>(d)]); };
  Breakdown b;
  b.compute = s(t.compute);
  b.interference = s(t.interference);
  b.throttle = s(t.throttle);
  b.exposed_comm = {exposed(workload::ParallelDim::dp), exposed(workload::ParallelDim::tp), exposed(workload::ParallelDim::pp),
                    exposed(workload::ParallelDim::cp), exposed(workload::ParallelDim::ep)};
  b.bubble = s(t.bubble);
  b.other = s(t.other);
  if (across_sites) b.exposed_across_sites = s(t.exposed_across_sites);
  b.critical_rank_note = fmt::format("rank {}", t.rank);
  return b;
}

void derive_rates(RunReport& r) {
  const double step_s = r.step_time.value();
  const bool timed = step_s > 0;
  if (r.tokens_per_step) r.tokens_per_s = timed ? *r.tokens_per_step / step_s : 0;
  if (r.model_flops_per_step)
    r.model_tflops_per_gpu = timed ? r.model_flops_per_step->value() / step_s / r.devices / 1e12 : 0;
  r.hardware_tflops_per_gpu = timed ? r.hardware_flops_per_step.value() / step_s / r.devices / 1e12 : 0;
  if (r.model_tflops_per_gpu) r.mfu = r.peak_tflops_per_gpu > 0 ? *r.model_tflops_per_gpu / r.peak_tflops_per_gpu : 0;
}

}  // namespace inflect::analysis
