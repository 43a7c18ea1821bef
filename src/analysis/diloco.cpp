// DiLoCo-style training (training.diloco): the inner and sync steps simulated by the engine, the
// synchronous plan beside them, and the period's mean step (docs/low-communication.md).
#include "analysis/diloco.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "inflect/plan/diloco.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/plan/plan_summary.hpp"
#include "inflect/plan/validate.hpp"
#include "analysis/engine_setup.hpp"

namespace inflect::analysis {

namespace {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// Power over a period: mean powers weighted by the time each step takes of it (ti, ts: summing to
// 1), energies by how many of each step it has (a, b), peaks the higher; the clock weighted by the
// compute time of each step.
void amortise_power(const RunReport& inner, double a, const RunReport& sync, double b, double ti, double ts, RunReport& r) {
  if (!inner.power.modeled || !sync.power.modeled) return;
  const PowerReport &x = inner.power, &y = sync.power;
  PowerReport& p = r.power;
  p.avg_device = x.avg_device * ti + y.avg_device * ts;
  p.avg_node = x.avg_node * ti + y.avg_node * ts;
  p.cluster_avg = x.cluster_avg * ti + y.cluster_avg * ts;
  p.facility_avg = x.facility_avg * ti + y.facility_avg * ts;
  p.energy_per_step = x.energy_per_step * a + y.energy_per_step * b;
  p.facility_energy_per_step = x.facility_energy_per_step * a + y.facility_energy_per_step * b;
  if (r.tokens_per_step) p.energy_per_token = *r.tokens_per_step > 0 ? p.energy_per_step / *r.tokens_per_step : core::Joules(0);
  p.peak_device = std::max(x.peak_device, y.peak_device);
  p.peak_avg_device = std::max(x.peak_avg_device, y.peak_avg_device);
  const double ci = a * inner.breakdown.compute.value(), cs = b * sync.breakdown.compute.value();
  if (ci + cs > 0) p.avg_clock_mhz = (x.avg_clock_mhz * ci + y.avg_clock_mhz * cs) / (ci + cs);

  const ThermalReport &u = inner.thermal, &v = sync.thermal;
  ThermalReport& t = r.thermal;
  t.peak_temp = std::max(u.peak_temp, v.peak_temp);
  t.power_throttled_fraction = u.power_throttled_fraction * ti + v.power_throttled_fraction * ts;
  t.thermal_throttled_fraction = u.thermal_throttled_fraction * ti + v.thermal_throttled_fraction * ts;
  t.throttled_fraction = t.power_throttled_fraction + t.thermal_throttled_fraction;
  t.limiter = t.throttled_fraction == 0 ? "none" : (t.thermal_throttled_fraction > t.power_throttled_fraction ? "thermal" : "power");
  t.reached_shutdown = u.reached_shutdown || v.reached_shutdown;
}

// A run's wall-clock figures and counts, added to the report's (several engine runs make one).
void add_simulator(const SimulatorStats& s, SimulatorStats& into) {
  into.compile += s.compile;
  into.engine += s.engine;
  into.events += s.events;
  into.ops += s.ops;
}

}  // namespace

RunReport amortise(const RunReport& inner, double a, const RunReport& sync, double b) {
  RunReport r = sync;
  r.step_time = inner.step_time * a + sync.step_time * b;
  r.hardware_flops_per_step = inner.hardware_flops_per_step * a + sync.hardware_flops_per_step * b;
  derive_rates(r);  // from the mean step
  const Breakdown &x = inner.breakdown, &y = sync.breakdown;
  Breakdown& k = r.breakdown;
  auto mix = [&](core::Seconds p, core::Seconds q) { return p * a + q * b; };
  k.compute = mix(x.compute, y.compute);
  k.interference = mix(x.interference, y.interference);
  k.throttle = mix(x.throttle, y.throttle);
  k.exposed_comm = {mix(x.exposed_comm.dp, y.exposed_comm.dp), mix(x.exposed_comm.tp, y.exposed_comm.tp),
                    mix(x.exposed_comm.pp, y.exposed_comm.pp), mix(x.exposed_comm.cp, y.exposed_comm.cp),
                    mix(x.exposed_comm.ep, y.exposed_comm.ep)};
  k.bubble = mix(x.bubble, y.bubble);
  k.other = mix(x.other, y.other);
  if (x.stragglers && y.stragglers) k.stragglers = mix(*x.stragglers, *y.stragglers);
  if (x.exposed_across_sites && y.exposed_across_sites)
    k.exposed_across_sites = mix(*x.exposed_across_sites, *y.exposed_across_sites);
  k.critical_rank_note = fmt::format("{} in the inner step, {} in the sync step", x.critical_rank_note, y.critical_rank_note);
  const double step = r.step_time.value();
  const double ti = step > 0 ? a * inner.step_time.value() / step : a, ts = step > 0 ? b * sync.step_time.value() / step : b;
  amortise_power(inner, a, sync, b, ti, ts, r);
  // Step by step (training.steps): the same mean of each step's pair.
  if (inner.steps.size() == sync.steps.size())
    for (std::size_t i = 0; i < r.steps.size(); ++i) {
      const StepRecord &p = inner.steps[i], &q = sync.steps[i];
      StepRecord& s = r.steps[i];
      s.step_time = p.step_time * a + q.step_time * b;
      const double w = s.step_time.value() > 0 ? a * p.step_time.value() / s.step_time.value() : a;
      s.avg_device = p.avg_device * w + q.avg_device * (1 - w);
      s.peak_temp = std::max(p.peak_temp, q.peak_temp);
    }
  r.simulator.compile = r.simulator.engine = core::Seconds(0);
  r.simulator.events = r.simulator.ops = 0;
  add_simulator(inner.simulator, r.simulator);
  add_simulator(sync.simulator, r.simulator);
  return r;
}

void describe_diloco(const plan::Experiment& e, DilocoReport& d) {
  const plan::DilocoSpec& s = *e.training.diloco;
  d.modeled = true;
  d.sync_every = s.sync_every;
  d.workers = s.workers;
  d.fragments = s.fragments;
  d.compression = plan::compression_name(s.compression);
  d.token_multiplier = s.token_multiplier;
  d.inner_step = d.sync_step = d.time_per_step = core::Seconds(kUnknown);
  d.sync_share = d.traffic_vs_dp = kUnknown;
  d.outer_bytes_per_rank = core::Bytes(kUnknown);
  d.statistical_efficiency =
      s.token_multiplier_given
          ? fmt::format("not modelled: DiLoCo is taken to need {} times the tokens of synchronous training for the same loss "
                        "(training.diloco.token_multiplier, as given); inflect times steps, it does not predict loss",
                        s.token_multiplier)
          : "not modelled: token_multiplier is 1 by default, so time_to_target_ratio assumes DiLoCo reaches the loss of "
            "synchronous training in as many tokens; that parity is an assumption, not a result: give "
            "training.diloco.token_multiplier from runs of your own setting";
}

RunReport simulate_diloco(const plan::Experiment& e, const SimulateOptions& options, const plan::CompileOptions& co,
                          const plan::MemoryEstimate& mem) {
  const plan::DilocoSpec& d = *e.training.diloco;
  const double h = d.sync_every, f = d.fragments;
  SimulateOptions quiet = options;
  quiet.observer = nullptr;
  auto run = [&](const plan::Experiment& x, plan::DilocoStep step, const SimulateOptions& o) {
    const auto t0 = std::chrono::steady_clock::now();
    plan::CompileOptions c = co;
    c.diloco_step = step;
    const plan::CompiledPlan cp = plan::compile(x, c);
    const core::Seconds compile(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    RunReport rep = simulate_graph(x, cp.graph, &cp.memory, cp.summary, o);
    rep.simulator.compile = compile;
    return rep;
  };
  const RunReport inner = run(e, plan::DilocoStep::inner, quiet);
  const RunReport sync = run(e, plan::DilocoStep::sync, options);
  RunReport r = amortise(inner, (h - f) / h, sync, f / h);

  DilocoReport& out = r.diloco;
  describe_diloco(e, out);
  out.inner_step = inner.step_time;
  out.sync_step = sync.step_time;
  out.time_per_step = r.step_time;
  if (r.tokens_per_step && *r.tokens_per_step > 0) out.time_per_token = r.step_time / *r.tokens_per_step;
  out.sync_share = r.step_time.value() > 0 ? f / h * (sync.step_time - inner.step_time).value() / r.step_time.value() : 0;

  // Bytes: what each stage's rank syncs (all fragments) and sends across workers per period,
  // against what synchronous DP's ranks would send in sync_every steps.
  const int dp = plan::derive_dp(e);
  double outer_sent = 0, dp_sent = 0, heaviest = 0;
  for (const plan::StageMemory& st : mem.stages) {
    const plan::OuterCollective o = plan::outer_collective(d, plan::optimizer_shard_params(e, dp, st) / f);
    heaviest = std::max(heaviest, f * o.payload);
    outer_sent += f * o.sent;
    dp_sent += h * plan::dp_sent_across_workers(plan::worker_share_params(e, dp, st) * e.training.optimizer.gradient, d.workers);
  }
  out.outer_bytes_per_rank = core::Bytes(heaviest);
  out.traffic_vs_dp = dp_sent > 0 ? outer_sent / dp_sent : kUnknown;

  // The synchronous plan, for time to the same loss (when it fits; DiLoCo's own does, and sharding
  // over all of dp needs no more memory than over a worker, but its plan's checks are its own).
  plan::Experiment synchronous = e;
  synchronous.training.diloco.reset();
  if (plan::validate(synchronous).empty() &&
      (options.simulate_over_memory || plan::estimate_memory(synchronous, dp).fits())) {
    const RunReport s = run(synchronous, plan::DilocoStep::inner, quiet);
    out.synchronous_step = s.step_time;
    if (s.step_time.value() > 0) out.time_to_target_ratio = d.token_multiplier * r.step_time.value() / s.step_time.value();
    add_simulator(s.simulator, r.simulator);
  }
  return r;
}

}  // namespace inflect::analysis
