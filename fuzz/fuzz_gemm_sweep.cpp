// libFuzzer entry for calib::parse_gemm_sweep (GEMM sweep CSV); the body lives in
// fuzz_targets.hpp so the corpus also replays in the ordinary test run (tests/io/test_fuzz_corpus.cpp).
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  inflect::fuzz::run_one(&inflect::fuzz::gemm_sweep, data, size);
  return 0;
}
