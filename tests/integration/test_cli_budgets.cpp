// Long work is refused up front unless asked for on purpose (issue 21): a scan file of a few
// hundred bytes whose axes multiply to tens of thousands of points stops before expanding
// anything, naming the count and the --max-points budget; the budget can be raised.
#include <doctest/doctest.h>

#include <string>

#include "cli_command.hpp"
#include "temp_dir.hpp"

using inflect::test::inflect_cmd;

namespace {

// 30 x 30 x 30 = 27,000 points from a 300-byte file (every one would be invalid: that is not
// what the refusal depends on).
std::string big_scan() {
  std::string axis = "[";
  for (int i = 1; i <= 30; ++i) axis += std::to_string(i) + (i < 30 ? ", " : "]");
  return "name: big\ncluster: {topology: " + std::string(INFLECT_SOURCE_DIR) +
         "/topologies/dgx-h100.yaml, nodes: 1}\nmodel: {preset: llama3-8b}\ntraining: {global_batch: 8}\n"
         "sweep:\n  cluster.nodes: " + axis + "\n  training.micro_batch: " + axis + "\n  parallel.tp: " + axis + "\n";
}

}  // namespace

TEST_CASE("cli: a scan over its point budget is refused before it runs, naming the count and --max-points") {
  inflect::test::TempDir dir("budget");
  inflect::test::write_file(dir.path / "big.yaml", big_scan());
  const auto out = (dir.path / "out").string();
  const auto c = inflect_cmd("scan " + (dir.path / "big.yaml").string() + " --out " + out, true);
  CHECK(c.rc == 2);
  CHECK(c.out.find("27000 points") != std::string::npos);
  CHECK(c.out.find("--max-points") != std::string::npos);
  // A budget below the count refuses too; a budget beyond the hard cap is a usage error.
  CHECK(inflect_cmd("scan " + (dir.path / "big.yaml").string() + " --max-points 100 --out " + out, true).rc == 2);
  CHECK(inflect_cmd("scan " + (dir.path / "big.yaml").string() + " --max-points 0 --out " + out, true).rc != 0);
}

TEST_CASE("cli: --fidelity full says its size up front and is refused past --max-ops") {
  // gpt3-175b on 1,024 A100s: the symmetric graph's ops per simulated rank times 1,024 ranks is
  // about 1.5e7 ops (the full run simulates 14,771,456): over a budget of 1e6, refused at once.
  const auto refused = inflect_cmd("run workloads/examples/gpt3-175b-1024-a100.yaml --fidelity full --no-trace --max-ops 1e6", true);
  CHECK(refused.rc == 2);
  CHECK(refused.out.find("--max-ops") != std::string::npos);
  CHECK(refused.out.find("1.48e+07 ops over 1024 ranks") != std::string::npos);
  // The symmetric fidelity has no such budget.
  CHECK(inflect_cmd("run workloads/examples/gpt3-175b-1024-a100.yaml --no-trace --max-ops 1e6 --json", false).rc == 0);
}
