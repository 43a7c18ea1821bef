// `inflect compare` and `inflect study` as CI runs them: exit codes, the project's own study on a
// temporary copy of the repository's inputs, and --resume re-running a point whose file changed.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cli_command.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using inflect::test::inflect_cmd;

namespace {

// Runs the binary in `dir` (not the repository root): relative paths resolve in the copy.
inflect::test::Command inflect_in(const fs::path& dir, const std::string& args) {
  return inflect::test::inflect_cmd_in(dir.string(), args, true);
}

void replace_in(const fs::path& file, const std::string& from, const std::string& to) {
  std::string text = inflect::test::read_file(file);
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, file.string(), " has no '", from, "'");
  text.replace(at, from.size(), to);
  inflect::test::write_file(file, text);
}

}  // namespace

TEST_CASE("compare: exit 0 when nothing crosses, 3 when a threshold is crossed, 2 on a bad threshold") {
  inflect::test::TempDir dir("compare-cli");
  const std::string a = (dir.path / "a.json").string(), b = (dir.path / "b.json").string();
  REQUIRE(inflect_cmd("run workloads/examples/gpt3-175b-a100.yaml --json > '" + a + "'", false).rc == 0);
  // The same run at a lower power cap: slower steps. (Run from the repository root, where its
  // topology path, made relative to the root, resolves.)
  std::string capped = inflect::test::read_file(std::string(INFLECT_SOURCE_DIR) + "/workloads/examples/gpt3-175b-a100.yaml");
  REQUIRE(capped.find("cluster:") != std::string::npos);
  capped.replace(capped.find("cluster:"), 8, "cluster:\n  power_cap_w: 250W");
  capped.replace(capped.find("../../topologies/"), 17, "topologies/");
  inflect::test::write_file(dir.path / "capped.yaml", capped);
  REQUIRE(inflect_cmd("run '" + (dir.path / "capped.yaml").string() + "' --json > '" + b + "'", false).rc == 0);

  CHECK(inflect_cmd("compare '" + a + "' '" + a + "' --fail-on step_time_s:+0%", true).rc == 0);
  const auto crossed = inflect_cmd("compare '" + a + "' '" + b + "' --fail-on step_time_s:+2%", true);
  CHECK(crossed.rc == 3);
  CHECK(crossed.out.find("crosses step_time_s:+2%") != std::string::npos);
  // What differs beyond the point's key is said: the experiment file and the effective power cap.
  CHECK(crossed.out.find("effective cluster.power_cap_w: 400 -> 250") != std::string::npos);
  // Faster is not a regression of +2%, and an allowance wide enough passes.
  CHECK(inflect_cmd("compare '" + b + "' '" + a + "' --fail-on step_time_s:+2%", true).rc == 0);
  const auto bad = inflect_cmd("compare '" + a + "' '" + b + "' --fail-on step_time:+2%", true);
  CHECK(bad.rc == 2);
  CHECK(bad.out.find("did you mean 'step_time_s'") != std::string::npos);
  CHECK(inflect_cmd("compare '" + a + "' '" + (dir.path / "missing").string() + "'", true).rc == 2);
}

