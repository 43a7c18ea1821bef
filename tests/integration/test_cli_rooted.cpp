// Broadcast and reduce through the command line: `inflect collective`, `check-collectives` and
// `calibrate` on a broadcast_perf table, and the profile it writes read back.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_command.hpp"

namespace fs = std::filesystem;
using inflect::test::inflect_cmd;

TEST_CASE("cli: inflect collective runs broadcast and reduce on the ring, and refuses other algorithms") {
  const auto bc = inflect_cmd("collective broadcast 1GiB --topology topologies/dgx-h100.yaml --nodes 2", true);
  CAPTURE(bc.out);
  REQUIRE(bc.rc == 0);
  CHECK(bc.out.find("# broadcast over 16 devices (2 nodes x 8)") != std::string::npos);
  CHECK(bc.out.find("algorithm   ring") != std::string::npos);
  // The figures docs/collectives.md quotes ("Not yet checked against measurement"): with NCCL's
  // figures the Simple chain's fill makes LL128 the choice at 1 GiB.
  CHECK(bc.out.find("protocol    ll128") != std::string::npos);
  CHECK(bc.out.find("busbw       290.84 GB/s") != std::string::npos);
  const auto one = inflect_cmd("collective broadcast 1GiB --topology topologies/dgx-h100.yaml", true);
  CHECK(one.out.find("time        3205.71 us") != std::string::npos);
  CHECK(one.out.find("busbw       334.95 GB/s") != std::string::npos);
  CHECK(inflect_cmd("collective broadcast 16GiB --topology topologies/dgx-h100.yaml", true).out.find("protocol    simple") !=
        std::string::npos);
  // nccl-tests' columns: reduce's redop is sum and its root 0 (the group's first member).
  const auto sweep = inflect_cmd("collective reduce --sweep 1MiB:4MiB --topology topologies/dgx-h100.yaml", true);
  CAPTURE(sweep.out);
  REQUIRE(sweep.rc == 0);
  CHECK(sweep.out.find("1048576        262144     float     sum       0") != std::string::npos);
  // NCCL runs them on rings only; NCCL_ALGO=tree makes NCCL fail them, and inflect too (exit 2).
  const auto tree = inflect_cmd("collective broadcast 1GiB --topology topologies/dgx-h100.yaml --nodes 2 --algorithm tree", true);
  CHECK(tree.rc == 2);
  CHECK(tree.out.find("broadcast runs on rings only") != std::string::npos);
}

TEST_CASE("cli: a broadcast_perf table is checked and calibrated, and its profile read back") {
  // A constructed table (not a measurement): 8 ranks of one DGX H100, sizes 1 MiB .. 1 GiB by 4,
  // time = 20 us + size / 300 GB/s. Calibrating on it gives a broadcast fit with latency 20 us that
  // reproduces it.
  const fs::path dir = fs::temp_directory_path() / ("inflect-test-rooted-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path table = dir / "h100x8_broadcast.txt";
  {
    std::ofstream f(table);
    f << "# constructed for a test, not measured: broadcast_perf -b 1M -e 1G -f 4 -g 1; GPU count: 8\n";
    for (int i = 0; i < 6; ++i) {
      const double size = 1048576.0 * (1 << (2 * i));
      const double t = 20e-6 + size / 300e9;
      const double bw = size / t / 1e9;
      char row[256];
      std::snprintf(row, sizeof row, "  %.0f %.0f float none 0 %.2f %.2f %.2f 0 %.2f %.2f %.2f 0\n", size, size / 4, t * 1e6, bw,
                    bw, t * 1e6, bw, bw);
      f << row;
    }
  }
  const auto check = inflect_cmd("check-collectives " + table.string() + " --topology topologies/dgx-h100.yaml", true);
  CAPTURE(check.out);
  REQUIRE(check.rc == 0);
  CHECK(check.out.find("not modelled") == std::string::npos);
  CHECK(check.out.find("over 6 rows (>= 1 MiB)") != std::string::npos);
  const std::string profile = (dir / "bcast.yaml").string();
  const auto cal = inflect_cmd("calibrate " + table.string() + " --topology topologies/dgx-h100.yaml --out " + profile, true);
  CAPTURE(cal.out);
  REQUIRE(cal.rc == 0);
  std::ifstream in(profile);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("collective: broadcast") != std::string::npos);
  CHECK(text.find("latency: 20us") != std::string::npos);
  const auto after = inflect_cmd("check-collectives " + table.string() + " --topology topologies/dgx-h100.yaml --profile " + profile, true);
  CAPTURE(after.out);
  REQUIRE(after.rc == 0);
  CHECK(after.out.find("MAPE 0.0% over 6 rows (>= 1 MiB)") != std::string::npos);
  fs::remove_all(dir);
}
