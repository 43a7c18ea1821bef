// Replays fuzz/corpus/scan_yaml/* through the scan fuzz target without libFuzzer: every seed is
// accepted or rejected with core::Error(input|io), never another exception.
#include <doctest/doctest.h>

#include "../../fuzz/fuzz_scan_target.hpp"
#include "fuzz_replay.hpp"

TEST_CASE("fuzz corpus: every scan seed is accepted or rejected with core::Error(input|io)") {
  CHECK(inflect::fuzz::replay_corpus("scan_yaml", &inflect::fuzz::scan_yaml) >= 2);  // the bundled scans
}
