#include "inflect/io/report_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace inflect::io {

namespace {

using Json = nlohmann::ordered_json;

// NaN and infinities are not JSON; nlohmann would write null anyway, but say so explicitly so the
// choice is visible: a figure that could not be computed is null, never a made-up number.
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

}  // namespace

std::string report_to_json(const analysis::RunReport& r, bool include_volatile) {
  Json j;
  j["name"] = r.name;
  j["model"] = r.model;
  j["device"] = r.device;
  j["topology"] = r.topology;
  j["nodes"] = r.nodes;
  j["devices"] = r.devices;
  j["plan"] = r.plan;
  j["simulated"] = r.simulated;
  if (!r.simulated) j["not_simulated"] = r.not_simulated;

  // Not simulated: every timing figure is null, not 0.
  auto timed = [&](double v) { return r.simulated ? number(v) : Json(nullptr); };
  j["step_time_s"] = timed(r.step_time_s);
  j["tokens_per_step"] = number(r.tokens_per_step);
  j["tokens_per_s"] = timed(r.tokens_per_s);
  j["model_flops_per_step"] = number(r.model_flops_per_step);
  j["hardware_flops_per_step"] = timed(r.hardware_flops_per_step);
  j["model_tflops_per_gpu"] = timed(r.model_tflops_per_gpu);
  j["hardware_tflops_per_gpu"] = timed(r.hardware_tflops_per_gpu);
  j["peak_tflops_per_gpu"] = number(r.peak_tflops_per_gpu);
  j["mfu"] = timed(r.mfu);

  const auto& m = r.memory;
  Json mem;
  mem["known"] = m.known;
  // A replayed trace without memory figures: null rather than a peak of 0 that "fits".
  mem["peak_bytes"] = m.known ? number(m.peak_bytes) : Json(nullptr);
  mem["capacity_bytes"] = number(m.capacity_bytes);
  mem["fits"] = m.known ? Json(m.fits) : Json(nullptr);
  mem["over_by_bytes"] = m.known ? number(m.over_by_bytes) : Json(nullptr);
  mem["peak_stage"] = m.peak_stage;
  // An object keyed by part name (scripts read memory.parts.weights), in the report's order
  // (largest first); a name listed twice is summed rather than silently overwritten.
  std::vector<std::pair<std::string, double>> summed;
  for (const auto& p : m.parts) {
    auto it = std::find_if(summed.begin(), summed.end(), [&](const auto& s) { return s.first == p.name; });
    if (it == summed.end())
      summed.emplace_back(p.name, p.bytes);
    else
      it->second += p.bytes;
  }
  Json parts = Json::object();
  for (const auto& [name, bytes] : summed) parts[name] = number(bytes);
  mem["parts"] = std::move(parts);
  j["memory"] = std::move(mem);

  const auto& b = r.breakdown;
  Json br;
  br["compute_s"] = timed(b.compute_s);
  br["compute_interference_s"] = timed(b.compute_interference_s);
  br["compute_throttle_s"] = timed(b.compute_throttle_s);
  Json comm;
  comm["total"] = timed(b.exposed_comm_s.total());
  comm["dp"] = timed(b.exposed_comm_s.dp);
  comm["tp"] = timed(b.exposed_comm_s.tp);
  comm["pp"] = timed(b.exposed_comm_s.pp);
  comm["cp"] = timed(b.exposed_comm_s.cp);
  comm["ep"] = timed(b.exposed_comm_s.ep);
  br["exposed_comm_s"] = std::move(comm);
  br["bubble_s"] = timed(b.bubble_s);
  br["other_s"] = timed(b.other_s);
  br["critical_rank"] = b.critical_rank_note;
  j["breakdown"] = std::move(br);

  // Power and temperature: null when not modeled (a plan that was not simulated).
  const auto& pw = r.power;
  auto powered = [&](double v) { return pw.modeled ? number(v) : Json(nullptr); };
  Json power;
  power["cap_w"] = powered(pw.cap_w);
  power["avg_device_w"] = powered(pw.avg_device_w);
  power["peak_device_w"] = powered(pw.peak_device_w);
  power["peak_avg_device_w"] = powered(pw.peak_avg_device_w);
  power["avg_node_w"] = powered(pw.avg_node_w);
  power["cluster_avg_w"] = powered(pw.cluster_avg_w);
  power["facility_avg_w"] = powered(pw.facility_avg_w);
  power["energy_per_step_j"] = powered(pw.energy_per_step_j);
  power["facility_energy_per_step_j"] = powered(pw.facility_energy_per_step_j);
  power["energy_per_token_j"] = powered(pw.energy_per_token_j);
  power["avg_clock_mhz"] = powered(pw.avg_clock_mhz);
  power["max_clock_mhz"] = powered(pw.max_clock_mhz);
  j["power"] = std::move(power);
  const auto& th = r.thermal;
  auto thermal_v = [&](double v) { return th.modeled ? number(v) : Json(nullptr); };
  Json thermal;
  thermal["cooling"] = th.modeled ? Json(th.cooling) : Json(nullptr);
  thermal["inlet_c"] = thermal_v(th.inlet_c);
  thermal["peak_temp_c"] = thermal_v(th.peak_temp_c);
  thermal["throttled_fraction"] = thermal_v(th.throttled_fraction);
  thermal["power_throttled_fraction"] = thermal_v(th.power_throttled_fraction);
  thermal["thermal_throttled_fraction"] = thermal_v(th.thermal_throttled_fraction);
  thermal["limiter"] = th.modeled ? Json(th.limiter) : Json(nullptr);
  thermal["reached_shutdown"] = th.modeled ? Json(th.reached_shutdown) : Json(nullptr);
  j["thermal"] = std::move(thermal);
  Json steps = Json::array();
  for (const auto& st : r.steps) {
    Json one;
    one["step_time_s"] = number(st.step_time_s);
    one["peak_temp_c"] = number(st.peak_temp_c);
    one["avg_device_w"] = number(st.avg_device_w);
    steps.push_back(std::move(one));
  }
  j["steps"] = std::move(steps);

  const auto& s = r.simulator;
  Json sim;
  sim["fidelity"] = s.fidelity;
  if (!s.fidelity_note.empty()) sim["fidelity_note"] = s.fidelity_note;
  sim["simulated_ranks"] = s.simulated_ranks;
  sim["stored_ranks"] = s.stored_ranks;
  sim["rank_classes"] = s.rank_classes;
  sim["ops"] = s.ops;
  sim["events"] = s.events;
  // The wall-clock figures differ from run to run: one object, so a comparison masks one key.
  if (include_volatile) {
    Json timing;
    timing["wall_s"] = number(s.wall_s);
    timing["compile_s"] = number(s.compile_s);
    timing["engine_s"] = number(s.engine_s);
    sim["timing"] = std::move(timing);
  }
  j["simulator"] = std::move(sim);

  return j.dump(2) + "\n";
}

