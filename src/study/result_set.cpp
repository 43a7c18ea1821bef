#include "inflect/study/result_set.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "inflect/core/error.hpp"
#include "inflect/io/report_json.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/scan/results.hpp"
#include "inflect/study/study_file.hpp"

namespace inflect::study {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

core::Error input_error(const std::string& path, const std::string& what) {
  return core::Error(core::ErrorKind::input, fmt::format("{}: {}", path, what));
}

Json read_json(const std::string& path, const std::string& what) {
  const std::string text = io::read_text_file(path, what);
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw input_error(path, fmt::format("not a JSON {}: {}", what, e.what()));
  }
}

ResultPoint point_of_report(const std::string& path, std::string key) {
  const Json j = read_json(path, "report.json");
  // A report always has these two; anything else is some other JSON (a scan.json, a search.json).
  if (!j.is_object() || !j.contains("simulated") || !j.contains("step_time_s"))
    throw input_error(path, "not a report.json of `inflect run` (it has no 'simulated' and 'step_time_s' keys)");
  ResultPoint p;
  p.key = std::move(key);
  p.report = io::report_from_json(j);
  p.has_report = true;
  const bool fits = !p.report.memory.known || p.report.memory.fits;
  p.status = p.report.simulated ? "ok" : (fits ? "failed" : "does_not_fit");
  if (!p.report.simulated) p.reason = p.report.not_simulated;
  return p;
}

std::vector<ResultPoint> points_of_scan(const std::string& dir, const std::string& prefix) {
  const std::string jsonl = (fs::path(dir) / "results.jsonl").string();
  if (!fs::is_regular_file(jsonl)) throw input_error(dir, "a scan's result folder holds results.jsonl; this one has none");
  std::vector<ResultPoint> out;
  for (auto& row : scan::read_rows(jsonl)) {
    ResultPoint p;
    p.key = prefix.empty() ? row.key : fmt::format("{} [{}]", prefix, row.key);
    p.status = scan::status_name(row.status);
    p.has_report = row.has_report;
    p.report = std::move(row.report);
    p.reason = std::move(row.reason);
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<ResultPoint> points_of_study(const std::string& dir) {
  const std::string index = (fs::path(dir) / kStudyIndex).string();
  const Json j = read_json(index, "study index");
  if (!j.is_object() || !j.contains("cases") || !j["cases"].is_array())
    throw input_error(index, "not a study index: it has no 'cases' list");
  std::vector<ResultPoint> out;
  for (const auto& c : j["cases"]) {
    if (!c.is_object() || !c.contains("name") || !c["name"].is_string() || !c.contains("kind") || !c["kind"].is_string())
      throw input_error(index, "every case needs a 'name' and a 'kind'");
    const auto name = c["name"].get<std::string>();
    const auto kind = c["kind"].get<std::string>();
    // The study file's rule: anything else could name a path outside the folder.
    if (!is_case_name(name)) throw input_error(index, fmt::format("case name '{}' is not a folder name", name));
    const fs::path case_dir = fs::path(dir) / name;
    if (kind == "experiment") {
      const auto report = (case_dir / "report.json").string();
      if (!fs::is_regular_file(report)) throw input_error(index, fmt::format("case '{}' has no {}", name, report));
      out.push_back(point_of_report(report, name));
    } else if (kind == "scan") {
      for (auto& p : points_of_scan(case_dir.string(), name)) out.push_back(std::move(p));
    } else {
      throw input_error(index, fmt::format("case '{}' has kind '{}'; expected experiment or scan", name, kind));
    }
  }
  return out;
}

}  // namespace

std::string_view set_kind_name(SetKind k) {
  switch (k) {
    case SetKind::report: return "report";
    case SetKind::scan: return "scan";
    case SetKind::study: return "study";
  }
  return "?";
}

ResultSet load_result_set(const std::string& path) {
  ResultSet s;
  s.path = path;
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    throw core::Error(core::ErrorKind::io, fmt::format("{}: no such file or folder (expected a report.json, a scan's result "
                                                       "folder or a study's)",
                                                       path));
  if (fs::is_directory(st)) {
    const fs::path d(path);
    if (fs::is_regular_file(d / kStudyIndex)) {
      s.kind = SetKind::study;
      s.points = points_of_study(path);
    } else if (fs::is_regular_file(d / "results.jsonl")) {
      s.kind = SetKind::scan;
      s.points = points_of_scan(path, "");
    } else if (fs::is_regular_file(d / "report.json")) {
      s.points.push_back(point_of_report((d / "report.json").string(), ""));
    } else {
      throw input_error(path, "this folder has no study.json, results.jsonl or report.json; compare reads a report.json, "
                              "a scan's result folder (`inflect scan --out`) or a study's (`inflect study --out`)");
    }
  } else {
    s.points.push_back(point_of_report(path, ""));
  }
  std::set<std::string> seen;
  for (const auto& p : s.points)
    if (!seen.insert(p.key).second) throw input_error(path, fmt::format("two points have the key '{}'", p.key));
  return s;
}

}  // namespace inflect::study
