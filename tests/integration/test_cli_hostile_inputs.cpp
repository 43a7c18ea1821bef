// Hostile inputs on the command line (issue 21, part 0): each gets exit 2 and one located message,
// never a hang, a wrap-around or an internal error.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "cli_command.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using inflect::test::Command;
using inflect::test::inflect_cmd;
using inflect::test::TempDir;

bool has(const Command& c, const std::string& fragment) { return c.out.find(fragment) != std::string::npos; }

// 'text' then `tail`, appended piecewise (GCC 12's -Wrestrict misfires on chained operator+).
std::string quoted(const std::string& text, const char* tail = "") {
  std::string q = "'";
  q.append(text).append("'").append(tail);
  return q;
}

}  // namespace

TEST_CASE("cli: --shard out of range is refused, not wrapped") {
  // sscanf("%d") read 99999999999 (past int) as some other number on glibc; every part is now
  // parsed whole and bounded by the most points a scan may have (100,000).
  const std::string scan = "scan workloads/scans/gpt3-175b-h100-vs-h200.yaml --out /nonexistent/never-written --shard ";
  for (const char* bad : {"1/99999999999", "99999999999/1", "1/0", "0/3", "2/1", "x/2", "1/2x", "1/100001", "1", "-1/2"}) {
    INFO(bad);
    const Command c = inflect_cmd(scan + bad, true);
    CHECK(c.rc == 2);
    CHECK(has(c, "--shard " + quoted(bad)));
  }
}

TEST_CASE("cli: a FIFO or a directory as input is refused before it is read") {
  TempDir t("hostile");
  const fs::path fifo = t.path / "experiment.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Without the check this blocks for ever (nothing writes the pipe); ctest's timeout would catch it.
  const Command pipe = inflect_cmd("validate " + fifo.string(), true);
  CHECK(pipe.rc == 2);
  CHECK(has(pipe, quoted(fifo.string(), " is not a regular file")));
  const Command dir = inflect_cmd("validate " + t.path.string(), true);
  CHECK(dir.rc == 2);
  CHECK(has(dir, quoted(t.path.string(), " is a directory; expected a file")));
}

TEST_CASE("cli: a YAML input past 8 MiB is refused before it is parsed") {
  // A 50 MB experiment took 7.6 GB in yaml-cpp; 9 MiB of comments after a valid document stands in.
  TempDir t("huge-yaml");
  const fs::path big = t.path / "big.yaml";
  std::string text = "name: big\n";
  while (text.size() < (std::size_t{9} << 20)) text += "# " + std::string(78, 'x') + "\n";
  inflect::test::write_file(big, text);
  const Command c = inflect_cmd("validate " + big.string(), true);
  CHECK(c.rc == 2);
  CHECK(has(c, "MiB of YAML, over the 8 MiB an input file may have"));
}
