// `inflect jobs` as a user runs it (docs/geo.md, "Several jobs on shared sites"): the policies
// ranked by total throughput, each job's slowdown explained, jobs.json, progress on stderr, and a
// bad jobs file refused with its location (exit 2).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "cli_command.hpp"
#include "temp_dir.hpp"

namespace {

using inflect::test::inflect_cmd;
using inflect::test::TempDir;

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("inflect jobs: ranks pack and spread on the campus and writes jobs.json") {
  const TempDir t("cli-jobs");
  const std::string out = (t.path / "out").string();
  const auto c = inflect_cmd("jobs workloads/jobs/two-jobs-campus.yaml --threads 2 --quiet --out '" + out + "'", false);
  REQUIRE_MESSAGE(c.rc == 0, c.out);
  // pack keeps each job in its building: nothing crosses the edge, nothing is shared.
  CHECK_MESSAGE(has(c.out, "1. pack: "), c.out);
  CHECK(has(c.out, "2. spread: "));
  CHECK(has(c.out, "a: no slowdown: no link carries another job's traffic"));
  // spread shares the edge: the slowdown names it.
  CHECK(has(c.out, "it shares WAN building-a.core->building-b.core (a: dp"));
  const auto j = nlohmann::json::parse(inflect::test::read_file(t.path / "out" / "jobs.json"));
  REQUIRE(j["policies"].size() == 2);
  const auto& pack = j["policies"][0];
  const auto& spread = j["policies"][1];
  CHECK(pack["policy"] == "pack");
  CHECK(pack["tokens_per_s"].get<double>() > spread["tokens_per_s"].get<double>());
  for (const auto& job : pack["jobs"]) {
    CHECK(job["slowdown"].get<double>() == 0);
    CHECK(job["step_time_together_s"] == job["step_time_alone_s"]);
    CHECK(job["shared_links"].empty());
  }
  for (const auto& job : spread["jobs"]) {
    CHECK(job["slowdown"].get<double>() > 0);
    CHECK(job["sites"]["building-a"] == 2);
    CHECK(job["sites"]["building-b"] == 2);
    CHECK(job["shared_links"][0]["class"] == "wan");
  }
  CHECK(j["timing"]["threads"] == 2);
  // Progress on stderr, one line per engine run when it is not a terminal: 2 policies x (1 + 2).
  CHECK(has(inflect_cmd("jobs workloads/jobs/two-jobs-campus.yaml --threads 1", true).out, "jobs: 6/6 engine runs"));
  CHECK(has(inflect_cmd("--help", false).out, "jobs"));
}

TEST_CASE("inflect jobs: a bad jobs file is refused at its line") {
  const auto c = inflect_cmd("jobs tests/errors/jobs/too_many_nodes.yaml", true);
  CHECK(c.rc == 2);
  CHECK_MESSAGE(has(c.out, "too_many_nodes.yaml:9:3: jobs: the jobs ask for 12 nodes but the cluster has 8"), c.out);
  // An experiment given to `inflect jobs`, and a jobs file given to `inflect run`.
  const auto exp = inflect_cmd("jobs workloads/examples/geo/llama3-8b-campus.yaml", true);
  CHECK(exp.rc == 2);
  CHECK_MESSAGE(has(exp.out, "this is an experiment file (it has `model:`)"), exp.out);
  const auto run = inflect_cmd("run workloads/jobs/two-jobs-campus.yaml", true);
  CHECK(run.rc == 2);
  CHECK_MESSAGE(has(run.out, "this is a jobs file (it has `jobs:`); run it with `inflect jobs FILE`"), run.out);
}
