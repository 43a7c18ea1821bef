#include "inflect/io/report_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "inflect/io/report_fields.hpp"

namespace inflect::io {

namespace {

using Json = nlohmann::ordered_json;

// NaN and infinities are not JSON; nlohmann would write null anyway, but say so explicitly so the
// choice is visible: a figure that could not be computed is null, never a made-up number.
Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json to_json(const FieldValue& v) {
  struct Visit {
    Json operator()(std::monostate) const { return nullptr; }
    Json operator()(bool b) const { return b; }
    Json operator()(std::int64_t i) const { return i; }
    Json operator()(double d) const { return number(d); }
    Json operator()(const std::string& s) const { return s; }
    Json operator()(const NamedNumbers& named) const {
      Json o = Json::object();
      for (const auto& [name, x] : named) o[name] = number(x);
      return o;
    }
    Json operator()(const std::vector<NamedNumbers>& records) const {
      Json a = Json::array();
      for (const auto& r : records) a.push_back((*this)(r));
      return a;
    }
  };
  return std::visit(Visit{}, v);
}

FieldValue from_json(const Json& j) {
  if (j.is_boolean()) return j.get<bool>();
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object()) {
    NamedNumbers named;
    for (const auto& [k, x] : j.items()) named.emplace_back(k, x.is_number() ? x.get<double>() : std::nan(""));
    return named;
  }
  if (j.is_array()) {
    std::vector<NamedNumbers> records;
    for (const auto& x : j)
      if (x.is_object()) records.push_back(std::get<NamedNumbers>(from_json(x)));
    return records;
  }
  return std::monostate{};
}

// `out` at a dot-separated path, creating the objects on the way (in order of first use, so a
// writer's order of names is the output's order of keys).
Json& at_path(Json& out, std::string_view path) {
  Json* node = &out;
  for (std::size_t start = 0;;) {
    const std::size_t dot = path.find('.', start);
    node = &(*node)[std::string(path.substr(start, dot == std::string_view::npos ? dot : dot - start))];
    if (dot == std::string_view::npos) return *node;
    start = dot + 1;
  }
}

const Json* find_path(const Json& in, std::string_view path) {
  const Json* node = &in;
  for (std::size_t start = 0;;) {
    const std::size_t dot = path.find('.', start);
    if (!node->is_object()) return nullptr;
    const auto it = node->find(std::string(path.substr(start, dot == std::string_view::npos ? dot : dot - start)));
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string_view::npos) return node;
    start = dot + 1;
  }
}

}  // namespace

Json report_json(const analysis::RunReport& r, bool include_volatile) {
  Json j;
  for (const auto& f : report_fields()) {
    if (!f.in_report) continue;
    if (f.known == Known::key_if_volatile && !include_volatile) continue;
    if ((f.known == Known::key_if_not_simulated || f.known == Known::key_if_not_empty) && !field_known(f, r)) continue;
    at_path(j, f.key) = to_json(field_value({&f, nullptr}, r));
  }
  return j;
}

std::string report_to_json(const analysis::RunReport& r, bool include_volatile) {
  return report_json(r, include_volatile).dump(2) + "\n";
}

analysis::RunReport report_from_json(const Json& j) {
  analysis::RunReport r;
  // The flags the null rules read come first: a null is then either a figure its rule says is
  // unknown (left at its default) or one that was not finite (set back as NaN).
  auto flag = [&](std::string_view path, bool fallback) {
    const Json* x = find_path(j, path);
    return x && x->is_boolean() ? x->get<bool>() : fallback;
  };
  r.simulated = flag("simulated", true);
  r.memory.known = flag("memory.known", true);
  auto present = [&](std::string_view path) {
    const Json* x = find_path(j, path);
    return x && !x->is_null();
  };
  // Power and temperature were modeled exactly when their one never-NaN figure is there.
  r.power.modeled = present("power.cap_w");
  r.thermal.modeled = present("thermal.cooling");
  for (const auto& f : report_fields()) {
    if (!f.in_report || !f.set) continue;
    const Json* x = find_path(j, f.key);
    if (!x || (x->is_null() && !field_known(f, r))) continue;
    f.set(r, from_json(*x));
  }
  return r;
}

void write_fields(Json& out, const analysis::RunReport& r, std::span<const std::string_view> names, bool measured) {
  for (const std::string_view name : names) {
    const FieldName n = field_named(name);
    at_path(out, name) = measured || n.field->identity ? to_json(field_value(n, r)) : Json(nullptr);
  }
}

void read_identity_fields(const Json& in, analysis::RunReport& r, std::span<const std::string_view> names) {
  for (const std::string_view name : names) {
    const FieldName n = field_named(name);
    if (!n.field->identity || !n.field->set) continue;
    if (const Json* x = find_path(in, name); x && !x->is_null()) n.field->set(r, from_json(*x));
  }
}

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
  row("tokens/s", r.tokens_per_s ? si(*r.tokens_per_s, "tokens/s") : kUnknown);
  row("TFLOP/s per GPU",
      fmt::format("{} model, {:.1f} hardware (peak {:.1f})", or_unknown(r.model_tflops_per_gpu, "{:.1f}"), r.hardware_tflops_per_gpu,
                  r.peak_tflops_per_gpu));
  row("MFU", r.mfu ? fmt::format("{:.1f} %", 100.0 * *r.mfu) : kUnknown);

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
    row("energy", fmt::format("{} per step, {} J per token", si(p.energy_per_step_j, "J"), or_unknown(p.energy_per_token_j, "{:.3g}")));
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
