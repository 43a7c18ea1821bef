// inflect compare and inflect study (docs/studies.md): the regression gate CI runs.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/study/compare_output.hpp"
#include "inflect/study/study_runner.hpp"

namespace inflect::cli {

int cmd_compare(const CompareArgs& a) {
  study::CompareOptions o;
  if (!a.thresholds_file.empty()) o.thresholds = study::load_thresholds_file(a.thresholds_file);
  for (const auto& t : a.fail_on) o.thresholds.push_back(study::parse_threshold(t));
  const study::ResultSet base = study::load_result_set(a.base);
  const study::ResultSet now = study::load_result_set(a.now);
  const study::Comparison c = study::compare(base, now, o);
  std::fputs(study::comparison_text(c, a.all).c_str(), stdout);
  if (!a.markdown.empty()) io::write_text_file(a.markdown, study::comparison_markdown(c));
  if (!a.junit.empty()) io::write_text_file(a.junit, study::comparison_junit(c));
  return c.failed() ? kExitGateFailed : kExitOk;
}

int cmd_study(const StudyArgs& a) {
  const study::StudySpec spec = study::load_study(a.file);
  study::StudyOptions o;
  o.out_dir = a.out_dir;
  o.jobs = a.jobs;
  o.update_baselines = a.update_baselines;
  const bool tty = isatty(fileno(stderr)) != 0;
  // A terminal sees one line rewritten in place; a CI log one line per case.
  if (!a.quiet)
    o.on_progress = [tty](const std::string& line) { std::fprintf(stderr, tty ? "\r\033[K%s" : "%s\n", line.c_str()); };
  const study::StudyOutcome outcome = study::run_study(spec, o);
  if (!a.quiet && tty) std::fputs("\n", stderr);
  std::fputs(study::study_text(outcome).c_str(), stdout);
  std::printf("wrote %s\n", fmt::format("{}", fmt::join(outcome.written, ", ")).c_str());
  if (outcome.updated) return kExitOk;
  return outcome.comparison.failed() ? kExitGateFailed : kExitOk;
}

}  // namespace inflect::cli
