#include <doctest/doctest.h>

#include "inflect/plan/schedule.hpp"

using namespace inflect::plan;

TEST_CASE("1F1B on pp=4, m=8: warm-up forwards, then one forward one backward, then the drain") {
  // Stage 0 of 4 warms up with min(4-0-1, 8) = 3 forwards: F0 F1 F2, then F3 B0 F4 B1 ... F7 B4,
  // then drains B5 B6 B7. The last stage has no warm-up: F0 B0 F1 B1 ...
  auto s0 = stage_schedule(Schedule::one_f_one_b, 0, 4, 8);
  REQUIRE(s0.size() == 16);
  CHECK(s0[0].kind == StepKind::forward);
  CHECK(s0[2].micro_batch == 2);
  CHECK(s0[3].kind == StepKind::forward);
  CHECK(s0[3].micro_batch == 3);
  CHECK(s0[4].kind == StepKind::backward);
  CHECK(s0[4].micro_batch == 0);
  CHECK(s0[15].kind == StepKind::backward);
  CHECK(s0[15].micro_batch == 7);
  auto s3 = stage_schedule(Schedule::one_f_one_b, 3, 4, 8);
  CHECK(s3[0].kind == StepKind::forward);
  CHECK(s3[1].kind == StepKind::backward);
  CHECK(s3[1].micro_batch == 0);
}

TEST_CASE("every schedule runs each micro-batch forward once and backward once, forward first") {
  for (auto sched : {Schedule::one_f_one_b, Schedule::gpipe})
    for (int pp = 1; pp <= 8; ++pp)
      for (int m = 1; m <= 12; ++m)
        for (int s = 0; s < pp; ++s) {
          auto steps = stage_schedule(sched, s, pp, m);
          std::vector<int> f(static_cast<std::size_t>(m), 0), b(static_cast<std::size_t>(m), 0);
          bool order_ok = true;
          for (const auto& st : steps) {
            auto i = static_cast<std::size_t>(st.micro_batch);
            if (st.kind == StepKind::forward) ++f[i];
            else {
              order_ok = order_ok && f[i] == 1;
              ++b[i];
            }
          }
          CHECK(order_ok);
          for (int i = 0; i < m; ++i) {
            CHECK(f[static_cast<std::size_t>(i)] == 1);
            CHECK(b[static_cast<std::size_t>(i)] == 1);
          }
        }
}

TEST_CASE("in-flight activations: 1F1B holds pp - s micro-batches on stage s, GPipe all m") {
  // 1F1B stage s holds its warm-up forwards plus the one in the steady state: min(pp - s, m).
  CHECK(in_flight_micro_batches(Schedule::one_f_one_b, 0, 4, 8) == 4);
  CHECK(in_flight_micro_batches(Schedule::one_f_one_b, 1, 4, 8) == 3);
  CHECK(in_flight_micro_batches(Schedule::one_f_one_b, 3, 4, 8) == 1);
  CHECK(in_flight_micro_batches(Schedule::one_f_one_b, 0, 8, 2) == 2);
  CHECK(in_flight_micro_batches(Schedule::gpipe, 0, 4, 8) == 8);
}
