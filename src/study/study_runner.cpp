#include "inflect/study/study_runner.hpp"

#include <fmt/format.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <nlohmann/json.hpp>

#include "inflect/analysis/simulate.hpp"
#include "inflect/core/error.hpp"
#include "inflect/core/parallel.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/provenance.hpp"
#include "inflect/io/report_json.hpp"
#include "inflect/io/validation_suite.hpp"
#include "inflect/scan/out_lock.hpp"
#include "inflect/scan/runner.hpp"
#include "inflect/study/compare_output.hpp"

namespace inflect::study {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

void write_file(const fs::path& p, const std::string& text) { io::write_text_file(p.string(), text); }
void make_dirs(const fs::path& d) { io::make_directories(d.string()); }

// A case folder is rewritten whole, so no file of an earlier run (a scan's old rows) survives.
void fresh_dir(const fs::path& d) {
  std::error_code ec;
  fs::remove_all(d, ec);
  if (ec) throw core::Error(core::ErrorKind::io, fmt::format("cannot clear '{}': {}", d.string(), ec.message()));
  make_dirs(d);
}

std::string index_json(const StudySpec& spec) {
  Json j;
  j["study"] = spec.name;
  Json cases = Json::array();
  for (const auto& c : spec.cases) cases.push_back(Json{{"name", c.name}, {"kind", std::string(case_kind_name(c.kind))}});
  j["cases"] = std::move(cases);
  return j.dump(2) + "\n";
}

// The files a case's results are compared from: what the baselines keep of it.
std::vector<std::string> kept_files(CaseKind k) {
  return k == CaseKind::scan ? std::vector<std::string>{"results.jsonl", "scan.json"} : std::vector<std::string>{"report.json"};
}

// A baseline keeps the build that wrote it once, in study.json, not in every report: updating the
// baselines at a new commit then changes only the figures that moved.
std::string without_version(const std::string& text, const std::string& file) {
  auto strip = [](Json j) {
    if (j.contains("provenance") && j["provenance"].is_object()) j["provenance"].erase("inflect_version");
    if (j.contains("report") && j["report"].is_object() && j["report"].contains("provenance"))
      j["report"]["provenance"].erase("inflect_version");
    return j;
  };
  if (file == "report.json") return strip(Json::parse(text)).dump(2) + "\n";
  if (file != "results.jsonl") return text;
  std::string out, line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (!line.empty()) out += strip(Json::parse(line)).dump() + "\n";
  return out;
}

struct ExperimentRun {
  plan::Experiment e;
  std::vector<analysis::InputFile> inputs;
  std::optional<io::ValidationCase> validation;
};

// The file is read once: the experiment and, for a validation case, the figure its source
// published (the study prints its error) come from one document.
ExperimentRun load_case(const StudyCase& c) {
  ExperimentRun run;
  io::InputRecorder recorder;
  const io::Node root = io::load_yaml_file(c.file, "experiment");
  const std::string dir = fs::path(c.file).parent_path().string();
  run.e = io::parse_experiment(root, dir.empty() ? "." : dir);
  run.inputs = recorder.files();
  if (root.is_map() && root.raw()["validation"]) run.validation = io::parse_validation_case(root, c.file);
  return run;
}

}  // namespace

