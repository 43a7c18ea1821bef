#pragma once
// Where a report came from (report.json `provenance`, docs/report.md): the inflect build (`git
// describe` at build time), every input file the run read with a fingerprint of its bytes, and the
// experiment as simulated after defaults. Files are recorded where they are read: every read goes
// through io::read_text_file, which tells the InputRecorder alive on its thread (if any), so no
// loader has to remember to list what it opened; devices and model presets compiled into the
// binary are recorded by the loader that picks them ("built-in:calibration/devices/h100-sxm.yaml").
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inflect/analysis/run_report.hpp"
#include "inflect/plan/experiment.hpp"

namespace inflect::io {

/// The inflect build: `git describe --always --dirty` of the source tree it was built from, or
/// "unknown" when built outside git.
std::string_view inflect_version();

/// Collects the files io reads on this thread while it lives (one per path, in the order first
/// read). Recorders nest: an inner one collects on its own, and on destruction hands what it
/// collected to the outer one as well.
class InputRecorder {
 public:
  InputRecorder();
  ~InputRecorder();
  InputRecorder(const InputRecorder&) = delete;
  InputRecorder& operator=(const InputRecorder&) = delete;
  const std::vector<analysis::InputFile>& files() const { return files_; }
  void add(analysis::InputFile f);

 private:
  std::vector<analysis::InputFile> files_;
  InputRecorder* outer_;
};

/// Tells this thread's recorder (if any) that `text` was read from `path` for `role`. The path is
/// recorded relative to the working directory when it lies under it, normalised.
void note_input(std::string_view role, const std::string& path, std::string_view text);

/// The experiment as simulated: (option key, value) after every default and framework rule, in
/// the option table's order; what a comparison diffs to say which setting differs.
std::vector<std::pair<std::string, std::string>> effective_config(const plan::Experiment& e);

/// The whole provenance of a run of `e` whose reads `inputs` recorded; the built-in device the
/// cluster uses is added (its embedded file's fingerprint) when it was not read from a file.
analysis::Provenance provenance_of(const plan::Experiment& e, const std::vector<analysis::InputFile>& inputs);

}  // namespace inflect::io

namespace inflect::io {

/// The fingerprint `f`'s file has now (read again; a built-in file from this binary), or nullopt
/// when it cannot be read: whether a result recorded with `f` is still current.
std::optional<std::string> current_hash(const analysis::InputFile& f);

}  // namespace inflect::io
