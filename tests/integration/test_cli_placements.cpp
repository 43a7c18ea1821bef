// `inflect placements` as a user runs it (docs/placements.md): the ranked table, the progress on
// stderr, placements.json, and the refusals (exit 2) when there is nothing to place.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli_command.hpp"
#include "temp_dir.hpp"

namespace {

using inflect::test::inflect_cmd;
using inflect::test::TempDir;

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("inflect placements: ranks the two-regions placements and writes placements.json") {
  const TempDir t("placements");
  const std::string out = (t.path / "out").string();
  const auto c = inflect_cmd("placements workloads/examples/geo/llama3-70b-two-regions.yaml --threads 2 --out '" + out + "'", false);
  REQUIRE_MESSAGE(c.rc == 0, c.out);
  // Pipeline stages across the WAN win (only activations cross); flat data parallelism over the sites last.
  CHECK_MESSAGE(has(c.out, " 1  [pp 4, dp 8, tp 8]"), c.out);
  CHECK(has(c.out, " 3  [dp 8, pp 4, tp 8] flat"));
  CHECK(has(c.out, "crosses the WAN: only pp activations"));
  CHECK(has(c.out, "why it loses:"));
  CHECK(has(c.out, "exposed dp"));
  const auto j = nlohmann::json::parse(inflect::test::read_file(t.path / "out" / "placements.json"));
  REQUIRE(j["placements"].size() == 3);
  CHECK(j["placements"][0]["crossing"] == nlohmann::json::array({"pp"}));
  CHECK(j["placements"][0]["why_loses"].is_null());
  CHECK(j["placements"][0]["step_time_s"].get<double>() <= j["placements"][1]["step_time_s"].get<double>());
  CHECK(j["placements"][1]["step_time_s"].get<double>() <= j["placements"][2]["step_time_s"].get<double>());
  CHECK(j["placements"][2]["cross_site_collectives"] == "flat");
  CHECK(j["placements"][2]["report"]["plan"] == j["plan"]);
  // Progress goes to stderr, one line per placement when it is not a terminal.
  const auto merged = inflect_cmd("placements workloads/examples/geo/llama3-70b-two-regions.yaml --threads 1", true);
  CHECK(has(merged.out, "placements: 3/3 "));
  CHECK(!has(inflect_cmd("placements workloads/examples/geo/llama3-70b-two-regions.yaml -q", true).out, "placements: 1/3"));
}

TEST_CASE("inflect placements: a cluster without sites is bad input") {
  const auto plain = inflect_cmd("placements workloads/examples/gpt3-175b-a100.yaml", true);
  CHECK(plain.rc == 2);
  CHECK_MESSAGE(has(plain.out, "cluster.sites: nothing to place: the cluster has no sites"), plain.out);
  // A plan with no dimension above 1 besides tp cannot reach the command (tp stays inside a node
  // and sites hold whole nodes, so dp, pp or cp is larger than 1): tests/search checks that refusal.
  CHECK(has(inflect_cmd("--help", false).out, "placements"));
}
