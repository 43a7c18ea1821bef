#pragma once
// The study layer's fuzz targets (above scan, so apart from fuzz_targets.hpp, whose replay test
// links io only): a study file (its cases and fail_on thresholds), and a report.json read as one
// side of a comparison and compared with itself. The same contract as every parser
// (fuzz_targets.hpp): accepted, or rejected with core::Error(input|io).
#include <nlohmann/json.hpp>

#include "fuzz_targets.hpp"
#include "inflect/io/report_json.hpp"
#include "inflect/study/compare.hpp"
#include "inflect/study/compare_output.hpp"
#include "inflect/study/study_file.hpp"

namespace inflect::fuzz {

/// A study file; its relative paths resolve against the project root, so corpus files can name
/// workloads/examples/*.yaml.
inline void study_yaml(const std::uint8_t* data, std::size_t size) {
  const io::Node root = io::load_yaml_string(as_text(data, size), "<fuzz study>");
  (void)study::parse_study(root, io::project_root() + "/fuzz-study.yaml");
}

/// A report.json (what compare reads from every side): read back, compared with itself under
/// every default metric's threshold, and written in all three outputs.
inline void report_json(const std::uint8_t* data, std::size_t size) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(as_text(data, size));
  } catch (const nlohmann::json::exception& e) {
    throw core::Error(core::ErrorKind::input, e.what());
  }
  if (!j.is_object()) throw core::Error(core::ErrorKind::input, "not an object");
  study::ResultSet side;
  side.kind = study::SetKind::report;
  study::ResultPoint p;
  p.report = io::report_from_json(j);
  p.has_report = true;
  p.status = "ok";
  side.points.push_back(std::move(p));
  study::CompareOptions o;
  for (const auto& m : study::default_metrics()) o.thresholds.push_back(study::parse_threshold(m + ":+0%"));
  const study::Comparison c = study::compare(side, side, o);
  (void)study::comparison_text(c, true);
  (void)study::comparison_markdown(c);
  (void)study::comparison_junit(c);
}

}  // namespace inflect::fuzz
