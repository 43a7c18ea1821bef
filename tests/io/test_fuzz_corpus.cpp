// Replays every fuzz corpus file (fuzz/corpus/<target>/*) through the same entry the libFuzzer
// executable uses, without libFuzzer: a parser may reject any input, but only with core::Error of
// kind input or io. A crash a fuzzer found becomes a regression test by dropping it in the folder.
#include <doctest/doctest.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../../fuzz/fuzz_targets.hpp"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> corpus(std::string_view target) {
  std::vector<fs::path> out;
  fs::path dir = fs::path(INFLECT_SOURCE_DIR) / "fuzz" / "corpus" / std::string(target);
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("fuzz corpus: every seed is accepted or rejected with core::Error(input|io)") {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  for (const auto& target : inflect::fuzz::kTargets) {
    const auto files = corpus(target.name);
    INFO("target " << target.name);
    // Each target ships seeds; an empty folder would make this test pass vacuously.
    CHECK(files.size() >= 2);
    for (const auto& f : files) {
      const std::string bytes = read_all(f);
      INFO("input " << f.string());
      const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
      try {
        (void)inflect::fuzz::run_one(target.entry, data, bytes.size());
      } catch (const inflect::core::Error& e) {
        FAIL_CHECK("internal error escaped: " << inflect::core::format_error(e));
      } catch (const std::exception& e) {
        FAIL_CHECK("non-inflect exception escaped: " << std::string(e.what()));
      }
    }
  }
}

// Seeds named valid_* must parse: they start the fuzzer from inputs that reach deep into the checks.
TEST_CASE("fuzz corpus: valid seeds parse") {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  for (const auto& target : inflect::fuzz::kTargets) {
    for (const auto& f : corpus(target.name)) {
      if (f.filename().string().rfind("valid", 0) != 0) continue;
      const std::string bytes = read_all(f);
      INFO(f.string());
      try {
        target.entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      } catch (const inflect::core::Error& e) {
        FAIL_CHECK(inflect::core::format_error(e));
      }
    }
  }
}

TEST_CASE("fuzz corpus: empty and binary input are rejected, not crashes") {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  static const char kJunk[] = "\x00\xff\xfe{[:\n\t- ? &a *a !!binary";
  const std::string junk(kJunk, sizeof(kJunk) - 1);  // keeps the leading NUL byte
  for (const auto& target : inflect::fuzz::kTargets) {
    INFO(target.name);
    CHECK_NOTHROW((void)inflect::fuzz::run_one(target.entry, nullptr, 0));
    CHECK_NOTHROW((void)inflect::fuzz::run_one(target.entry, reinterpret_cast<const std::uint8_t*>(junk.data()),
                                               junk.size()));
  }
}
