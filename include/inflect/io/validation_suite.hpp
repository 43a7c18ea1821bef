#pragma once
// The validation suite (`inflect validate-suite`, docs/validation.md): every published training
// run in a folder (workloads/validation/*.yaml) simulated, each prediction set against the
// figure its source published, and the mean absolute percentage error (MAPE) per framework,
// precision and device. The integration test and the command share this code, so the gate CI
// applies and the table a person reads are the same figures.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "inflect/analysis/run_report.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/plan/fidelity.hpp"

namespace inflect::io {

/// A published figure a case can be checked against, in the order a case's headline figure is
/// chosen: a step time is what a run measures; throughputs and utilisation are derived from it
/// with the source's own token or FLOP count, so they come after it.
enum class Figure { step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu };
std::string_view figure_key(Figure f);    // "step_time_s", ... (the JSON key, after "published_")
std::string_view figure_label(Figure f);  // "step s", "tok/s/GPU", "TFLOP/s", "MFU"

/// The frameworks and precisions a case may name (validation.framework, validation.precision).
const std::vector<std::string>& validation_frameworks();
const std::vector<std::string>& validation_precisions();

/// One case's `validation:` block, read strictly (unknown keys, a bad choice or a missing
/// figure are located input errors). case_id must equal the file name without .yaml.
struct ValidationCase {
  std::string file;
  std::string case_id;
  std::string framework;      // one of validation_frameworks()
  std::string precision;      // as the source states it, one of validation_precisions()
  std::string source;         // the citation
  std::string flops_counted;  // "hardware" (recomputation included) or "model"; with a TFLOP/s figure
  std::optional<double> step_time_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu;
  /// validation.not_gated: why the case cannot be held to the gate, when the run is one the model
  /// cannot represent faithfully from what its source states (a figure the source leaves out that
  /// decides the result, a mechanism inflect does not model). Its error is still printed and in
  /// every MAPE; only the gate skips it. Never a reason of the form "it is off by X".
  std::string not_gated;
  std::optional<double> published(Figure f) const;
};

ValidationCase read_validation_case(const std::string& file);
/// The same from a parsed document; `file` names it (its stem is the case_id it must carry).
ValidationCase parse_validation_case(const Node& root, const std::string& file);

/// The *.yaml files directly in `dir` (not its subfolders: traces/ and topologies/ hold other
/// things), sorted by name; `dir` is looked for as given, then under project_root(). A missing
/// folder is an io error; one without cases an input error.
std::vector<std::string> validation_case_files(const std::string& dir);

struct FigureError {
  Figure figure;
  double predicted = 0;
  double published = 0;
  double error = 0;  // (predicted - published) / published; a step time over is too slow, a throughput over too fast
};

/// Every figure `c` publishes set against the run's prediction, headline first (a step time,
/// then throughputs and utilisation). A figure the run cannot give (a replayed trace without
/// tokens) is a core::Error(input) naming the case.
std::vector<FigureError> figure_errors(const analysis::RunReport& r, const ValidationCase& c);

struct CaseResult {
  ValidationCase c;
  std::string device;  // the catalog device the case ran on
  std::string plan;    // plan::plan_label
  int gpus = 0;
  bool fits = true;    // the memory model's verdict; the suite simulates either way
  std::vector<FigureError> figures;  // every published figure, headline first
  const FigureError& headline() const { return figures.front(); }
};

struct SuiteOptions {
  int jobs = 0;  // cases simulated at once; 0 = all hardware threads
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
};

/// Loads every file (in order, so a bad file fails before anything runs), simulates them on
/// `jobs` threads, and returns the results in the files' order whatever `jobs` was.
std::vector<CaseResult> run_validation_suite(const std::vector<std::string>& files, const SuiteOptions& options = {});

/// MAPE of the headline errors over a group of cases.
struct MapeGroup {
  std::string name;  // "all", or the framework, precision or device
  int cases = 0;
  double mape = 0;       // mean |error|, a fraction
  double max_abs = 0;    // largest |error|
};

struct SuiteSummary {
  MapeGroup overall;
  MapeGroup gated;  // the cases the gate holds (no validation.not_gated)
  std::vector<MapeGroup> by_framework, by_precision, by_device;  // each sorted by name
};

SuiteSummary summarize(const std::vector<CaseResult>& results);

/// The cases with any figure's |error| above `fraction` (0.25 = +-25%), in order.
std::vector<const CaseResult*> outside_gate(const std::vector<CaseResult>& results, double fraction);

/// What `inflect validate-suite` prints: a row per case and figure, then the MAPE groups.
std::string format_suite(const std::vector<CaseResult>& results, const SuiteSummary& s);
/// The same as Markdown tables (docs/validation.md's generated section).
std::string suite_markdown(const std::vector<CaseResult>& results, const SuiteSummary& s);
/// `inflect validate-suite --json`: cases, figures and MAPE groups; errors as fractions.
nlohmann::ordered_json suite_json(const std::vector<CaseResult>& results, const SuiteSummary& s);

}  // namespace inflect::io
