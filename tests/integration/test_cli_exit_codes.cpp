// What a script around the inflect binary relies on (README.md "Exit codes"): 0 simulated, 1 an
// internal error, 2 bad input, 3 valid but not simulated; a bare number where a quantity belongs
// is bad input that names the units; a value no hardware has is a warning on stderr and in
// report.json's `warnings`. Each case writes its inputs into its own temporary folder.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli_command.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using inflect::test::Command;
using inflect::test::inflect_cmd;
using inflect::test::TempDir;

// Built with += : GCC 12's -Wrestrict misfires on "'" + s + "'".
std::string quoted(const fs::path& p) {
  std::string q(1, '\'');
  q += p.string();
  q += '\'';
  return q;
}

// topologies/dgx-h100.yaml with `from` replaced by `to` (both must be there), written beside the
// experiment that reads it.
void write_topology(const TempDir& t, const std::string& from, const std::string& to) {
  std::string topo = inflect::test::read_file(fs::path(INFLECT_SOURCE_DIR) / "topologies/dgx-h100.yaml");
  const auto at = topo.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  topo.replace(at, from.size(), to);
  inflect::test::write_file(t.path / "topo.yaml", topo);
}

// 2 DGX H100 nodes, TP8 DP2. gpt-1.7b fits (5 GiB of 77.7 GiB usable); llama3-405b needs 902 GiB.
fs::path write_experiment(const TempDir& t, const std::string& preset, const std::string& cluster_extra = "") {
  const fs::path p = t.path / "exp.yaml";
  std::string text = "name: exits\ncluster:\n  topology: topo.yaml\n  nodes: 2\n";
  text += cluster_extra;
  text += "model:\n  preset: ";
  text += preset;
  text += "\ntraining:\n  seq_len: 2048\n  global_batch: 16\n  micro_batch: 1\n  precision: bf16\n";
  text += "parallel:\n  tp: 8\n  pp: 1\n  dp: 2\n";
  inflect::test::write_file(p, text);
  return p;
}

}  // namespace

TEST_CASE("cli exit codes: 0 simulated, 3 valid but not simulated (run and validate), 2 bad input") {
  TempDir t("exit-codes");
  write_topology(t, "nic_bandwidth: 400Gbps", "nic_bandwidth: 400Gbps");
  const std::string out = " --no-trace --out " + quoted(t.path / "out");

  const fs::path fits = write_experiment(t, "gpt-1.7b");
  CHECK(inflect_cmd("validate " + quoted(fits), true).rc == 0);
  CHECK(inflect_cmd("run " + quoted(fits) + " --oneline" + out, true).rc == 0);

  // Does not fit: run reports it and exits 3; --ignore-memory simulates it and exits 0.
  const fs::path big = write_experiment(t, "llama3-405b");
  const Command run = inflect_cmd("run " + quoted(big) + " --json" + out, false);
  CHECK(run.rc == 3);
  CHECK(nlohmann::json::parse(run.out)["simulated"] == false);
  CHECK(inflect_cmd("run " + quoted(big) + " --oneline --ignore-memory" + out, true).rc == 0);
  const Command validate = inflect_cmd("validate " + quoted(big), true);
  CHECK(validate.rc == 3);
  CHECK(validate.out.find("valid but NOT SIMULATED: its memory does not fit") != std::string::npos);
  CHECK(validate.out.find(": ok:") == std::string::npos);

  // A search where no plan fits (405B on one node of 8 H100s): valid, nothing simulated.
  const Command search = inflect_cmd("search workloads/search/llama3-405b-16k-h100.yaml --nodes 1 --jobs 2", true);
  CHECK(search.rc == 3);
  CHECK(search.out.find("no plan fits in memory") != std::string::npos);

  // Bad input: an unknown key, a missing file, a bad option.
  inflect::test::write_file(t.path / "bad.yaml", "name: x\nclutser: {}\n");
  CHECK(inflect_cmd("validate " + quoted(t.path / "bad.yaml"), true).rc == 2);
  CHECK(inflect_cmd("run " + quoted(t.path / "missing.yaml"), true).rc == 2);
  CHECK(inflect_cmd("run " + quoted(fits) + " --fidelity fastest", true).rc == 2);

  // The help's footer points at the table.
  const Command help = inflect_cmd("--help", true);
  CHECK(help.rc == 0);
  CHECK(help.out.find("Exit codes") != std::string::npos);
  CHECK(help.out.find("3 valid but not simulated") != std::string::npos);
}

