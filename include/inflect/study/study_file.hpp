#pragma once
// A regression study (`inflect study STUDY.yaml`, docs/studies.md): experiments and scans whose
// results are kept as baselines in the repository, and the thresholds a change must stay within.
//
//   study: our-cluster                  # a name, for the reports
//   baselines: baselines/               # a folder beside the study file (written by --update-baselines)
//   fidelity: symmetric                 # the experiments' default (symmetric | full)
//   fail_on: {step_time_s: +2%, memory.peak_bytes: +0}
//   cases:
//     - experiment: ../plans/llama3-70b-1024.yaml   # one run; name: defaults to the file's stem
//     - experiments: ../workloads/validation        # every *.yaml directly in the folder, one case each
//       prefix: validation-                         # before each file's stem (names must be unique)
//     - scan: ../scans/h100-vs-h200.yaml
//       name: h100-vs-h200
#include <string>
#include <string_view>
#include <vector>

#include "inflect/io/yaml_reader.hpp"
#include "inflect/plan/fidelity.hpp"
#include "inflect/study/thresholds.hpp"

namespace inflect::study {

enum class CaseKind { experiment, scan };
std::string_view case_kind_name(CaseKind k);

struct StudyCase {
  std::string name;  // unique in the study; the folder its results go to
  CaseKind kind = CaseKind::experiment;
  std::string file;  // resolved path
  plan::Fidelity fidelity = plan::Fidelity::symmetric;
  /// Simulate an experiment whose memory does not fit (as `run --ignore-memory`); its report then
  /// says so. For published runs the memory model disagrees with (the validation cases).
  bool ignore_memory = false;
};

struct StudySpec {
  std::string name;
  std::string file;
  std::string baselines;  // resolved folder
  std::vector<Threshold> thresholds;
  std::vector<StudyCase> cases;  // in the file's order, a folder's files by name
};

/// Whether `name` can be a case's folder: letters, digits, '-', '_' and '.', not "." or "..". The
/// study file's names, a result folder's index and the baselines' update all hold to it, so no
/// name read back from a study.json can leave its folder.
bool is_case_name(std::string_view name);

/// Reads and checks a study file: every key known, every case's file present, names unique (a
/// clash names both files). Relative paths resolve against the study file's folder.
StudySpec load_study(const std::string& path);
/// The same from a parsed document; `path` is the file it stands for (its folder resolves paths).
StudySpec parse_study(const io::Node& root, const std::string& path);

}  // namespace inflect::study
