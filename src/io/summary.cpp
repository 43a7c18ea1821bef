#include "inflect/io/report_json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

// The summary `inflect run` prints: for a person, not for parsing (scripts read report.json).
namespace inflect::io {

namespace {

// A figure the run does not know (a trace without tokens or model FLOPs), in words.
const std::string kUnknown = "unknown (the trace does not say)";
std::string or_unknown(const std::optional<double>& v, std::string_view spec) {
  return v ? fmt::vformat(spec, fmt::make_format_args(*v)) : "unknown";
}

std::string si(double v, const char* unit) {
  if (!std::isfinite(v)) return "n/a";
  const double a = std::fabs(v);
  if (a >= 1e15) return fmt::format("{:.2f} P{}", v / 1e15, unit);
  if (a >= 1e12) return fmt::format("{:.2f} T{}", v / 1e12, unit);
  if (a >= 1e9) return fmt::format("{:.2f} G{}", v / 1e9, unit);
  if (a >= 1e6) return fmt::format("{:.2f} M{}", v / 1e6, unit);
  if (a >= 1e3) return fmt::format("{:.2f} k{}", v / 1e3, unit);
  return fmt::format("{:.2f} {}", v, unit);
}

std::string gib(core::Bytes b) {
  const double bytes = b.value();
  if (!std::isfinite(bytes)) return "n/a";
  return fmt::format("{:.1f} GiB", bytes / 1073741824.0);
}

std::string duration(core::Seconds t) {
  const double s = t.value();
  if (!std::isfinite(s)) return "n/a";
  const double a = std::fabs(s);
  if (a >= 1 || a == 0) return fmt::format("{:.3f} s", s);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} us", s * 1e6);
}

template <class Tag>
std::string share(core::Quantity<Tag> part_q, core::Quantity<Tag> whole_q) {
  const double part = part_q.value(), whole = whole_q.value();
  if (!(whole > 0) || !std::isfinite(part)) return "";
  return fmt::format("{:5.1f} %", 100.0 * part / whole);
}

}  // namespace