TEST_CASE("cli units: a bare number where a bandwidth or time belongs is bad input naming the units") {
  TempDir t("bare-units");
  const fs::path exp = write_experiment(t, "gpt-1.7b");

  write_topology(t, "nic_bandwidth: 400Gbps", "nic_bandwidth: 400");
  Command c = inflect_cmd("validate " + quoted(exp), true);
  CHECK(c.rc == 2);
  CHECK(c.out.find("scale_out.nic_bandwidth") != std::string::npos);
  CHECK(c.out.find("expected a bandwidth with its unit, e.g. 400Gb/s or 50GB/s") != std::string::npos);

  write_topology(t, "hop_latency: 0.6us", "hop_latency: 0.6");
  c = inflect_cmd("validate " + quoted(exp), true);
  CHECK(c.rc == 2);
  CHECK(c.out.find("intra.hop_latency") != std::string::npos);
  CHECK(c.out.find("expected a time with its unit, e.g. 600ns or 0.6us") != std::string::npos);

  // 0 is 0 in every unit: no guess, accepted.
  write_topology(t, "hop_latency: 0.6us", "hop_latency: 0");
  CHECK(inflect_cmd("validate " + quoted(exp), true).rc == 0);
}

TEST_CASE("cli units: cluster.power_cap_w takes 500W, and a bare 500 as before (the key names its unit)") {
  TempDir t("power-cap");
  write_topology(t, "nic_bandwidth: 400Gbps", "nic_bandwidth: 400Gbps");
  for (const std::string cap : {"500W", "500", "0.5kW"}) {
    CAPTURE(cap);
    const fs::path exp = write_experiment(t, "gpt-1.7b", "  power_cap_w: " + cap + "\n");
    const Command c = inflect_cmd("run " + quoted(exp) + " --json --no-trace", false);
    REQUIRE(c.rc == 0);
    CHECK(nlohmann::json::parse(c.out)["power"]["cap_w"] == 500.0);
  }
  const fs::path bad = write_experiment(t, "gpt-1.7b", "  power_cap_w: 500V\n");
  const Command c = inflect_cmd("validate " + quoted(bad), true);
  CHECK(c.rc == 2);
  CHECK(c.out.find("'500V' is not a power (e.g. 700W or 0.7kW") != std::string::npos);
}

TEST_CASE("cli plausibility: a NIC of 6.4 Tb/s and a 2 ms hop warn on stderr and in report.json") {
  TempDir t("plausible");
  const fs::path exp = write_experiment(t, "gpt-1.7b");
  write_topology(t, "nic_bandwidth: 400Gbps", "nic_bandwidth: 800GB/s");  // 6.4 Tb/s, above 3.2 Tb/s
  const std::string run = "run " + quoted(exp) + " --json --no-trace";
  Command c = inflect_cmd(run, false);  // stdout alone: the report
  REQUIRE(c.rc == 0);                   // a warning, not an error: the run goes ahead
  auto warnings = nlohmann::json::parse(c.out)["warnings"];
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].get<std::string>().find("scale_out.nic_bandwidth 6400 Gb/s") != std::string::npos);
  c = inflect_cmd(run + " 2>&1 >/dev/null | cat", false);  // stderr alone
  CHECK(c.out.find("inflect: warning: ") != std::string::npos);
  CHECK(c.out.find("nic_bandwidth") != std::string::npos);
  // validate says it too.
  CHECK(inflect_cmd("validate " + quoted(exp), true).out.find("inflect: warning:") != std::string::npos);

  write_topology(t, "hop_latency: 0.6us", "hop_latency: 2ms");
  c = inflect_cmd(run, false);
  REQUIRE(c.rc == 0);
  warnings = nlohmann::json::parse(c.out)["warnings"];
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].get<std::string>().find("intra.hop_latency 2000 us is over 1 ms") != std::string::npos);

  // A plausible cluster: an empty list, always there for a script to read.
  write_topology(t, "nic_bandwidth: 400Gbps", "nic_bandwidth: 400Gbps");
  c = inflect_cmd(run, false);
  REQUIRE(c.rc == 0);
  CHECK(nlohmann::json::parse(c.out)["warnings"] == nlohmann::json::array());
}