namespace {

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

std::string gib(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  return fmt::format("{:.1f} GiB", bytes / 1073741824.0);
}

std::string duration(double s) {
  if (!std::isfinite(s)) return "n/a";
  const double a = std::fabs(s);
  if (a >= 1 || a == 0) return fmt::format("{:.3f} s", s);
  if (a >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} us", s * 1e6);
}

std::string share(double part, double whole) {
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
  out += fmt::format("plan: {}\n\n", r.plan);

  if (!r.simulated) {
    out += fmt::format("  NOT SIMULATED: {}\n", r.not_simulated);
    out += "  (reduce memory: recompute, ZeRO, more tp/pp, smaller micro_batch; or simulate anyway with --ignore-memory)\n\n";
    const auto& m = r.memory;
    out += fmt::format("    (largest rank: pipeline stage {})\n", m.peak_stage);
    for (const auto& p : m.parts)
      out += fmt::format("    {:<22}{:>12}  {}\n", p.name, gib(p.bytes), share(p.bytes, m.peak_bytes));
    return out;
  }

  row("step time", duration(r.step_time_s));
  row("tokens/s", si(r.tokens_per_s, "tokens/s"));
  row("TFLOP/s per GPU",
      fmt::format("{:.1f} model, {:.1f} hardware (peak {:.1f})", r.model_tflops_per_gpu, r.hardware_tflops_per_gpu,
                  r.peak_tflops_per_gpu));
  row("MFU", fmt::format("{:.1f} %", 100.0 * r.mfu));

  const auto& m = r.memory;
  if (!m.known) {
    row("memory per device", fmt::format("unknown (the trace carries no memory figures) of {}", gib(m.capacity_bytes)));
  } else if (m.fits) {
    row("memory per device", fmt::format("{} of {}: FITS ({} free)", gib(m.peak_bytes), gib(m.capacity_bytes),
                                         gib(m.capacity_bytes - m.peak_bytes)));
  } else {
    row("memory per device", fmt::format("{} of {}: DOES NOT FIT (over by {})", gib(m.peak_bytes),
                                         gib(m.capacity_bytes), gib(m.over_by_bytes)));
  }
  if (m.known) {
    if (!m.parts.empty()) out += fmt::format("    (largest rank: pipeline stage {})\n", m.peak_stage);
    for (const auto& p : m.parts)
      out += fmt::format("    {:<22}{:>12}  {}\n", p.name, gib(p.bytes), share(p.bytes, m.peak_bytes));
  }

  const auto& b = r.breakdown;
  const double step = r.step_time_s;
  out += fmt::format("\n  {:<26}{:>12}  {:>7}\n", "step breakdown", "time", "share");
  auto part = [&](std::string_view label, double s) {
    out += fmt::format("  {:<26}{:>12}  {:>7}\n", label, duration(s), share(s, step));
  };
  part("compute", b.compute_s);
  if (b.compute_interference_s > 0) part("  of which overlap slowdown", b.compute_interference_s);
  if (b.compute_throttle_s > 0) part("  of which clock throttling", b.compute_throttle_s);
  part("exposed communication", b.exposed_comm_s.total());
  const std::pair<const char*, double> dims[] = {{"dp", b.exposed_comm_s.dp}, {"tp", b.exposed_comm_s.tp},
                                                 {"pp", b.exposed_comm_s.pp}, {"cp", b.exposed_comm_s.cp},
                                                 {"ep", b.exposed_comm_s.ep}};
  for (const auto& [name, s] : dims)
    if (s != 0) part(fmt::format("  {}", name), s);
  part("pipeline bubble", b.bubble_s);
  part("other", b.other_s);
  if (!b.critical_rank_note.empty()) out += fmt::format("  ({})\n", b.critical_rank_note);

  if (r.power.modeled) {
    const auto& p = r.power;
    const auto& t = r.thermal;
    out += "\n";
    row("power per device", fmt::format("{:.0f} W average, {:.0f} W peak over 100 ms, {:.0f} W instantaneous (limit {:.0f} W); "
                                        "clock {:.0f} of {:.0f} MHz",
                                        p.avg_device_w, p.peak_avg_device_w, p.peak_device_w, p.cap_w, p.avg_clock_mhz,
                                        p.max_clock_mhz));
    row("cluster power", fmt::format("{} IT ({} per node), {} with PUE", si(p.cluster_avg_w, "W"), si(p.avg_node_w, "W"),
                                     si(p.facility_avg_w, "W")));
    row("energy", fmt::format("{} per step, {:.3g} J per token", si(p.energy_per_step_j, "J"), p.energy_per_token_j));
    row("temperature", fmt::format("peak {:.1f} C ({} cooling, inlet {:.1f} C){}{}", t.peak_temp_c, t.cooling, t.inlet_c,
                                   t.reached_shutdown ? " - PAST SHUTDOWN" : "",
                                   r.steps.size() == 1 ? "; one step from idle: training.steps >= 3 for the steady state" : ""));
    row("throttled", fmt::format("{:.1f} % of device-time (power {:.1f} %, thermal {:.1f} %); limiter: {}",
                                 100 * t.throttled_fraction, 100 * t.power_throttled_fraction,
                                 100 * t.thermal_throttled_fraction, t.limiter));
    if (r.steps.size() > 1) {
      std::string list;
      for (const auto& st : r.steps) list += fmt::format("{}{:.3f}", list.empty() ? "" : ", ", st.step_time_s);
      row("steps (s)", list);
    }
  }

  const auto& s = r.simulator;
  out += fmt::format("\nsimulated {} ops on {} ranks ({} fidelity; {} {} from {} {}), {} events in {:.2f} s\n", s.ops,
                     s.simulated_ranks, s.fidelity.empty() ? "unknown" : s.fidelity, s.rank_classes,
                     s.rank_classes == 1 ? "class" : "classes", s.stored_ranks, s.stored_ranks == 1 ? "stored rank" : "stored ranks",
                     s.events, s.wall_s);
  return out;
}

}  // namespace inflect::io
