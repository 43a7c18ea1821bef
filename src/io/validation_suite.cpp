#include "inflect/io/validation_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "inflect/analysis/simulate.hpp"
#include "inflect/core/error.hpp"
#include "inflect/core/parallel.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/yaml_reader.hpp"

namespace inflect::io {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr Figure kFigures[] = {Figure::step_time_s, Figure::tokens_per_s_per_gpu, Figure::tflops_per_gpu, Figure::mfu};

// A published figure: absent or null means not published; otherwise a positive number (an MFU
// at most 1). Anything else is an input error at the key.
std::optional<double> read_figure(MapReader& v, Figure f) {
  const auto n = v.optional(fmt::format("published_{}", figure_key(f)));
  if (!n) return std::nullopt;
  const double x = n->as_double();
  if (!(x > 0) || !std::isfinite(x)) n->fail(fmt::format("{} must be a positive number (or null when not published)", x));
  if (f == Figure::mfu && x > 1) n->fail(fmt::format("{} is not a fraction: an MFU of 43% is 0.43", x));
  return x;
}

double predicted(const analysis::RunReport& r, const ValidationCase& c, Figure f) {
  // A figure the run cannot give (a replayed trace without tokens or model FLOPs) is the case's
  // error, not a zero that would read as a 100% miss.
  auto known = [&](const std::optional<double>& v, const char* what) {
    if (!v) throw core::Error(core::ErrorKind::input, fmt::format("{}: the simulation does not know its {} (a trace that does not say?), so published_{} cannot be compared", c.file, what, figure_key(f)));
    return *v;
  };
  switch (f) {
    case Figure::step_time_s: return r.step_time.value();
    case Figure::tokens_per_s_per_gpu: return known(r.tokens_per_s, "tokens per step") / r.devices;
    case Figure::tflops_per_gpu:
      return c.flops_counted == "hardware" ? r.hardware_tflops_per_gpu : known(r.model_tflops_per_gpu, "model FLOPs");
    case Figure::mfu: return known(r.mfu, "model FLOPs");
  }
  return 0;
}

MapeGroup group(std::string name, const std::vector<double>& abs_errors) {
  MapeGroup g{std::move(name), static_cast<int>(abs_errors.size()), 0, 0};
  for (double e : abs_errors) {
    g.mape += e;
    g.max_abs = std::max(g.max_abs, e);
  }
  if (g.cases > 0) g.mape /= g.cases;
  return g;
}

std::vector<MapeGroup> groups(const std::vector<CaseResult>& results, std::string (*key)(const CaseResult&)) {
  std::map<std::string, std::vector<double>> by;  // sorted by name: deterministic output
  for (const auto& r : results) by[key(r)].push_back(std::fabs(r.headline().error));
  std::vector<MapeGroup> out;
  for (const auto& [name, errors] : by) out.push_back(group(name, errors));
  return out;
}

// Figures a person reads: four significant digits or so, no exponents.
std::string value(double v) {
  const double a = std::fabs(v);
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 10) return fmt::format("{:.2f}", v);
  if (a >= 1) return fmt::format("{:.3f}", v);
  return fmt::format("{:.4f}", v);
}

std::string percent(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }

std::string label(const CaseResult& r, const FigureError& f) {
  if (f.figure != Figure::tflops_per_gpu) return std::string(figure_label(f.figure));
  return fmt::format("{} {}", figure_label(f.figure), r.c.flops_counted == "hardware" ? "hw" : "model");
}

struct GroupSet {
  const char* name;
  const std::vector<MapeGroup>* groups;
};

std::vector<GroupSet> group_sets(const SuiteSummary& s) {
  return {{"framework", &s.by_framework}, {"precision", &s.by_precision}, {"device", &s.by_device}};
}

Json group_json(const MapeGroup& g) {
  Json j = Json::object();
  j["cases"] = g.cases;
  j["mape"] = g.mape;
  j["max_abs_error"] = g.max_abs;
  return j;
}

}  // namespace

std::string_view figure_key(Figure f) {
  switch (f) {
    case Figure::step_time_s: return "step_time_s";
    case Figure::tokens_per_s_per_gpu: return "tokens_per_s_per_gpu";
    case Figure::tflops_per_gpu: return "tflops_per_gpu";
    case Figure::mfu: return "mfu";
  }
  return "?";
}