std::string format_summary(const analysis::RunReport& r) {
  std::string out;
  auto row = [&](std::string_view label, const std::string& value) {
    out += fmt::format("  {:<24}{}\n", label, value);
  };

  out += fmt::format("{}: {} on {} x {} ({}, {} nodes)\n", r.name, r.model, r.devices, r.device, r.topology, r.nodes);
  out += fmt::format("plan: {}\n", r.plan);
  out += fmt::format("runs: {} precision, {} attention, framework {}\n\n", r.precision, r.attention, r.framework);

  if (!r.simulated) {
    out += fmt::format("  NOT SIMULATED: {}\n", r.not_simulated);
    out += "  (reduce memory: recompute, ZeRO, more tp/pp, smaller micro_batch; or simulate anyway with --ignore-memory)\n\n";
    const auto& m = r.memory;
    out += fmt::format("    (largest rank: pipeline stage {})\n", m.peak_stage);
    for (const auto& p : m.parts)
      out += fmt::format("    {:<22}{:>12}  {}\n", p.name, gib(p.bytes), share(p.bytes, m.peak));
    return out;
  }

  row("step time", duration(r.step_time));
  if (r.trace && r.trace->recorded_step) {
    // The replay check (docs/traces.md): the trace's own step against the simulated one.
    const double rec = r.trace->recorded_step->value();
    row("recorded step", rec > 0 ? fmt::format("{} in the trace: simulated {:+.1f} %", duration(*r.trace->recorded_step),
                                               100 * (r.step_time.value() / rec - 1))
                                 : duration(*r.trace->recorded_step));
  }
  row("tokens/s", r.tokens_per_s ? si(*r.tokens_per_s, "tokens/s") : kUnknown);
  row("TFLOP/s per GPU",
      fmt::format("{} model, {:.1f} hardware (peak {:.1f})", or_unknown(r.model_tflops_per_gpu, "{:.1f}"), r.hardware_tflops_per_gpu,
                  r.peak_tflops_per_gpu));
  row("MFU", r.mfu ? fmt::format("{:.1f} %", 100.0 * *r.mfu) : kUnknown);

  const auto& m = r.memory;
  // What the capacity is: the reported memory less what a framework cannot use.
  const std::string usable = fmt::format("{} usable ({} reported - {} reserved)", gib(m.capacity), gib(m.reported_capacity),
                                         gib(m.reserved));
  if (!m.known) {
    row("memory per device", fmt::format("unknown (the trace carries no memory figures) of {}", usable));
  } else if (m.fits) {
    row("memory per device",
        fmt::format("{} of {}: FITS ({} free)", gib(m.peak), usable, gib(m.capacity - m.peak)));
  } else {
    row("memory per device",
        fmt::format("{} of {}: DOES NOT FIT (over by {})", gib(m.peak), usable, gib(m.over_by)));
  }
  if (m.known) {
    if (!m.parts.empty()) out += fmt::format("    (largest rank: pipeline stage {})\n", m.peak_stage);
    for (const auto& p : m.parts)
      out += fmt::format("    {:<22}{:>12}  {}\n", p.name, gib(p.bytes), share(p.bytes, m.peak));
  }

  const auto& b = r.breakdown;
  const core::Seconds step = r.step_time, none(0);
  out += fmt::format("\n  {:<26}{:>12}  {:>7}\n", "step breakdown", "time", "share");
  auto part = [&](std::string_view label, core::Seconds s) {
    out += fmt::format("  {:<26}{:>12}  {:>7}\n", label, duration(s), share(s, step));
  };
  part("compute", b.compute);
  if (b.interference > none) part("  of which overlap slowdown", b.interference);
  if (b.throttle > none) part("  of which clock throttling", b.throttle);
  part("exposed communication", b.exposed_comm.total());
  const std::pair<const char*, core::Seconds> dims[] = {{"dp", b.exposed_comm.dp}, {"tp", b.exposed_comm.tp},
                                                        {"pp", b.exposed_comm.pp}, {"cp", b.exposed_comm.cp},
                                                        {"ep", b.exposed_comm.ep}};
  for (const auto& [name, s] : dims)
    if (s != none) part(fmt::format("  {}", name), s);
  if (b.exposed_across_sites) part("  of which across sites", *b.exposed_across_sites);
  part("pipeline bubble", b.bubble);
  part("other", b.other);
  if (b.stragglers) part("waiting for stragglers", *b.stragglers);
  if (!b.critical_rank_note.empty()) out += fmt::format("  ({})\n", b.critical_rank_note);
  if (const auto& v = r.variability; v.modeled)
    out += fmt::format("  (devices vary: speed spread {:.3g}, kernel jitter {:.3g}, seed {}; slowest device {} at {:.4g}x)\n",
                       v.gpu_speed_spread, v.kernel_jitter, v.seed, v.slowest_device, v.slowest_device_factor);

  if (const auto& d = r.diloco; d.modeled) {
    // DiLoCo (docs/low-communication.md): the two simulated steps behind the mean step above.
    out += fmt::format("\n  DiLoCo: {} workers, an outer sync every {} steps, {} compression, {}\n", d.workers, d.sync_every,
                       d.compression, d.fragments == 1 ? "blocking" : fmt::format("streamed in {} fragments", d.fragments));
    row("  inner step", duration(d.inner_step));
    row("  sync step", fmt::format("{} (+{})", duration(d.sync_step), duration(d.sync_step - d.inner_step)));
    row("  mean step", fmt::format("{} (the step above); the sync's share {:.2f} %", duration(d.time_per_step), 100 * d.sync_share));
    row("  outer sync", fmt::format("{} per rank; {:.4g} x the cross-worker traffic of synchronous DP",
                                    si(d.outer_bytes_per_rank.value(), "B"), d.traffic_vs_dp));
    if (d.synchronous_step && d.time_to_target_ratio)
      row("  synchronous step", fmt::format("{}; time to target {:.3f} x synchronous at {:.3g} x the tokens",
                                            duration(*d.synchronous_step), *d.time_to_target_ratio, d.token_multiplier));
    else
      row("  synchronous step", "not simulated (its plan does not fit)");
    out += fmt::format("    statistical efficiency {}\n", d.statistical_efficiency);
  }

  if (const auto& t = r.trace) {
    out += fmt::format("\n  {} trace: {} rank file{} ({} distinct) for {} ranks{}, {} nodes\n", workload::to_string(t->format),
                       t->rank_files, t->rank_files == 1 ? "" : "s", t->distinct_files, t->ranks,
                       t->replicated_ranks ? fmt::format(" ({} replicated from symmetric ranks)", t->replicated_ranks) : "",
                       t->nodes);
    auto tally = [&](const char* what, const workload::NodeTally& n) {
      for (const auto& [how, count] : n.counts) out += fmt::format("    {:<14}{:>9}  {}\n", what, count, how);
    };
    tally("compute", t->compute);
    tally("communication", t->communication);
    tally("other", t->other);
  }

  if (r.power.modeled) {
    const auto& p = r.power;
    const auto& t = r.thermal;
    out += "\n";
    row("power per device", fmt::format("{:.0f} W average, {:.0f} W peak over 100 ms, {:.0f} W instantaneous (limit {:.0f} W); "
                                        "clock {:.0f} of {:.0f} MHz",
                                        p.avg_device.value(), p.peak_avg_device.value(), p.peak_device.value(), p.cap.value(),
                                        p.avg_clock_mhz, p.max_clock_mhz));
    row("cluster power", fmt::format("{} IT ({} per node), {} with PUE", si(p.cluster_avg.value(), "W"),
                                     si(p.avg_node.value(), "W"), si(p.facility_avg.value(), "W")));
    const std::optional<double> per_token = p.energy_per_token ? std::optional(p.energy_per_token->value()) : std::nullopt;
    row("energy", fmt::format("{} per step, {} J per token", si(p.energy_per_step.value(), "J"), or_unknown(per_token, "{:.3g}")));
    row("temperature", fmt::format("peak {:.1f} C ({} cooling, inlet {:.1f} C){}{}", t.peak_temp.value(), t.cooling, t.inlet.value(),
                                   t.reached_shutdown ? " - PAST SHUTDOWN" : "",
                                   r.steps.size() == 1 ? "; one step from idle: training.steps >= 3 for the steady state" : ""));
    row("throttled", fmt::format("{:.1f} % of device-time (power {:.1f} %, thermal {:.1f} %); limiter: {}",
                                 100 * t.throttled_fraction, 100 * t.power_throttled_fraction,
                                 100 * t.thermal_throttled_fraction, t.limiter));
    if (r.steps.size() > 1) {
      std::string list;
      for (const auto& st : r.steps) list += fmt::format("{}{:.3f}", list.empty() ? "" : ", ", st.step_time.value());
      row("steps (s)", list);
    }
  }

  const auto& s = r.simulator;
  out += fmt::format("\nsimulated {} ops on {} ranks ({} fidelity; {} {} from {} {}), {} events in {:.2f} s\n", s.ops,
                     s.simulated_ranks, s.fidelity.empty() ? "unknown" : s.fidelity, s.rank_classes,
                     s.rank_classes == 1 ? "class" : "classes", s.stored_ranks, s.stored_ranks == 1 ? "stored rank" : "stored ranks",
                     s.events, s.wall.value());
  return out;
}

}  // namespace inflect::io
