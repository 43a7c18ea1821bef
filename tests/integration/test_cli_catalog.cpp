// Devices of one's own through the inflect binary (docs/devices.md, "Your own devices"):
// `--catalog DIR` on devices, run, validate, scan and search, and the bundled example that reads
// its device with cluster.device_file. Each case works in its own temporary folder.
#include <doctest/doctest.h>

#include "temp_dir.hpp"
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_command.hpp"

namespace {

namespace fs = std::filesystem;

using inflect::test::Command;
using inflect::test::inflect_cmd;

using inflect::test::TempDir;

void write(const fs::path& p, const std::string& text) { inflect::test::write_file(p, text); }

/// The bundled H100 file renamed to `name`, with `hbm` of HBM.
std::string h100_as(const std::string& name, const std::string& hbm) {
  std::ifstream in(fs::path(INFLECT_SOURCE_DIR) / "calibration/devices/h100-sxm.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  auto swap = [&](const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
  };
  swap("name: h100-sxm\n", "name: " + name + "\n");
  swap("hbm_capacity: 81559MiB\n", "hbm_capacity: " + hbm + "\n");
  return s;
}

const char* kCluster = "cluster:\n  topology: topologies/dgx-h100.yaml\n  nodes: 1\n  device: my-accel\n"
                       "model:\n  preset: llama3-8b\ntraining:\n  seq_len: 4096\n  global_batch: 16\n";

/// `p` in single quotes for the shell. (Appended, not "'" + ...: GCC 12 warns falsely, -Wrestrict.)
std::string quoted(const fs::path& p) {
  std::string s = "'";
  s += p.string();
  s += "'";
  return s;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("cli: --catalog DIR adds its devices to devices, run and validate") {
  TempDir t("run");
  const fs::path dir = t.path / "devices";
  write(dir / "my-accel.yaml", h100_as("my-accel", "111GB"));
  const std::string catalog = std::string(" --catalog ") + quoted(dir);
  const std::string exp = quoted(t.path / "exp.yaml");
  write(t.path / "exp.yaml", std::string("name: mine\n") + kCluster + "parallel:\n  tp: 8\n");

  const Command devices = inflect_cmd("devices" + catalog, true);
  REQUIRE(devices.rc == 0);
  CHECK(lines(devices.out) == 9);  // a header, the seven embedded devices and this one
  CHECK(devices.out.find("my-accel") != std::string::npos);
  CHECK(devices.out.find("h100-sxm") != std::string::npos);
  CHECK(inflect_cmd("devices", true).out.find("my-accel") == std::string::npos);

  const Command run = inflect_cmd("run " + exp + catalog + " --json", false);
  REQUIRE(run.rc == 0);
  const auto j = nlohmann::json::parse(run.out);
  CHECK(j["device"] == "my-accel");
  // The file's 111 GB as reported; usable is that less the H100's reserve with one communicator
  // (plain data parallelism): 475,332,608 + 639,631,360 + 462,422,016 = 1,577,385,984 B.
  CHECK(j["memory"]["reported_capacity_bytes"].get<double>() == 111e9);
  CHECK(j["memory"]["reserved_bytes"].get<double>() == 1577385984.0);
  CHECK(j["memory"]["capacity_bytes"].get<double>() == 111e9 - 1577385984.0);
  CHECK(j["step_time_s"].get<double>() > 0);

  CHECK(inflect_cmd("validate " + exp + catalog, true).rc == 0);
  // Without the folder the name is unknown: exit 2, the loader's message at cluster.device.
  const Command unknown = inflect_cmd("run " + exp + " --json", true);
  CHECK(unknown.rc == 2);
  CHECK(unknown.out.find("cluster.device: unknown device 'my-accel'") != std::string::npos);
}

TEST_CASE("cli: --catalog errors: a name already in the catalog, a missing folder") {
  TempDir t("dup");
  write(t.path / "h100-sxm.yaml", h100_as("h100-sxm", "96GB"));
  const Command dup = inflect_cmd(std::string("devices --catalog ") + quoted(t.path), true);
  CHECK(dup.rc == 2);
  CHECK(lines(dup.out) == 1);
  CHECK(dup.out.find("device 'h100-sxm' in " + (t.path / "h100-sxm.yaml").string() +
                     " is already in the catalog (calibration/devices/h100-sxm.yaml); rename it") != std::string::npos);
  // The same name in two folders: the second names the first.
  TempDir a("dup-a");
  write(a.path / "twin.yaml", h100_as("twin", "90GB"));
  fs::remove(t.path / "h100-sxm.yaml");
  write(t.path / "twin.yaml", h100_as("twin", "91GB"));
  const Command twin = inflect_cmd(std::string("devices --catalog ") + quoted(a.path) + " --catalog " + quoted(t.path), true);
  CHECK(twin.rc == 2);
  CHECK(twin.out.find("is already in the catalog (" + (a.path / "twin.yaml").string() + ")") != std::string::npos);
  const Command missing = inflect_cmd("run workloads/examples/llama-32l-1024.yaml --catalog /nonexistent/devices", true);
  CHECK(missing.rc == 2);
  CHECK(missing.out.find("device folder '/nonexistent/devices' not found") != std::string::npos);
}

TEST_CASE("cli: --catalog on scan and search") {
  TempDir t("scan");
  const fs::path dir = t.path / "devices";
  write(dir / "my-accel.yaml", h100_as("my-accel", "111GB"));
  const std::string catalog = std::string(" --catalog ") + quoted(dir);
  // A scan over the device: the catalog's and the folder's.
  write(t.path / "scan.yaml", std::string("name: two-devices\n") + kCluster +
                                  "parallel:\n  tp: 8\nsweep:\n  cluster.device: [h100-sxm, my-accel]\n");
  const fs::path out = t.path / "out";
  const Command scan = inflect_cmd(std::string("scan ") + quoted(t.path / "scan.yaml") + " --jobs 2 -q --out " + quoted(out) + catalog, true);
  REQUIRE(scan.rc == 0);
  std::ifstream rows(out / "results.jsonl");
  int ok = 0;
  for (std::string line; std::getline(rows, line);) {
    const auto row = nlohmann::json::parse(line);
    CHECK(row["status"] == "ok");
    ok += row["status"] == "ok";
  }
  CHECK(ok == 2);
  // Without it the my-accel point is invalid (not the whole scan: the h100-sxm one runs).
  const Command without = inflect_cmd(std::string("scan ") + quoted(t.path / "scan.yaml") + " -q --out " + quoted(t.path / "out2"), true);
  CHECK(without.rc == 0);
  CHECK(without.out.find("1 invalid") != std::string::npos);

  write(t.path / "search.yaml", std::string("name: mine\n") + kCluster + "search:\n  tp: [8]\n  pp: [1]\n  zero: [0]\n");
  const Command search = inflect_cmd(std::string("search ") + quoted(t.path / "search.yaml") + " --top 1 --jobs 2 --json" + catalog, false);
  REQUIRE(search.rc == 0);
  const auto j = nlohmann::json::parse(search.out);
  REQUIRE(j["plans"].size() == 1);
  CHECK(j["plans"][0]["report"]["device"] == "my-accel");
  CHECK(inflect_cmd(std::string("search ") + quoted(t.path / "search.yaml") + " --top 1 --json", true).rc == 2);
}

TEST_CASE("cli: the bundled custom-device example runs, with or without its folder as a catalog") {
  const std::string exp = "workloads/examples/custom-device/llama3-8b-dp8-example-192g.yaml";
  const Command run = inflect_cmd("run " + exp + " --json", false);
  REQUIRE(run.rc == 0);
  const auto j = nlohmann::json::parse(run.out);
  CHECK(j["device"] == "example-h100-192g");
  CHECK(j["topology"] == "example-dgx-192g");
  // 192 GB reported, less the H100's reserve with one communicator (dp8): 1,577,385,984 B.
  CHECK(j["memory"]["reported_capacity_bytes"].get<double>() == 192e9);
  CHECK(j["memory"]["capacity_bytes"].get<double>() == 192e9 - 1577385984.0);
  CHECK(j["memory"]["fits"] == true);
  // The folder holds the very file device_file reads: one device, not a clash.
  const Command both = inflect_cmd("run " + exp + " --json --catalog workloads/examples/custom-device/devices", false);
  REQUIRE(both.rc == 0);
  CHECK(nlohmann::json::parse(both.out)["step_time_s"] == j["step_time_s"]);
  const Command devices = inflect_cmd("devices --catalog workloads/examples/custom-device/devices", true);
  CHECK(devices.rc == 0);
  CHECK(devices.out.find("example-h100-192g") != std::string::npos);
}
