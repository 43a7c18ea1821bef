// Replays fuzz/corpus/{study_yaml,report_json}/* through the study fuzz targets without libFuzzer:
// every seed is accepted or rejected with core::Error(input|io), never another exception.
#include <doctest/doctest.h>

#include "../../fuzz/fuzz_study_target.hpp"
#include "fuzz_replay.hpp"

TEST_CASE("fuzz corpus: every study and report seed is accepted or rejected with core::Error(input|io)") {
  CHECK(inflect::fuzz::replay_corpus("study_yaml", &inflect::fuzz::study_yaml) >= 2);
  CHECK(inflect::fuzz::replay_corpus("report_json", &inflect::fuzz::report_json) >= 2);
}