std::string_view figure_label(Figure f) {
  switch (f) {
    case Figure::step_time_s: return "step s";
    case Figure::tokens_per_s_per_gpu: return "tok/s/GPU";
    case Figure::tflops_per_gpu: return "TFLOP/s";
    case Figure::mfu: return "MFU";
  }
  return "?";
}

const std::vector<std::string>& validation_frameworks() {
  static const std::vector<std::string> v = {"megatron-lm-2021", "megatron-core",      "nemo", "torchtitan",
                                             "llm-foundry",      "megatron-deepspeed", "other"};
  return v;
}

const std::vector<std::string>& validation_precisions() {
  static const std::vector<std::string> v = {"fp32", "tf32", "bf16", "fp16", "fp8"};
  return v;
}

std::optional<double> ValidationCase::published(Figure f) const {
  switch (f) {
    case Figure::step_time_s: return step_time_s;
    case Figure::tokens_per_s_per_gpu: return tokens_per_s_per_gpu;
    case Figure::tflops_per_gpu: return tflops_per_gpu;
    case Figure::mfu: return mfu;
  }
  return std::nullopt;
}

ValidationCase read_validation_case(const std::string& file) { return parse_validation_case(load_yaml_file(file), file); }

ValidationCase parse_validation_case(const Node& root, const std::string& file) {
  if (!root.is_map()) root.fail("expected an experiment map");
  if (!root.raw()["validation"]) root.fail("no validation: block (a validation case says what was published, by whom, and how it ran)");
  MapReader v(root.child("validation"));
  ValidationCase c;
  c.file = file;
  const Node id = v.required("case_id");
  c.case_id = id.as_string();
  const std::string stem = fs::path(file).stem().string();
  if (c.case_id != stem) id.fail(fmt::format("'{}' differs from the file name '{}': a case is named by its file", c.case_id, stem));
  c.framework = v.required("framework").as_choice(validation_frameworks());
  c.precision = v.required("precision").as_choice(validation_precisions());
  const Node source = v.required("source");
  c.source = source.as_string();
  if (c.source.empty()) source.fail("an empty source: cite the paper and table, or the URL and commit");
  c.step_time_s = read_figure(v, Figure::step_time_s);
  c.tokens_per_s_per_gpu = read_figure(v, Figure::tokens_per_s_per_gpu);
  c.tflops_per_gpu = read_figure(v, Figure::tflops_per_gpu);
  c.mfu = read_figure(v, Figure::mfu);
  if (const auto fc = v.optional("flops_counted")) {
    c.flops_counted = fc->as_choice({"hardware", "model"});
  } else if (c.tflops_per_gpu) {
    v.node().fail("published_tflops_per_gpu needs flops_counted: hardware (recomputed work counted, as Megatron-LM's "
                  "papers do) or model (as an MFU counts)");
  }
  if (const auto ng = v.optional("not_gated")) {
    c.not_gated = ng->as_string();
    if (c.not_gated.size() < 20)
      ng->fail("not_gated needs its reason: what the model cannot represent about this run, and why");
  }
  // Figures the H200 trace cases record beside their step time; read so that they are not typos.
  for (const char* key : {"measured_avg_power_w", "measured_clock_mhz"})
    if (const auto n = v.optional(key)) n->as_double();
  v.finish();
  bool any = false;
  for (Figure f : kFigures) any = any || c.published(f).has_value();
  if (!any)
    v.node().fail("no published figure: give published_step_time_s, published_tokens_per_s_per_gpu, "
                  "published_tflops_per_gpu or published_mfu");
  return c;
}

std::vector<std::string> validation_case_files(const std::string& dir) {
  // Looked for as input files are: as given, then under the project root, so the default
  // workloads/validation works from any directory.
  std::string found;
  for (const auto& c : search_paths(dir, ".")) {
    std::error_code ec;
    if (fs::is_directory(c, ec)) {
      found = c;
      break;
    }
  }
  if (found.empty())
    throw core::Error(core::ErrorKind::io, fmt::format("validation folder '{}' not found; looked in: {}", dir, core::join(search_paths(dir, "."))));
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(found))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw core::Error(core::ErrorKind::input, fmt::format("no validation cases (*.yaml) in '{}'", dir));
  return files;
}

