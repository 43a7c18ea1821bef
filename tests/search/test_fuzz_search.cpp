// Replays fuzz/corpus/search_yaml/* through the scan fuzz target without libFuzzer: every seed is
// accepted or rejected with core::Error(input|io), never another exception.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../../fuzz/fuzz_search_target.hpp"

TEST_CASE("fuzz corpus: every search seed is accepted or rejected with core::Error(input|io)") {
  namespace fs = std::filesystem;
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(INFLECT_SOURCE_DIR) / "fuzz/corpus/search_yaml"))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 5);
  int accepted = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CAPTURE(f.string());
    bool ok = false;
    CHECK_NOTHROW(ok = inflect::fuzz::run_one(&inflect::fuzz::search_yaml, reinterpret_cast<const std::uint8_t*>(text.data()),
                                             text.size()));
    accepted += ok;
  }
  CHECK(accepted >= 3);  // the bundled search and the two small ones
}
