#include "inflect/scan/results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "inflect/core/error.hpp"
#include "inflect/io/report_json.hpp"

namespace inflect::scan {

namespace {

using Json = nlohmann::ordered_json;

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }
double get_number(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

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
  row.devices = r.devices;
  row.nodes = r.nodes;
  row.plan = r.plan;
  row.device = r.device;
  row.tokens_per_step = r.tokens_per_step;
  if (r.simulated) {
    row.step_time_s = r.step_time_s;
    row.tokens_per_s = r.tokens_per_s;
    row.model_tflops_per_gpu = r.model_tflops_per_gpu;
    row.mfu = r.mfu;
    row.breakdown = r.breakdown;
    row.avg_device_w = r.power.avg_device_w;
    row.peak_device_w = r.power.peak_device_w;
    row.peak_avg_device_w = r.power.peak_avg_device_w;
    row.energy_per_token_j = r.power.energy_per_token_j;
    row.peak_temp_c = r.thermal.peak_temp_c;
    row.throttled_fraction = r.thermal.throttled_fraction;
    row.limiter = r.thermal.limiter;
  }
  row.peak_memory_bytes = r.memory.peak_bytes;
  row.capacity_bytes = r.memory.capacity_bytes;
  row.fits = r.memory.fits;
  row.report_json = io::report_to_json(r, /*include_volatile=*/false);
  return row;
}

std::string row_to_jsonl(const ScanRow& r) {
  Json j;
  j["index"] = r.index;
  j["key"] = r.key;
  j["plan_family"] = r.family;
  Json values = Json::object();
  for (const auto& [k, v] : r.values) values[k] = v;
  j["values"] = std::move(values);
  j["status"] = status_name(r.status);
  j["reason"] = r.reason;
  j["devices"] = r.devices;
  j["nodes"] = r.nodes;
  j["plan"] = r.plan;
  j["device"] = r.device;
  // A point that did not run (invalid, failed) has no report: its figures are unknown, so null.
  const bool reported = !r.report_json.empty();
  j["tokens_per_step"] = reported ? number(r.tokens_per_step) : Json(nullptr);
  const bool ok = r.status == RowStatus::ok;
  auto timed = [&](double v) { return ok ? number(v) : Json(nullptr); };
  j["step_time_s"] = timed(r.step_time_s);
  j["tokens_per_s"] = timed(r.tokens_per_s);
  j["model_tflops_per_gpu"] = timed(r.model_tflops_per_gpu);
  j["mfu"] = timed(r.mfu);
  const auto& b = r.breakdown;
  Json br;
  br["compute_s"] = timed(b.compute_s);
  br["compute_interference_s"] = timed(b.compute_interference_s);
  br["compute_throttle_s"] = timed(b.compute_throttle_s);
  br["exposed_dp_s"] = timed(b.exposed_comm_s.dp);
  br["exposed_tp_s"] = timed(b.exposed_comm_s.tp);
  br["exposed_pp_s"] = timed(b.exposed_comm_s.pp);
  br["exposed_cp_s"] = timed(b.exposed_comm_s.cp);
  br["exposed_ep_s"] = timed(b.exposed_comm_s.ep);
  br["bubble_s"] = timed(b.bubble_s);
  br["other_s"] = timed(b.other_s);
  j["breakdown"] = std::move(br);
  j["avg_device_w"] = timed(r.avg_device_w);
  j["peak_device_w"] = timed(r.peak_device_w);
  j["peak_avg_device_w"] = timed(r.peak_avg_device_w);
  j["energy_per_token_j"] = timed(r.energy_per_token_j);
  j["peak_temp_c"] = timed(r.peak_temp_c);
  j["throttled_fraction"] = timed(r.throttled_fraction);
  j["limiter"] = ok ? Json(r.limiter) : Json(nullptr);
  j["peak_memory_bytes"] = reported ? number(r.peak_memory_bytes) : Json(nullptr);
  j["capacity_bytes"] = reported ? number(r.capacity_bytes) : Json(nullptr);
  j["fits"] = reported ? Json(r.fits) : Json(nullptr);
  j["report"] = r.report_json.empty() ? Json(nullptr) : Json::parse(r.report_json);
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
    r.family = j.value("plan_family", "");
    if (j.contains("values") && j["values"].is_object())
      for (const auto& [k, v] : j["values"].items()) r.values.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
    r.status = *status;
    r.reason = j.value("reason", "");
    r.devices = j.value("devices", 0);
    r.nodes = j.value("nodes", 0);
    r.plan = j.value("plan", "");
    r.device = j.value("device", "");
    r.tokens_per_step = get_number(j, "tokens_per_step");
    r.step_time_s = get_number(j, "step_time_s");
    r.tokens_per_s = get_number(j, "tokens_per_s");
    r.model_tflops_per_gpu = get_number(j, "model_tflops_per_gpu");
    r.mfu = get_number(j, "mfu");
    if (j.contains("breakdown") && j["breakdown"].is_object()) {
      const auto& b = j["breakdown"];
      r.breakdown.compute_s = get_number(b, "compute_s");
      r.breakdown.compute_interference_s = get_number(b, "compute_interference_s");
      r.breakdown.compute_throttle_s = get_number(b, "compute_throttle_s");
      r.breakdown.exposed_comm_s.dp = get_number(b, "exposed_dp_s");
      r.breakdown.exposed_comm_s.tp = get_number(b, "exposed_tp_s");
      r.breakdown.exposed_comm_s.pp = get_number(b, "exposed_pp_s");
      r.breakdown.exposed_comm_s.cp = get_number(b, "exposed_cp_s");
      r.breakdown.exposed_comm_s.ep = get_number(b, "exposed_ep_s");
      r.breakdown.bubble_s = get_number(b, "bubble_s");
      r.breakdown.other_s = get_number(b, "other_s");
    }
    r.avg_device_w = get_number(j, "avg_device_w");
    r.peak_device_w = get_number(j, "peak_device_w");
    r.peak_avg_device_w = get_number(j, "peak_avg_device_w");
    r.energy_per_token_j = get_number(j, "energy_per_token_j");
    r.peak_temp_c = get_number(j, "peak_temp_c");
    r.throttled_fraction = get_number(j, "throttled_fraction");
    r.limiter = j.contains("limiter") && j["limiter"].is_string() ? j["limiter"].get<std::string>() : "";
    r.peak_memory_bytes = get_number(j, "peak_memory_bytes");
    r.capacity_bytes = get_number(j, "capacity_bytes");
    r.fits = j.contains("fits") && j["fits"].is_boolean() ? j["fits"].get<bool>() : true;
    if (!j["report"].is_null()) r.report_json = j["report"].dump(2) + "\n";
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
  h += ",status,devices,nodes,device,plan,step_time_s,tokens_per_s,tokens_per_s_per_device,model_tflops_per_gpu,mfu,"
       "peak_memory_gib,fits,compute_s,compute_interference_s,exposed_dp_s,exposed_tp_s,exposed_pp_s,exposed_cp_s,"
       "exposed_ep_s,bubble_s,other_s,compute_throttle_s,avg_device_w,peak_device_w,peak_avg_device_w,energy_per_token_j,"
       "peak_temp_c,throttled_fraction,limiter,reason";
  return h;
}

std::string row_to_csv(const ScanRow& r) {
  std::string s = fmt::format("{},{}", r.index, csv_field(r.family));
  for (const auto& [k, v] : r.values) {
    s += ',';
    s += csv_field(v);
  }
  const bool ok = r.status == RowStatus::ok;
  const bool reported = !r.report_json.empty();
  auto t = [&](double v) { return ok ? csv_number(v) : std::string(); };
  const auto& b = r.breakdown;
  s += fmt::format(",{},{},{},{},{}", status_name(r.status), r.devices, r.nodes, csv_field(r.device), csv_field(r.plan));
  s += fmt::format(",{},{},{},{},{}", t(r.step_time_s), t(r.tokens_per_s),
                   t(r.devices > 0 ? r.tokens_per_s / r.devices : 0), t(r.model_tflops_per_gpu), t(r.mfu));
  s += fmt::format(",{},{}", reported ? csv_number(r.peak_memory_bytes / 1073741824.0) : "",
                   reported ? (r.fits ? "true" : "false") : "");
  s += fmt::format(",{},{},{},{},{},{},{},{},{}", t(b.compute_s), t(b.compute_interference_s), t(b.exposed_comm_s.dp),
                   t(b.exposed_comm_s.tp), t(b.exposed_comm_s.pp), t(b.exposed_comm_s.cp), t(b.exposed_comm_s.ep),
                   t(b.bubble_s), t(b.other_s));
  s += fmt::format(",{},{},{},{},{},{},{},{}", t(b.compute_throttle_s), t(r.avg_device_w), t(r.peak_device_w),
                   t(r.peak_avg_device_w), t(r.energy_per_token_j), t(r.peak_temp_c), t(r.throttled_fraction), ok ? csv_field(r.limiter) : "");
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
    m.fidelity = j.value("fidelity", "");
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

}  // namespace inflect::scan
