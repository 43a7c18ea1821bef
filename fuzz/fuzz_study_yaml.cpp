// libFuzzer entry for the study_yaml parser; the body lives in fuzz_study_target.hpp so the corpus also
// replays in the ordinary test run (tests/study/test_fuzz_study.cpp).
#include "fuzz_study_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  inflect::fuzz::run_one(&inflect::fuzz::study_yaml, data, size);
  return 0;
}
