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
    Json operator()(const std::vector<std::string>& texts) const {
      Json a = Json::array();
      for (const auto& t : texts) a.push_back(t);
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
  if (j.is_array() && !j.empty() && j.front().is_string()) {
    std::vector<std::string> texts;
    for (const auto& x : j)
      if (x.is_string()) texts.push_back(x.get<std::string>());
    return texts;
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

// report.json `provenance` (docs/report.md): not in the field table, which holds figures; this is
// where the figures came from.
Json provenance_json(const analysis::Provenance& p) {
  Json j;
  j["inflect_version"] = p.inflect_version;
  Json inputs = Json::array();
  for (const auto& f : p.inputs) inputs.push_back(Json{{"role", f.role}, {"path", f.path}, {"fnv1a64", f.hash}});
  j["inputs"] = std::move(inputs);
  Json effective = Json::object();
  for (const auto& [key, value] : p.effective) effective[key] = value;
  j["effective"] = std::move(effective);
  return j;
}

analysis::Provenance provenance_from_json(const Json& j) {
  analysis::Provenance p;
  if (!j.is_object()) return p;
  if (auto v = j.find("inflect_version"); v != j.end() && v->is_string()) p.inflect_version = v->get<std::string>();
  // A hand-edited or foreign report may hold anything: a member of the wrong type reads as absent.
  auto text = [](const Json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (auto in = j.find("inputs"); in != j.end() && in->is_array())
    for (const auto& f : *in)
      if (f.is_object() && !text(f, "path").empty()) p.inputs.push_back({text(f, "role"), text(f, "path"), text(f, "fnv1a64")});
  if (auto eff = j.find("effective"); eff != j.end() && eff->is_object())
    for (const auto& [key, value] : eff->items())
      if (value.is_string()) p.effective.emplace_back(key, value.get<std::string>());
  return p;
}

// report.json `trace` (docs/traces.md): what a replayed Chakra or Kineto trace held and how each
// node was treated, and the step as recorded against the simulated one. Counts, not figures of
// the step, so not in the field table.
Json trace_json(const workload::TraceImportSummary& t, double step_s) {
  Json j;
  j["format"] = workload::to_string(t.format);
  j["path"] = t.path;
  j["rank_files"] = t.rank_files;
  j["distinct_files"] = t.distinct_files;
  j["ranks"] = t.ranks;
  j["replicated_ranks"] = t.replicated_ranks;
  j["nodes"] = t.nodes;
  auto tally = [](const workload::NodeTally& n) {
    Json o = Json::object();
    for (const auto& [what, count] : n.counts) o[what] = count;
    return o;
  };
  j["compute"] = tally(t.compute);
  j["communication"] = tally(t.communication);
  j["other"] = tally(t.other);
  if (t.recorded_step) {
    j["recorded_step_s"] = number(t.recorded_step->value());
    j["simulated_vs_recorded"] = t.recorded_step->value() > 0 ? number(step_s / t.recorded_step->value() - 1) : Json(nullptr);
  } else {
    j["recorded_step_s"] = nullptr;
    j["simulated_vs_recorded"] = nullptr;
  }
  return j;
}

}  // namespace

Json report_json(const analysis::RunReport& r, bool include_volatile) {
  Json j;
  for (const auto& f : report_fields()) {
    if (!f.in_report) continue;
    if (f.known == Known::key_if_volatile && !include_volatile) continue;
    if ((f.known == Known::key_if_not_simulated || f.known == Known::key_if_not_empty ||
         f.known == Known::key_if_variability || f.known == Known::key_if_diloco) &&
        !field_known(f, r))
      continue;
    at_path(j, f.key) = to_json(field_value({&f, nullptr}, r));
  }
  if (r.trace) j["trace"] = trace_json(*r.trace, r.step_time.value());
  if (!r.provenance.empty()) j["provenance"] = provenance_json(r.provenance);
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
  r.variability.modeled = present("variability.seed");
  r.diloco.modeled = present("diloco.sync_every");
  for (const auto& f : report_fields()) {
    if (!f.in_report || !f.set) continue;
    const Json* x = find_path(j, f.key);
    if (!x || (x->is_null() && !field_known(f, r))) continue;
    f.set(r, from_json(*x));
  }
  if (const Json* p = find_path(j, "provenance")) r.provenance = provenance_from_json(*p);
  return r;
}

void write_fields(Json& out, const analysis::RunReport& r, std::span<const std::string_view> names, bool measured) {
  for (const std::string_view name : names) at_path(out, name) = to_json(field_value(field_named(name), r, measured));
}

void read_identity_fields(const Json& in, analysis::RunReport& r, std::span<const std::string_view> names) {
  for (const std::string_view name : names) {
    const FieldName n = field_named(name);
    if (!n.field->identity || !n.field->set) continue;
    if (const Json* x = find_path(in, name); x && !x->is_null()) n.field->set(r, from_json(*x));
  }
}

}  // namespace inflect::io
