// libFuzzer entry for the jobs_yaml parser; the body lives in fuzz_targets.hpp so the corpus also
// replays in the ordinary test run (tests/io/test_fuzz_corpus.cpp).
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  inflect::fuzz::run_one(&inflect::fuzz::jobs_yaml, data, size);
  return 0;
}
