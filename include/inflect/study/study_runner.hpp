#pragma once
// Runs a regression study (study_file.hpp): every case into a result folder laid out as its
// baselines are (study.json, a folder per case: report.json for an experiment; results.jsonl and
// scan.json for a scan), compares the results with the baselines, and writes the comparison as
// text, Markdown and JUnit beside them. `update_baselines` then copies the results over the
// baselines, on purpose (docs/studies.md).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "inflect/study/compare.hpp"
#include "inflect/study/study_file.hpp"

namespace inflect::study {

struct StudyOptions {
  std::string out_dir;  // the results; created if missing, its case folders replaced
  int jobs = 0;         // experiments (and each scan's points) at once; 0 = every hardware thread
  bool update_baselines = false;
  /// One line per finished case ("[3/24] gpt3-175b-a100: 25.52 s/step"), for a progress display.
  std::function<void(const std::string&)> on_progress;
};

/// A validation case of the study (an experiment with a `validation:` block): its headline
/// figure predicted against the one its source published.
struct ValidationLine {
  std::string case_name;
  std::string figure;  // io::figure_label: "step s", "MFU", ...
  double predicted = 0, published = 0, error = 0;  // error as a fraction, (predicted - published) / published
};

struct StudyOutcome {
  StudySpec spec;
  /// The two sides; held here because the comparison points into them.
  std::unique_ptr<ResultSet> base, now;
  Comparison comparison;
  bool had_baselines = false;  // false: the baselines folder did not exist (every point is new)
  bool updated = false;        // the baselines were rewritten from this run
  std::vector<ValidationLine> validation;
  std::vector<std::string> written;  // the report files written into out_dir
};

StudyOutcome run_study(const StudySpec& spec, const StudyOptions& options);

/// What `inflect study` prints: the comparison, the validation cases' errors, the verdict.
std::string study_text(const StudyOutcome& o);

}  // namespace inflect::study
