// Bad input as data (after DuckDB's declarative error tests): every tests/errors/**/*.yaml starts
// with `# expect: <kind>: <message fragment>`; loading it must throw core::Error of that kind whose
// formatted message ("file:line:col: key: message") contains the fragment and names the file and
// line. A new regression case is one file. A case whose error is in a file it reads (a device file)
// says which on its second line, `# at: <path relative to the case>`; files under an `inputs/`
// folder are such files, not cases. Cases under `jobs/` are jobs files (`inflect jobs`), loaded as
// such.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/jobs_loader.hpp"

namespace {

namespace fs = std::filesystem;
using inflect::core::Error;
using inflect::core::ErrorKind;

struct Expectation {
  std::string kind;      // "input" | "io"
  std::string fragment;  // must occur in format_error(e)
  std::string at;        // the file the error is in, relative to the case; empty: the case itself
};

/// Reads the header line; an unreadable or malformed header is a failure of the case itself.
bool read_expectation(const fs::path& file, Expectation& out) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return false;
  const std::string prefix = "# expect: ";
  if (line.rfind(prefix, 0) != 0) return false;
  std::string rest = line.substr(prefix.size());
  auto colon = rest.find(": ");
  if (colon == std::string::npos) return false;
  out.kind = rest.substr(0, colon);
  out.fragment = rest.substr(colon + 2);
  const std::string at = "# at: ";
  if (std::getline(in, line) && line.rfind(at, 0) == 0) out.at = line.substr(at.size());
  return (out.kind == "input" || out.kind == "io") && !out.fragment.empty();
}

const char* kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::input: return "input";
    case ErrorKind::io: return "io";
    case ErrorKind::internal: return "internal";
  }
  return "?";
}

std::vector<fs::path> error_cases() {
  std::vector<fs::path> out;
  fs::path dir = fs::path(INFLECT_SOURCE_DIR) / "tests" / "errors";
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml" && entry.path().parent_path().filename() != "inputs")
      out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("errors: every tests/errors case fails with its expected error") {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  const auto cases = error_cases();
  // The brief asks for at least 20 cases covering every check; losing the folder must not pass.
  REQUIRE(cases.size() >= 20);
  const fs::path root = fs::path(INFLECT_SOURCE_DIR) / "tests" / "errors";
  for (const auto& file : cases) {
    const std::string name = fs::relative(file, root).string();
    SUBCASE(name.c_str()) {
      Expectation want;
      REQUIRE_MESSAGE(read_expectation(file, want), name << ": first line must be '# expect: input|io: fragment'");
      bool threw = false;
      try {
        if (file.parent_path().filename() == "jobs") (void)inflect::io::load_jobs(file.string());
        else (void)inflect::io::load_experiment(file.string());
      } catch (const Error& e) {
        threw = true;
        const std::string msg = inflect::core::format_error(e);
        INFO(name << " -> " << msg);
        CHECK(std::string(kind_name(e.kind())) == want.kind);
        CHECK(msg.find(want.fragment) != std::string::npos);
        // One message naming the file and line: the user can jump straight to it.
        CHECK(e.where().file == (want.at.empty() ? file : file.parent_path() / want.at).string());
        CHECK(e.where().line > 0);
      }
      CHECK_MESSAGE(threw, name << " loaded without error; expected " << want.kind << ": " << want.fragment);
    }
  }
}
