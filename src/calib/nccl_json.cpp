// nccl-tests JSON (`-J file.json`, JSON_FILE_VERSION 3; NVIDIA/nccl-tests src/util.cu). The writer's
// forms are kept as it writes them: root is a padded string ("    -1"), a figure it could not compute
// is the string "nan", a measure it skipped is null, and devices[] holds one entry per process (the
// first device line of each), so the ranks are devices x nthreads x ngpus.
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "calib/nccl_formats.hpp"
#include "inflect/core/error.hpp"

namespace inflect::calib::detail {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail_at(std::string_view file, const std::string& path, const std::string& message) {
  throw core::Error(core::ErrorKind::input, message, core::SourceLocation{std::string(file), 0, 0, path});
}

std::string type_of(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "a list";
  return "an object";
}

// A whole number >= 0 (nccl-tests writes sizes and counts with %zu).
double whole(const json& j, std::string_view file, const std::string& path) {
  if (j.is_number_unsigned()) return static_cast<double>(j.get<std::uint64_t>());
  if (j.is_number_integer()) {
    const auto v = j.get<std::int64_t>();
    if (v < 0) fail_at(file, path, "is negative (" + std::to_string(v) + ")");
    return static_cast<double>(v);
  }
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (std::isfinite(v) && v >= 0 && v == std::floor(v) && v < 1e18) return v;
  }
  fail_at(file, path, "expected a whole number >= 0, got " + type_of(j) + (j.is_number() ? " that is not one" : ""));
}

// A figure of a measure: a number >= 0; "nan" (the writer's not-a-number) and null mean absent.
std::optional<double> figure(const json& j, std::string_view file, const std::string& path) {
  if (j.is_null() || (j.is_string() && j.get_ref<const std::string&>() == "nan")) return std::nullopt;
  if (!j.is_number()) fail_at(file, path, "expected a number, got " + type_of(j));
  const double v = j.get<double>();
  if (!std::isfinite(v) || v < 0) fail_at(file, path, "expected a number >= 0");
  return v;
}

NcclMeasure measure(const json& j, std::string_view file, const std::string& path) {
  NcclMeasure m;
  if (j.is_null()) return m;
  if (!j.is_object()) fail_at(file, path, "expected an object (time, alg_bw, bus_bw) or null, got " + type_of(j));
  for (const char* key : {"time", "cpu_time"})
    if (j.contains(key))
      if (auto v = figure(j[key], file, path + "." + key)) m.time = core::Seconds(*v * 1e-6);  // us
  if (j.contains("alg_bw"))
    if (auto v = figure(j["alg_bw"], file, path + ".alg_bw")) m.algbw = core::Bandwidth(*v * 1e9);  // GB/s
  if (j.contains("bus_bw"))
    if (auto v = figure(j["bus_bw"], file, path + ".bus_bw")) m.busbw = core::Bandwidth(*v * 1e9);
  return m;
}

std::string text(const json& j, std::string_view file, const std::string& path) {
  if (!j.is_string()) fail_at(file, path, "expected a string, got " + type_of(j));
  return j.get<std::string>();
}

// An integer setting of config (nthreads, ngpus) >= 1, 1 when absent.
int setting(const json& config, const char* key, std::string_view file) {
  if (!config.contains(key)) return 1;
  const json& v = config[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 1'000'000)
    fail_at(file, std::string("config.") + key, "expected a whole number >= 1");
  return static_cast<int>(v.get<std::int64_t>());
}

}  // namespace

NcclRead read_nccl_json(std::string_view input, std::string_view file) {
  NcclRead read;
  read.format = std::string(kNcclJson);
  json doc;
  try {
    doc = json::parse(input);
  } catch (const json::parse_error& e) {
    int line = 1;
    for (std::size_t i = 0; i < e.byte && i < input.size(); ++i) line += input[i] == '\n';
    std::string what = e.what();
    if (const auto at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
    for (char& c : what)
      if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
    fail(file, line, "not valid JSON: " + what);
  } catch (const json::exception& e) {  // e.g. a number no double holds
    fail(file, 0, std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) fail_at(file, "", "expected nccl-tests' JSON object at the top, got " + type_of(doc));
  if (!doc.contains("results") || !doc["results"].is_array())
    fail_at(file, "results", "expected the list of results nccl-tests -J writes");

  if (doc.contains("args")) {
    if (!doc["args"].is_array()) fail_at(file, "args", "expected a list of strings, got " + type_of(doc["args"]));
    for (const auto& a : doc["args"])
      if (a.is_string()) read.header_texts.push_back(a.get<std::string>());
  }
  if (doc.contains("devices")) {
    const json& devices = doc["devices"];
    if (!devices.is_array()) fail_at(file, "devices", "expected a list, got " + type_of(devices));
    int threads = 1, gpus = 1;
    if (doc.contains("config")) {
      if (!doc["config"].is_object()) fail_at(file, "config", "expected an object, got " + type_of(doc["config"]));
      threads = setting(doc["config"], "nthreads", file);
      gpus = setting(doc["config"], "ngpus", file);
    }
    const double ranks = static_cast<double>(devices.size()) * threads * gpus;
    if (!devices.empty() && ranks <= 1e6) read.ranks = static_cast<int>(ranks);
  }

  const json& results = doc["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string path = "results[" + std::to_string(i) + "]";
    const json& r = results[i];
    if (!r.is_object()) fail_at(file, path, "expected an object, got " + type_of(r));
    if (!r.contains("size")) fail_at(file, path + ".size", "missing: every result has its message size");
    NcclRow row;
    row.size = core::Bytes(whole(r["size"], file, path + ".size"));
    if (r.contains("count")) row.count = whole(r["count"], file, path + ".count");
    if (r.contains("type")) row.type = text(r["type"], file, path + ".type");
    if (r.contains("redop")) row.redop = text(r["redop"], file, path + ".redop");
    if (r.contains("root") && !r["root"].is_null()) {
      const json& root = r["root"];
      std::optional<long long> v;
      if (root.is_string())
        v = parse_integer(trim(root.get_ref<const std::string&>()));
      else if (root.is_number_integer())
        v = root.get<std::int64_t>();
      if (!v || *v < -1 || *v > 1'000'000) fail_at(file, path + ".root", "expected a rank or -1");
      row.root = static_cast<int>(*v);
    }
    if (r.contains("out_of_place")) row.out_of_place = measure(r["out_of_place"], file, path + ".out_of_place");
    if (r.contains("in_place")) row.in_place = measure(r["in_place"], file, path + ".in_place");
    if (row.out_of_place.empty() && row.in_place.empty())
      fail_at(file, path, "neither out_of_place nor in_place has a time, alg_bw or bus_bw");
    read.rows.push_back(std::move(row));
    read.own_kind.push_back(false);
  }
  return read;
}

}  // namespace inflect::calib::detail
