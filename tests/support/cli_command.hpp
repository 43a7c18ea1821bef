#pragma once
// Runs the inflect binary as a user would, from the repository root, for the tests that check the
// command line (exit codes, what is printed). INFLECT_SOURCE_DIR and INFLECT_BINARY come from
// tests/CMakeLists.txt.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <string>

#include <sys/wait.h>

namespace inflect::test {

struct Command {
  int rc = -1;
  std::string out;
};

/// Runs `args` through the inflect binary with the shell from the folder `dir`; `merge_stderr`
/// folds stderr into out, else stderr is discarded (so `out` is exactly stdout).
inline Command inflect_cmd_in(const std::string& dir, const std::string& args, bool merge_stderr) {
  const std::string cmd = std::string("cd '") + dir + "' && '" + INFLECT_BINARY + "' " + args +
                          (merge_stderr ? " 2>&1" : " 2>/dev/null");
  Command c;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE_MESSAGE(p != nullptr, "popen failed for: ", cmd);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) c.out.append(buf.data(), n);
  const int status = pclose(p);
  c.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return c;
}

/// The same from the repository root, as a user runs the bundled examples.
inline Command inflect_cmd(const std::string& args, bool merge_stderr) { return inflect_cmd_in(INFLECT_SOURCE_DIR, args, merge_stderr); }

}  // namespace inflect::test
