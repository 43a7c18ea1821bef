#include <doctest/doctest.h>

#include "inflect/workload/model.hpp"
#include "workload_fixtures.hpp"

using namespace inflect::workload;

namespace {
// Parameter counts are sums of integer products far below 2^53, so doubles hold them exactly.
constexpr double kExact = 1e-12;
// Published headline sizes are rounded to about three digits.
constexpr double kHeadline = 0.005;
}  // namespace

TEST_CASE("GPT layer has 12h^2 + 13h parameters") {
  // QKV 3h^2 + 3h bias, proj h^2 + h, fc1 4h^2 + 4h, fc2 4h^2 + h, two LayerNorms 4h:
  // 12h^2 + 13h. h = 12288: 12 * 150994944 + 159744 = 1812099072.
  ModelSpec m = fixtures::gpt3_175b();
  CHECK(m.layer_params() == doctest::Approx(1812099072.0).epsilon(kExact));
}

TEST_CASE("gpt3-175b totals 174.6B parameters") {
  // 96 layers * 1812099072 = 173961510912; tied token embedding 51200*12288 = 629145600;
  // learned positions 2048*12288 = 25165824; final LayerNorm 24576. Sum 174615846912.
  ModelSpec m = fixtures::gpt3_175b();
  CHECK(m.params() == doctest::Approx(174615846912.0).epsilon(kExact));
  CHECK(m.params() == doctest::Approx(174.6e9).epsilon(kHeadline));
}

TEST_CASE("llama3-8b totals 8.03B parameters") {
  // Layer: QKV 4096*(4096 + 2*8*128) = 25165824, proj 16777216, SwiGLU 3*4096*14336 = 176160768,
  // two RMSNorms 8192 -> 218112000; x32 = 6979584000. Untied embeddings 2*128256*4096 =
  // 1050673152; final norm 4096. Sum 8030261248.
  ModelSpec m = fixtures::llama3_8b();
  CHECK(m.layer_params() == doctest::Approx(218112000.0).epsilon(kExact));
  CHECK(m.params() == doctest::Approx(8030261248.0).epsilon(kExact));
  CHECK(m.params() == doctest::Approx(8.03e9).epsilon(kHeadline));
}

TEST_CASE("llama3-70b totals 70.6B parameters") {
  // Layer: 8192*(8192 + 2048) + 8192^2 + 3*8192*28672 + 2*8192 = 855654400; x80 = 68452352000;
  // embeddings 2*128256*8192 = 2101346304; final norm 8192. Sum 70553706496.
  ModelSpec m = fixtures::llama3_70b();
  CHECK(m.params() == doctest::Approx(70553706496.0).epsilon(kExact));
  CHECK(m.params() == doctest::Approx(70.6e9).epsilon(kHeadline));
}

TEST_CASE("llama3-405b totals 405.8B parameters") {
  // Layer: 16384*(16384 + 2048) + 16384^2 + 3*16384*53248 + 2*16384 = 3187703808; x126 =
  // 401650679808; embeddings 2*128256*16384 = 4202692608; final norm 16384. Sum 405853388800.
  ModelSpec m = fixtures::llama3_405b();
  CHECK(m.params() == doctest::Approx(405853388800.0).epsilon(kExact));
  CHECK(m.params() == doctest::Approx(405.8e9).epsilon(kHeadline));
}

TEST_CASE("untying the embeddings adds one vocab x hidden matrix") {
  // gpt3-175b untied: + 51200 * 12288 = 629145600 parameters.
  ModelSpec tied = fixtures::gpt3_175b();
  ModelSpec untied = tied;
  untied.tied_embeddings = false;
  CHECK(untied.params() - tied.params() == doctest::Approx(629145600.0).epsilon(kExact));
}