std::vector<FigureError> figure_errors(const analysis::RunReport& r, const ValidationCase& c) {
  std::vector<FigureError> out;
  for (Figure f : kFigures) {
    const auto pub = c.published(f);
    if (!pub) continue;
    const double pred = predicted(r, c, f);
    out.push_back({f, pred, *pub, (pred - *pub) / *pub});
  }
  return out;
}

std::vector<CaseResult> run_validation_suite(const std::vector<std::string>& files, const SuiteOptions& options) {
  std::vector<ValidationCase> cases;
  std::vector<plan::Experiment> experiments;
  for (const auto& f : files) {
    cases.push_back(read_validation_case(f));
    experiments.push_back(load_experiment(f));
  }
  std::vector<CaseResult> results(files.size());
  // Cases whose memory the model says does not fit ran on their hardware, so they are simulated
  // anyway (and marked): the figure is the prediction, the fit a separate finding.
  analysis::SimulateOptions sim;
  sim.fidelity = options.fidelity;
  sim.simulate_over_memory = true;
  core::parallel_pull(files.size(), core::jobs_or_hardware(options.jobs), [&](std::size_t i) {
    const analysis::RunReport r = analysis::simulate(experiments[i], sim);
    CaseResult& out = results[i];
    out.c = cases[i];
    out.device = r.device;
    out.plan = r.plan;
    out.gpus = r.devices;
    out.fits = r.memory.fits;
    out.figures = figure_errors(r, out.c);
  });
  return results;
}

SuiteSummary summarize(const std::vector<CaseResult>& results) {
  SuiteSummary s;
  std::vector<double> all;
  for (const auto& r : results) all.push_back(std::fabs(r.headline().error));
  s.overall = group("all", all);
  std::vector<double> held;
  for (const auto& r : results)
    if (r.c.not_gated.empty()) held.push_back(std::fabs(r.headline().error));
  s.gated = group("gated", held);
  s.by_framework = groups(results, [](const CaseResult& r) { return r.c.framework; });
  s.by_precision = groups(results, [](const CaseResult& r) { return r.c.precision; });
  s.by_device = groups(results, [](const CaseResult& r) { return r.device; });
  return s;
}

std::vector<const CaseResult*> outside_gate(const std::vector<CaseResult>& results, double fraction) {
  std::vector<const CaseResult*> out;
  for (const auto& r : results) {
    if (!r.c.not_gated.empty()) continue;
    bool outside = false;
    for (const auto& f : r.figures) outside = outside || std::fabs(f.error) > fraction;
    if (outside) out.push_back(&r);
  }
  return out;
}

std::string format_suite(const std::vector<CaseResult>& results, const SuiteSummary& s) {
  std::string out = fmt::format("{:<42} {:<18} {:<5} {:<12} {:>6}  {:<15} {:>10} {:>10} {:>8}  {}\n", "case", "framework", "prec",
                                "device", "GPUs", "figure", "predicted", "published", "error", "memory");
  for (const auto& r : results)
    for (std::size_t i = 0; i < r.figures.size(); ++i) {
      const auto& f = r.figures[i];
      if (i == 0)
        out += fmt::format("{:<42} {:<18} {:<5} {:<12} {:>6}  ", r.c.case_id, r.c.framework, r.c.precision, r.device, r.gpus);
      else
        out += fmt::format("{:<42} {:<18} {:<5} {:<12} {:>6}  ", "", "", "", "", "");
      out += fmt::format("{:<15} {:>10} {:>10} {:>8}", label(r, f), value(f.predicted), value(f.published), percent(f.error));
      out += i == 0 ? (r.fits ? "  fits\n" : "  DOES NOT FIT\n") : "\n";
    }
  out += fmt::format("\nMAPE: mean |error| of each case's first figure (a step time if published, else tokens/s per GPU, "
                     "TFLOP/s per GPU, MFU)\n");
  out += fmt::format("{:<30} {:>6} {:>8} {:>10}\n", "group", "cases", "MAPE", "max |err|");
  out += fmt::format("{:<30} {:>6} {:>7.1f}% {:>9.1f}%\n", "all", s.overall.cases, 100 * s.overall.mape, 100 * s.overall.max_abs);
  out += fmt::format("{:<30} {:>6} {:>7.1f}% {:>9.1f}%\n", "gated", s.gated.cases, 100 * s.gated.mape, 100 * s.gated.max_abs);
  for (const auto& set : group_sets(s))
    for (const auto& g : *set.groups)
      out += fmt::format("{:<30} {:>6} {:>7.1f}% {:>9.1f}%\n", fmt::format("{} {}", set.name, g.name), g.cases, 100 * g.mape,
                         100 * g.max_abs);
  std::string exempt;
  for (const auto& r : results)
    if (!r.c.not_gated.empty()) exempt += fmt::format("  {} ({:+.1f}%): {}\n", r.c.case_id, 100 * r.headline().error, r.c.not_gated);
  if (!exempt.empty()) out += "\nnot gated (in the MAPE; the gate skips them, validation.not_gated says why):\n" + exempt;
  return out;
}

