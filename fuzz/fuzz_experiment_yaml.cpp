// libFuzzer entry for the experiment parser; the body lives in fuzz_targets.hpp so the corpus also
// replays in the ordinary test run (tests/io/test_fuzz_corpus.cpp).
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  // Corpus inputs name bundled files (topologies/dgx-a100.yaml) relative to the project root.
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  inflect::fuzz::run_one(&inflect::fuzz::experiment_yaml, data, size);
  return 0;
}
