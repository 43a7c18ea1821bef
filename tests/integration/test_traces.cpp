// Replayed traces from the command line: an experiment exported as Chakra (protobuf and JSON)
// and replayed gives the same report as its execution-graph JSON replayed, in both fidelities,
// and the bundled trace examples run.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_command.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using inflect::test::inflect_cmd;
using inflect::test::inflect_cmd_in;

namespace {

// The report without what names the workload's files or how long the host took: provenance (file
// paths and fingerprints), the model label ("trace:g.json" / "chakra:ch"), the trace section
// (only an imported trace has it) and the simulator's wall-clock figures.
std::string comparable(const std::string& report_json) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(report_json);
  j.erase("provenance");
  j.erase("model");
  j.erase("trace");
  std::function<void(nlohmann::ordered_json&)> drop_timing = [&](nlohmann::ordered_json& o) {
    if (!o.is_object()) return;
    for (const char* k : {"wall_s", "engine_s", "compile_s"}) o.erase(k);
    for (auto& [k, v] : o.items()) drop_timing(v);
  };
  drop_timing(j);
  return j.dump(1);
}

void check_round_trip(const std::string& example, const std::string& fidelity, int nodes) {
  inflect::test::TempDir dir("trace-roundtrip-" + fidelity);
  const std::string d = dir.path.string();
  const auto ex = fs::path(INFLECT_SOURCE_DIR) / example;
  REQUIRE(inflect_cmd_in(d, fmt::format("export '{}' --fidelity {} --out g.json", ex.string(), fidelity), true).rc == 0);
  const auto exported = inflect_cmd_in(d, fmt::format("export '{}' --fidelity {} --format chakra --out ch", ex.string(), fidelity), true);
  REQUIRE_MESSAGE(exported.rc == 0, exported.out);
  const std::string topology = (fs::path(INFLECT_SOURCE_DIR) / "topologies/dgx-h100.yaml").string();
  std::string reports[3];
  const char* workloads[] = {"trace: g.json", "chakra: ch", "chakra: ch/json"};
  for (int i = 0; i < 3; ++i) {
    inflect::test::write_file(dir.path / "x.yaml", fmt::format("name: replay\ncluster:\n  topology: {}\n  nodes: {}\nworkload:\n  {}\n",
                                                               topology, nodes, workloads[i]));
    const auto run = inflect_cmd_in(d, "run x.yaml --json --no-trace", false);
    REQUIRE_MESSAGE(run.rc == 0, workloads[i], inflect_cmd_in(d, "run x.yaml --json --no-trace", true).out);
    reports[i] = comparable(run.out);
  }
  CHECK(reports[1] == reports[0]);
  CHECK(reports[2] == reports[0]);
}

}  // namespace

TEST_CASE("traces: export as Chakra, replay: the report of the graph JSON, symmetric fidelity (tp 8, pp 4, dp 32)") {
  check_round_trip("workloads/examples/llama-32l-1024.yaml", "symmetric", 128);
}

TEST_CASE("traces: export as Chakra, replay: the report of the graph JSON, full fidelity (64 ranks)" * doctest::test_suite("slow")) {
  check_round_trip("workloads/examples/frameworks/llama3-8b-torchtitan-h100.yaml", "full", 8);
}

TEST_CASE("traces: the bundled Chakra examples run and say what they replayed") {
  inflect::test::TempDir dir("trace-examples");
  const auto ar = inflect_cmd_in(dir.path.string(),
                                 fmt::format("run '{}/workloads/traces/chakra-all-reduce-8-h100.yaml' --no-trace", INFLECT_SOURCE_DIR), true);
  CHECK(ar.rc == 0);
  CHECK(ar.out.find("chakra trace: 8 rank files (8 distinct) for 8 ranks, 8 nodes") != std::string::npos);
  CHECK(ar.out.find("ALL_REDUCE: simulated on the fabric") != std::string::npos);
  const auto feeder = inflect_cmd("run workloads/traces/chakra-feeder-test-h200.yaml --json --no-trace", false);
  REQUIRE(feeder.rc == 0);
  const auto j = nlohmann::json::parse(feeder.out);
  CHECK(j["trace"]["nodes"] == 3664);
  CHECK(j["trace"]["format"] == "chakra");
  CHECK(j["trace"]["compute"]["recorded: host op (is_cpu_op)"] == 2434);
}

TEST_CASE("traces: --retime is for a trace, and a model is refused by name") {
  const auto r = inflect_cmd("run workloads/examples/llama-32l-1024.yaml --retime --no-trace", true);
  CHECK(r.rc == 2);
  CHECK(r.out.find("--retime re-times a recorded trace") != std::string::npos);
}