std::string suite_markdown(const std::vector<CaseResult>& results, const SuiteSummary& s) {
  std::string out = "| case | framework | precision | device | GPUs | figure | predicted | published | error | memory |\n"
                    "|---|---|---|---|---:|---|---:|---:|---:|---|\n";
  for (const auto& r : results)
    for (std::size_t i = 0; i < r.figures.size(); ++i) {
      const auto& f = r.figures[i];
      const bool first = i == 0;
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", first ? r.c.case_id : "", first ? r.c.framework : "",
                         first ? r.c.precision : "", first ? r.device : "", first ? std::to_string(r.gpus) : "", label(r, f),
                         value(f.predicted), value(f.published), percent(f.error),
                         first ? (r.fits ? "fits" : "does not fit") : "");
    }
  out += "\n| group | cases | MAPE | max \\|error\\| |\n|---|---:|---:|---:|\n";
  out += fmt::format("| all | {} | {:.1f}% | {:.1f}% |\n", s.overall.cases, 100 * s.overall.mape, 100 * s.overall.max_abs);
  out += fmt::format("| gated | {} | {:.1f}% | {:.1f}% |\n", s.gated.cases, 100 * s.gated.mape, 100 * s.gated.max_abs);
  for (const auto& set : group_sets(s))
    for (const auto& g : *set.groups)
      out += fmt::format("| {} {} | {} | {:.1f}% | {:.1f}% |\n", set.name, g.name, g.cases, 100 * g.mape, 100 * g.max_abs);
  std::string exempt;
  for (const auto& r : results)
    if (!r.c.not_gated.empty()) exempt += fmt::format("- `{}` ({:+.1f}%): {}\n", r.c.case_id, 100 * r.headline().error, r.c.not_gated);
  if (!exempt.empty()) out += "\nNot gated (in every MAPE above; `validation.not_gated` says why the gate skips them):\n\n" + exempt;
  return out;
}

nlohmann::ordered_json suite_json(const std::vector<CaseResult>& results, const SuiteSummary& s) {
  Json j = Json::object();
  Json cases = Json::array();
  for (const auto& r : results) {
    Json c = Json::object();
    c["case_id"] = r.c.case_id;
    c["file"] = r.c.file;
    c["framework"] = r.c.framework;
    c["precision"] = r.c.precision;
    c["device"] = r.device;
    c["gpus"] = r.gpus;
    c["plan"] = r.plan;
    c["memory_fits"] = r.fits;
    c["error"] = r.headline().error;
    if (!r.c.not_gated.empty()) c["not_gated"] = r.c.not_gated;
    Json figures = Json::array();
    for (const auto& f : r.figures) {
      Json x = Json::object();
      x["figure"] = figure_key(f.figure);
      if (f.figure == Figure::tflops_per_gpu) x["flops_counted"] = r.c.flops_counted;
      x["predicted"] = f.predicted;
      x["published"] = f.published;
      x["error"] = f.error;
      figures.push_back(std::move(x));
    }
    c["figures"] = std::move(figures);
    c["source"] = r.c.source;
    cases.push_back(std::move(c));
  }
  j["cases"] = std::move(cases);
  Json mape = Json::object();
  mape["all"] = group_json(s.overall);
  mape["gated"] = group_json(s.gated);
  for (const auto& set : group_sets(s)) {
    Json by = Json::object();
    for (const auto& g : *set.groups) by[g.name] = group_json(g);
    mape[set.name] = std::move(by);
  }
  j["mape"] = std::move(mape);
  return j;
}

}  // namespace inflect::io
