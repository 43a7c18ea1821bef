// Replays fuzz/corpus/search_yaml/* through the search fuzz target without libFuzzer: every seed
// is accepted or rejected with core::Error(input|io), never another exception.
#include <doctest/doctest.h>

#include "../../fuzz/fuzz_search_target.hpp"
#include "fuzz_replay.hpp"

TEST_CASE("fuzz corpus: every search seed is accepted or rejected with core::Error(input|io)") {
  // The bundled search and the two small ones parse; the others are rejected at a key.
  CHECK(inflect::fuzz::replay_corpus("search_yaml", &inflect::fuzz::search_yaml) >= 3);
}
