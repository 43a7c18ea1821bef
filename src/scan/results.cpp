#include "inflect/scan/results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "inflect/core/error.hpp"
#include "inflect/io/report_fields.hpp"
#include "inflect/io/report_json.hpp"

namespace inflect::scan {

namespace {

using Json = nlohmann::ordered_json;

// A row's figures, in the order rows have always had them (names are report field keys or their
// aliases, io/report_fields.hpp; scripts read these names).
constexpr std::string_view kRowFigures[] = {
    "devices", "nodes", "plan", "device", "tokens_per_step", "step_time_s", "tokens_per_s", "model_tflops_per_gpu", "mfu",
    "breakdown.compute_s", "breakdown.compute_interference_s", "breakdown.compute_throttle_s", "breakdown.exposed_dp_s",
    "breakdown.exposed_tp_s", "breakdown.exposed_pp_s", "breakdown.exposed_cp_s", "breakdown.exposed_ep_s",
    "breakdown.bubble_s", "breakdown.other_s", "avg_device_w", "peak_device_w", "peak_avg_device_w", "energy_per_token_j",
    "peak_temp_c", "throttled_fraction", "limiter", "peak_memory_bytes", "capacity_bytes", "fits"};
// results.csv's figure columns, likewise (between the status and the reason).
constexpr std::string_view kCsvFigures[] = {
    "devices", "nodes", "device", "plan", "step_time_s", "tokens_per_s", "tokens_per_s_per_device",
    "model_tflops_per_gpu", "mfu", "peak_memory_gib", "fits", "compute_s", "compute_interference_s", "exposed_dp_s",
    "exposed_tp_s", "exposed_pp_s", "exposed_cp_s", "exposed_ep_s", "bubble_s", "other_s", "compute_throttle_s",
    "avg_device_w", "peak_device_w", "peak_avg_device_w", "energy_per_token_j", "peak_temp_c", "throttled_fraction",
    "limiter"};

std::optional<RowStatus> status_from(const std::string& s) {
  if (s == "ok") return RowStatus::ok;
  if (s == "does_not_fit") return RowStatus::does_not_fit;
  if (s == "invalid") return RowStatus::invalid;
  if (s == "failed") return RowStatus::failed;
  return std::nullopt;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "\"";
}

std::string csv_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : ""; }

// A figure as a CSV cell: empty when null.
std::string csv_cell(const io::FieldValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return csv_number(*d);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return fmt::format("{}", *i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* t = std::get_if<std::string>(&v)) return csv_field(*t);
  return "";
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw core::Error(core::ErrorKind::io, fmt::format("cannot write '{}'", tmp));
    out << text;
    if (!out) throw core::Error(core::ErrorKind::io, fmt::format("cannot write '{}'", tmp));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

std::string status_name(RowStatus s) {
  switch (s) {
    case RowStatus::ok: return "ok";
    case RowStatus::does_not_fit: return "does_not_fit";
    case RowStatus::invalid: return "invalid";
    case RowStatus::failed: return "failed";
  }
  return "?";
}

ScanRow row_from_report(const analysis::RunReport& r) {
  ScanRow row;
  row.status = r.simulated ? RowStatus::ok : RowStatus::does_not_fit;
  row.reason = r.not_simulated;
  row.report = r;
  row.has_report = true;
  return row;
}

std::string row_to_jsonl(const ScanRow& r) {
  Json j;
  j["index"] = r.index;
  j["key"] = r.key;
  j["inputs"] = r.inputs;
  j["plan_family"] = r.family;
  Json values = Json::object();
  for (const auto& [k, v] : r.values) values[k] = v;
  j["values"] = std::move(values);
  j["status"] = status_name(r.status);
  j["reason"] = r.reason;
  // A point that did not run has no report: its figures are unknown, so null.
  io::write_fields(j, r.report, kRowFigures, r.has_report);
  j["report"] = r.has_report ? io::report_json(r.report, /*include_volatile=*/false) : Json(nullptr);
  return j.dump();
}

std::optional<ScanRow> row_from_jsonl(const std::string& line) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::exception&) {
    return std::nullopt;
  }
  if (!j.is_object() || !j.contains("index") || !j["index"].is_number_integer() || !j.contains("key") ||
      !j["key"].is_string() || !j.contains("status") || !j["status"].is_string() || !j.contains("report"))
    return std::nullopt;
  const auto status = status_from(j["status"].get<std::string>());
  if (!status) return std::nullopt;
  try {
    ScanRow r;
    r.index = j["index"].get<int>();
    r.key = j["key"].get<std::string>();
    r.inputs = j.value("inputs", "");
    r.family = j.value("plan_family", "");
    if (j.contains("values") && j["values"].is_object())
      for (const auto& [k, v] : j["values"].items()) r.values.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
    r.status = *status;
    r.reason = j.value("reason", "");
    // The report holds every figure (the row's are copies of some): read it whole.
    if (j["report"].is_object()) {
      r.report = io::report_from_json(j["report"]);
      r.has_report = true;
    } else {
      io::read_identity_fields(j, r.report, kRowFigures);
    }
    return r;
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

std::string csv_header(const std::vector<std::string>& axis_paths) {
  std::string h = "index,plan_family";
  for (const auto& p : axis_paths) {
    h += ',';
    h += csv_field(p);
  }
  h += ",status";
  for (const auto name : kCsvFigures) {
    h += ',';
    h += name;
  }
  return h + ",reason";
}

std::string row_to_csv(const ScanRow& r) {
  std::string s = fmt::format("{},{}", r.index, csv_field(r.family));
  for (const auto& [k, v] : r.values) {
    s += ',';
    s += csv_field(v);
  }
  s += ',';
  s += status_name(r.status);
  for (const auto name : kCsvFigures) {
    s += ',';
    s += csv_cell(io::field_value(io::field_named(name), r.report, r.has_report));
  }
  s += ',';
  s += csv_field(r.reason);
  return s;
}

std::vector<ScanRow> read_rows(const std::string& jsonl_path) {
  std::ifstream in(jsonl_path, std::ios::binary);
  std::map<std::string, ScanRow> by_key;
  std::string line;
  while (std::getline(in, line)) {
    if (auto r = row_from_jsonl(line)) by_key[r->key] = std::move(*r);
  }
  std::vector<ScanRow> rows;
  for (auto& [k, r] : by_key) rows.push_back(std::move(r));
  sort_by_index(rows);
  return rows;
}

namespace {
bool by_index(const ScanRow& a, const ScanRow& b) { return a.index < b.index; }
}  // namespace

void sort_by_index(std::vector<ScanRow>& rows) { std::sort(rows.begin(), rows.end(), by_index); }

void write_results(const std::string& dir, const std::vector<std::string>& axis_paths, const std::vector<ScanRow>& rows) {
  core::check_invariant(std::is_sorted(rows.begin(), rows.end(), by_index), "write_results: rows not in index order");
  std::string jsonl, csv = csv_header(axis_paths) + "\n";
  for (const auto& r : rows) {
    jsonl += row_to_jsonl(r) + "\n";
    csv += row_to_csv(r) + "\n";
  }
  write_atomically((std::filesystem::path(dir) / "results.jsonl").string(), jsonl);
  write_atomically((std::filesystem::path(dir) / "results.csv").string(), csv);
}

}  // namespace inflect::scan

namespace inflect::scan {

void write_meta(const std::string& dir, const ScanMeta& m) {
  nlohmann::ordered_json j;
  j["name"] = m.name;
  j["file"] = m.file;
  j["axes"] = m.axis_paths;
  j["plans"] = m.plans;
  j["points"] = m.points;
  j["fidelity"] = m.fidelity;
  j["inputs"] = m.inputs;
  nlohmann::ordered_json keys = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m.keys) keys[k] = v;
  j["keys"] = std::move(keys);
  nlohmann::ordered_json a;
  a["scale"] = m.scale;
  const auto& o = m.inflection;
  a["knee_sensitivity"] = o.knee_sensitivity;
  a["knee_x"] = o.knee_log_scale ? "log" : "linear";
  a["min_doubling_gain"] = o.min_doubling_gain ? nlohmann::ordered_json(*o.min_doubling_gain) : nullptr;
  a["efficiency_floor"] = o.efficiency_floor ? nlohmann::ordered_json(*o.efficiency_floor) : nullptr;
  j["analysis"] = std::move(a);
  const auto path = (std::filesystem::path(dir) / "scan.json").string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw core::Error(core::ErrorKind::io, fmt::format("cannot write '{}'", path));
  out << j.dump(2) << "\n";
}

ScanMeta read_meta(const std::string& dir) {
  const auto path = (std::filesystem::path(dir) / "scan.json").string();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw core::Error(core::ErrorKind::io,
                      fmt::format("'{}' not found: not a scan output directory (inflect scan --out writes it)", path));
  try {
    const auto j = nlohmann::json::parse(in);
    ScanMeta m;
    m.name = j.at("name").get<std::string>();
    m.file = j.value("file", "");
    m.axis_paths = j.at("axes").get<std::vector<std::string>>();
    m.plans = j.at("plans").get<std::vector<std::string>>();
    m.points = j.at("points").get<int>();
    m.inputs = j.value("inputs", "");
    m.fidelity = j.value("fidelity", "");
    if (j.contains("keys") && j["keys"].is_object())
      for (const auto& [k, v] : j["keys"].items())
        if (v.is_string()) m.keys.emplace_back(k, v.get<std::string>());
    const auto& a = j.at("analysis");
    m.scale = a.at("scale").get<std::string>();
    auto& o = m.inflection;
    o.knee_sensitivity = a.at("knee_sensitivity").get<double>();
    o.knee_log_scale = a.at("knee_x").get<std::string>() == "log";
    if (a.contains("min_doubling_gain") && a["min_doubling_gain"].is_number()) o.min_doubling_gain = a["min_doubling_gain"].get<double>();
    if (a.contains("efficiency_floor") && a["efficiency_floor"].is_number()) o.efficiency_floor = a["efficiency_floor"].get<double>();
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw core::Error(core::ErrorKind::input, fmt::format("'{}' is malformed: {}", path, e.what()));
  }
}

std::string first_differing_key(const ScanMeta& a, const ScanMeta& b) {
  if (a.keys.empty() || b.keys.empty()) return "";
  std::map<std::string, std::string> in_b(b.keys.begin(), b.keys.end());
  for (const auto& [k, v] : a.keys) {
    const auto it = in_b.find(k);
    if (it == in_b.end()) return fmt::format("{} is set ({}) in the first and not in the second", k, v);
    if (it->second != v) return fmt::format("{}: {} in the first, {} in the second", k, v, it->second);
    in_b.erase(it);
  }
  for (const auto& [k, v] : b.keys)
    if (in_b.contains(k)) return fmt::format("{} is set ({}) in the second and not in the first", k, v);
  return "";
}

}  // namespace inflect::scan
