#pragma once
// Replays one fuzz corpus folder (fuzz/corpus/<name>/*) through a fuzz target's body without
// libFuzzer, inside a doctest case: every seed must be accepted or rejected with core::Error of
// kind input or io (fuzz_targets.hpp: run_one), never another exception. Returns how many seeds
// were accepted, so a test can also require that the valid seeds still parse.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../../fuzz/fuzz_targets.hpp"

namespace inflect::fuzz {

inline int replay_corpus(const std::string& name, void (*target)(const std::uint8_t*, std::size_t), std::size_t min_seeds = 5) {
  namespace fs = std::filesystem;
  io::set_project_root(INFLECT_SOURCE_DIR);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(INFLECT_SOURCE_DIR) / "fuzz/corpus" / name))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= min_seeds);
  int accepted = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CAPTURE(f.string());
    bool ok = false;
    CHECK_NOTHROW(ok = run_one(target, reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
    accepted += ok;
  }
  return accepted;
}

}  // namespace inflect::fuzz
