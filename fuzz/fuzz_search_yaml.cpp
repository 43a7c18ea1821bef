// libFuzzer entry for the search-file parser and plan enumeration; the body lives in
// fuzz_search_target.hpp so the corpus also replays in the ordinary test run (tests/search/).
#include "fuzz_search_target.hpp"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  inflect::fuzz::run_one(&inflect::fuzz::search_yaml, data, size);
  return 0;
}