StudyOutcome run_study(const StudySpec& spec, const StudyOptions& options) {
  StudyOutcome o;
  o.spec = spec;
  const fs::path out(options.out_dir);
  if (fs::weakly_canonical(out) == fs::weakly_canonical(spec.baselines))
    throw core::Error(core::ErrorKind::input, fmt::format("--out {} is the study's baselines folder; write the results elsewhere",
                                                          options.out_dir));
  make_dirs(out);
  const scan::OutDirLock lock(options.out_dir);
  const int jobs = core::jobs_or_hardware(options.jobs);
  const int total = static_cast<int>(spec.cases.size());
  std::atomic<int> done{0};
  std::mutex progress_mutex;
  auto progress = [&](const std::string& name, const std::string& what) {
    if (!options.on_progress) return;
    const std::lock_guard<std::mutex> hold(progress_mutex);
    options.on_progress(fmt::format("[{}/{}] {}: {}", ++done, total, name, what));
  };

  // Experiments: every file loads before anything runs (a bad file fails the study at once), then
  // they run on `jobs` threads.
  std::vector<const StudyCase*> experiments;
  for (const auto& c : spec.cases)
    if (c.kind == CaseKind::experiment) experiments.push_back(&c);
  std::vector<ExperimentRun> runs;
  for (const auto* c : experiments) runs.push_back(load_case(*c));
  std::vector<analysis::RunReport> reports(experiments.size());
  core::parallel_pull(experiments.size(), jobs, [&](std::size_t i) {
    analysis::SimulateOptions so;
    so.fidelity = experiments[i]->fidelity;
    so.simulate_over_memory = experiments[i]->ignore_memory;
    reports[i] = analysis::simulate(runs[i].e, so);
    reports[i].provenance = io::provenance_of(runs[i].e, runs[i].inputs);
    const auto& r = reports[i];
    progress(experiments[i]->name, r.simulated ? fmt::format("{:.4g} s/step", r.step_time.value()) : "not simulated (memory)");
  });
  for (std::size_t i = 0; i < experiments.size(); ++i) {
    const fs::path dir = out / experiments[i]->name;
    fresh_dir(dir);
    write_file(dir / "report.json", io::report_to_json(reports[i], /*include_volatile=*/false));
    if (const auto& v = runs[i].validation; v && reports[i].simulated) {
      const auto errors = io::figure_errors(reports[i], *v);
      if (!errors.empty())
        o.validation.push_back({experiments[i]->name, std::string(io::figure_label(errors.front().figure)),
                                errors.front().predicted, errors.front().published, errors.front().error});
    }
  }

  // Scans: one after the other, each spreading its points over the threads.
  for (const auto& c : spec.cases) {
    if (c.kind != CaseKind::scan) continue;
    const auto scan_spec = scan::load_scan(c.file);
    if (const double n = scan::points_before_filters(scan_spec); n > scan::kDefaultMaxPoints)
      throw core::Error(core::ErrorKind::input,
                        fmt::format("{}: case '{}' expands to {:.0f} points, over the scan budget of {}; split the scan",
                                    spec.file, c.name, n, scan::kDefaultMaxPoints));
    const fs::path dir = out / c.name;
    fresh_dir(dir);
    scan::ScanOptions so;
    so.jobs = jobs;
    so.fidelity = c.fidelity;
    const auto outcome = scan::run_scan(scan_spec, dir.string(), so);
    progress(c.name, fmt::format("{} points", outcome.points));
  }
  write_file(out / kStudyIndex, index_json(spec));

  // The comparison: against the baselines when there are any (a first run has none: every point
  // is new, and the study fails until --update-baselines writes them).
  o.now = std::make_unique<ResultSet>(load_result_set(options.out_dir));
  o.had_baselines = fs::is_regular_file(fs::path(spec.baselines) / kStudyIndex);
  if (o.had_baselines) {
    o.base = std::make_unique<ResultSet>(load_result_set(spec.baselines));
  } else {
    o.base = std::make_unique<ResultSet>();
    o.base->path = spec.baselines;
    o.base->kind = SetKind::study;
  }
  CompareOptions co;
  co.thresholds = spec.thresholds;
  o.comparison = compare(*o.base, *o.now, co);
  const std::string title = fmt::format("inflect study {}", spec.name);
  write_file(out / "comparison.txt", comparison_text(o.comparison, true));
  write_file(out / "comparison.md", comparison_markdown(o.comparison, title));
  write_file(out / "junit.xml", comparison_junit(o.comparison, title));
  o.written = {(out / "comparison.txt").string(), (out / "comparison.md").string(), (out / "junit.xml").string()};

  if (options.update_baselines) {
    const fs::path base(spec.baselines);
    // Cases the study no longer has go, by name from the old index: nothing else in the folder
    // is touched (a baselines: that names a folder holding other files must not lose them).
    // The parsed index is held in a variable: a range-for over a member of a temporary reads freed memory.
    const Json old_index =
        o.had_baselines ? Json::parse(io::read_text_file((base / kStudyIndex).string(), "study index")) : Json::object();
    if (old_index.contains("cases") && old_index["cases"].is_array())
      for (const auto& old : old_index["cases"]) {
        const auto name = old.value("name", std::string());
        if (!is_case_name(name)) continue;
        std::error_code ec;
        fs::remove_all(base / name, ec);
      }
    make_dirs(base);
    for (const auto& c : spec.cases) {
      make_dirs(base / c.name);
      for (const auto& f : kept_files(c.kind))
        write_file(base / c.name / f, without_version(io::read_text_file((out / c.name / f).string(), "study result"), f));
    }
    Json index = Json::parse(index_json(spec));
    index["inflect_version"] = std::string(io::inflect_version());
    write_file(base / kStudyIndex, index.dump(2) + "\n");
    o.updated = true;
  }
  return o;
}

std::string study_text(const StudyOutcome& o) {
  std::string out = fmt::format("study {}: {} case{}, {} point{}\n", o.spec.name, o.spec.cases.size(),
                                o.spec.cases.size() == 1 ? "" : "s", o.now ? o.now->points.size() : 0,
                                o.now && o.now->points.size() == 1 ? "" : "s");
  if (!o.validation.empty()) {
    out += "\nvalidation cases (predicted against the published figure):\n";
    for (const auto& v : o.validation)
      out += fmt::format("  {:<56} {:<9} predicted {:>10.4g}  published {:>10.4g}  error {:+6.1f}%\n", v.case_name, v.figure,
                         v.predicted, v.published, 100 * v.error);
  }
  out += '\n';
  out += comparison_text(o.comparison);
  if (!o.had_baselines)
    out += fmt::format("\nno baselines yet at {}: run `inflect study {} --update-baselines` to write them\n", o.spec.baselines,
                       o.spec.file);
  if (o.updated)
    out += fmt::format("\nbaselines updated: {} now holds this run's results (commit them with the change that moved them)\n",
                       o.spec.baselines);
  else if (o.comparison.failed())
    out += "\nFAIL: a prediction moved past its threshold (or a point appeared, vanished or changed status). If the change is "
           "intended, rerun with --update-baselines and commit the baselines with it.\n";
  else
    out += "\npass: every prediction within its threshold of the baselines\n";
  return out;
}

}  // namespace inflect::study