TEST_CASE("study: the project's own study passes on the repository and fails when a shipped device figure moves") {
  inflect::test::TempDir dir("own-study");
  const fs::path root(INFLECT_SOURCE_DIR);
  for (const char* sub : {"studies", "workloads", "topologies", "calibration"})
    fs::copy(root / sub, dir.path / sub, fs::copy_options::recursive);

  const auto clean = inflect_in(dir.path, "study studies/inflect.yaml --out out/study -q");
  CHECK_MESSAGE(clean.rc == 0, clean.out);
  CHECK(clean.out.find("pass: every prediction within its threshold") != std::string::npos);
  CHECK(clean.out.find("validation-megatron-a100-selene-gpt-145b") != std::string::npos);  // its published error

  // The example device's HBM bandwidth, 6 TB/s -> 5 TB/s, without updating the baselines.
  replace_in(dir.path / "workloads/examples/custom-device/devices/example-h100-192g.yaml", "hbm_bandwidth: 6TB/s",
             "hbm_bandwidth: 5TB/s");
  const auto moved = inflect_in(dir.path, "study studies/inflect.yaml --out out/study -q");
  CHECK(moved.rc == 3);
  CHECK(moved.out.find("llama3-8b-dp8-example-192g") != std::string::npos);
  CHECK(moved.out.find("FAIL") != std::string::npos);
  CHECK(moved.out.find("device file workloads/examples/custom-device/devices/example-h100-192g.yaml differs") !=
        std::string::npos);
  CHECK(fs::exists(dir.path / "out/study/junit.xml"));
  CHECK(fs::exists(dir.path / "out/study/comparison.md"));

  // Updated on purpose, the study passes again.
  CHECK(inflect_in(dir.path, "study studies/inflect.yaml --out out/study -q --update-baselines").rc == 0);
  CHECK(inflect_in(dir.path, "study studies/inflect.yaml --out out/study -q").rc == 0);
}

TEST_CASE("study: a study file's mistakes are located input errors") {
  inflect::test::TempDir dir("study-errors");
  inflect::test::write_file(dir.path / "s.yaml", "study: s\nbaselines: b\ncases:\n  - experiment: nope.yaml\n");
  auto r = inflect_in(dir.path, "study s.yaml -q");
  CHECK(r.rc == 2);
  CHECK(r.out.find("s.yaml:4") != std::string::npos);
  inflect::test::write_file(dir.path / "e.yaml", "x: 1\n");
  inflect::test::write_file(dir.path / "s.yaml",
                            "study: s\nbaselines: b\ncases:\n  - experiment: e.yaml\n  - experiment: e.yaml\n");
  r = inflect_in(dir.path, "study s.yaml -q");
  CHECK(r.rc == 2);
  CHECK(r.out.find("two cases are named 'e'") != std::string::npos);
  inflect::test::write_file(dir.path / "s.yaml", "study: s\nbaselines: b\nfail_on: {step_time: +1%}\ncases:\n  - experiment: e.yaml\n");
  r = inflect_in(dir.path, "study s.yaml -q");
  CHECK(r.rc == 2);
  CHECK(r.out.find("did you mean 'step_time_s'") != std::string::npos);
  inflect::test::write_file(dir.path / "s.yaml", "study: s\nbaselines: b\ncases:\n  - experiment: e.yaml\n    scan: e.yaml\n");
  r = inflect_in(dir.path, "study s.yaml -q");
  CHECK(r.rc == 2);
  CHECK(r.out.find("exactly one of experiment") != std::string::npos);
}

TEST_CASE("scan --resume re-runs a point whose topology file changed since, and keeps the others") {
  inflect::test::TempDir dir("resume-files");
  const fs::path root(INFLECT_SOURCE_DIR);
  fs::copy(root / "topologies", dir.path / "topologies", fs::copy_options::recursive);
  inflect::test::write_file(dir.path / "s.yaml", R"(name: s
model: {preset: gpt-1.7b}
cluster: {topology: topologies/dgx-h100.yaml, nodes: 1}
training: {seq_len: 512, global_batch: 64, micro_batch: 1}
parallel: {tp: 1}
sweep:
  training.micro_batch: [1, 2]
)");
  const auto first = inflect_in(dir.path, "scan s.yaml --out out -q");
  REQUIRE_MESSAGE(first.rc == 0, first.out);
  auto again = inflect_in(dir.path, "scan s.yaml --out out -q --resume");
  CHECK(again.out.find("0 simulated now, 2 kept") != std::string::npos);
  // The same topology file, edited: every point read it, so every point runs again.
  replace_in(dir.path / "topologies/dgx-h100.yaml", "name:", "# edited\nname:");
  again = inflect_in(dir.path, "scan s.yaml --out out -q --resume");
  CHECK_MESSAGE(again.out.find("2 simulated now, 0 kept") != std::string::npos, again.out);
}
