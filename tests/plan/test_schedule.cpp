#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "inflect/core/error.hpp"
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

namespace {
ScheduleShape shape(int pp, int m, int v = 1, int layers = 0) {
  ScheduleShape x;
  x.stages = pp;
  x.micro_batches = m;
  x.virtual_stages = v;
  x.layers = layers > 0 ? layers : pp * v * 2;
  return x;
}
}  // namespace

TEST_CASE("unit-cost replay, pp=4 m=8: 1F1B's bubble is (p-1)(F+B+W), GPipe's the same") {
  // F = B = W = 1 per stage. 1F1B: (m + p - 1) slots of F+B+W = 11 * 3 = 33; each rank computes
  // 8 * 3 = 24, so the bubble is 3 * 3 = 9.
  auto r = replay_schedule(Schedule::one_f_one_b, shape(4, 8));
  REQUIRE_MESSAGE(r.valid, r.problem);
  CHECK(r.busy == doctest::Approx(24));
  CHECK(r.makespan == doctest::Approx(33));
  CHECK(r.bubble == doctest::Approx(9));
  auto g = replay_schedule(Schedule::gpipe, shape(4, 8));
  REQUIRE(g.valid);
  CHECK(g.makespan == doctest::Approx(33));
}

TEST_CASE("unit-cost replay, pp=4 m=8: ZB-H1's bubble is (p-1)(F+B-W) = a third of 1F1B's") {
  auto r = replay_schedule(Schedule::zero_bubble, shape(4, 8));
  REQUIRE_MESSAGE(r.valid, r.problem);
  CHECK(r.busy == doctest::Approx(24));
  CHECK(r.bubble == doctest::Approx(3));
  CHECK(r.makespan == doctest::Approx(27));
}

TEST_CASE("unit-cost replay, pp=4 m=8 V=2: interleaved 1F1B divides the bubble by V") {
  // Bubble (p-1)(F+B+W)/V = 9/2 with F = B = W = 1 for a whole stage (1/2 per chunk).
  auto r = replay_schedule(Schedule::interleaved, shape(4, 8, 2));
  REQUIRE_MESSAGE(r.valid, r.problem);
  CHECK(r.busy == doctest::Approx(24));
  CHECK(r.bubble == doctest::Approx(4.5));
  auto r4 = replay_schedule(Schedule::interleaved, shape(4, 8, 4));
  REQUIRE(r4.valid);
  CHECK(r4.bubble == doctest::Approx(9.0 / 4));
}

TEST_CASE("unit-cost replay: DualPipe on pp=2 m=4 has no bubble (worked by hand)") {
  // Rank 0 runs F0.0 [0,1], F2.3 [1,2] (direction 1's input reached rank 1 at 0), F1.0 [2,3],
  // B2.3 [3,5] (its loss is local), then F3.3 overlapped with B0.0, which waits for rank 1's
  // B0.1 (ends at 5): [5,8]; B3.3 [8,10]; B1.0 split: input gradient [10,11] once rank 1's
  // B1.1 ends at 10, weight gradient [11,12]. Rank 1 is the mirror image. 12 = 4 F + 4 (B+W).
  auto r = replay_schedule(Schedule::dualpipe, shape(2, 4));
  REQUIRE_MESSAGE(r.valid, r.problem);
  CHECK(r.makespan == doctest::Approx(12));
  CHECK(r.bubble == doctest::Approx(0));
}

TEST_CASE("unit-cost replay, pp=4 m=8: DualPipe and DualPipeV bubbles are at most ZB-H1's") {
  // DeepSeek-V3's closed forms, (p/2-1)(F&B+B-3W) = 1 and (p-1)(F&B+B-3W)/2 = 1.5 with
  // F = B = W = 1, idealise the warm-up; the reference order, with an overlapped pair waiting
  // for both inputs as its commit_and_wait does, replays to 2 and 3. Either is below 1F1B's 9.
  auto zb = replay_schedule(Schedule::zero_bubble, shape(4, 8));
  auto dp = replay_schedule(Schedule::dualpipe, shape(4, 8));
  auto dv = replay_schedule(Schedule::dualpipev, shape(4, 8));
  REQUIRE_MESSAGE(dp.valid, dp.problem);
  REQUIRE_MESSAGE(dv.valid, dv.problem);
  CHECK(dp.busy == doctest::Approx(24));
  CHECK(dv.busy == doctest::Approx(24));
  CHECK(dp.bubble == doctest::Approx(2));
  CHECK(dv.bubble == doctest::Approx(3));
  CHECK(dp.bubble <= zb.bubble);
  CHECK(dv.bubble <= zb.bubble);
}

TEST_CASE("every schedule is a valid order (all steps, dependencies kept, no deadlock) for all shapes it accepts") {
  int checked = 0;
  for (auto s : {Schedule::one_f_one_b, Schedule::gpipe, Schedule::zero_bubble, Schedule::interleaved, Schedule::dualpipe,
                 Schedule::dualpipev})
    for (int pp = 1; pp <= 8; ++pp)
      for (int m = 1; m <= 24; ++m)
        for (int v : {1, 2, 3}) {
          auto x = shape(pp, m, v, pp * v * 2 * 2);
          if (!schedule_problem(s, x).empty()) continue;
          auto r = replay_schedule(s, x);
          CHECK_MESSAGE(r.valid, schedule_name(s) << " pp=" << pp << " m=" << m << " v=" << v << ": " << r.problem);
          // Uneven costs too: a slow weight gradient must not break the order.
          CHECK(replay_schedule(s, x, 1, 2, 3).valid);
          ++checked;
        }
  CHECK(checked > 300);
}

TEST_CASE("zero-bubble's bubble never exceeds 1F1B's, whatever the costs") {
  for (int pp = 1; pp <= 8; ++pp)
    for (int m = 1; m <= 16; ++m)
      for (double w : {0.5, 1.0, 2.0}) {
        auto a = replay_schedule(Schedule::one_f_one_b, shape(pp, m), 1, 1, w);
        auto z = replay_schedule(Schedule::zero_bubble, shape(pp, m), 1, 1, w);
        REQUIRE(a.valid);
        REQUIRE(z.valid);
        CHECK(z.makespan <= a.makespan + 1e-9);
      }
}

TEST_CASE("activations in flight: zero-bubble holds min(p, m) micro-batches on every stage") {
  CHECK(peak_activation_layers(Schedule::zero_bubble, 0, shape(4, 8, 1, 4)) == doctest::Approx(4));
  CHECK(peak_activation_layers(Schedule::zero_bubble, 3, shape(4, 8, 1, 4)) == doctest::Approx(4));
  CHECK(peak_activation_layers(Schedule::one_f_one_b, 0, shape(4, 8, 1, 8)) == doctest::Approx(8));  // 4 mbs x 2 layers
  CHECK(peak_activation_layers(Schedule::one_f_one_b, 3, shape(4, 8, 1, 8)) == doctest::Approx(2));
}

TEST_CASE("activations in flight: interleaved stage 0 holds more than 1F1B's p micro-batches of its layers") {
  // Warm-up of stage 0: (p-1)*2 + (V-1)*p = 6 + 4 = 10 chunk-forwards of L/(pV) layers each, plus
  // the steady state's one: 11 chunk-forwards of 1 layer (L = 16, p = 4, V = 4... here V = 2:
  // L = 16 gives 2 layers a chunk, 6 + 4 + 1 = 11 chunk-forwards = 22 layer-micro-batches).
  CHECK(peak_activation_layers(Schedule::interleaved, 0, shape(4, 8, 2, 16)) == doctest::Approx(22));
  // 1F1B: 4 micro-batches of 4 layers.
  CHECK(peak_activation_layers(Schedule::one_f_one_b, 0, shape(4, 8, 1, 16)) == doctest::Approx(16));
}

TEST_CASE("dualpipe layout: two copies in opposite directions, dualpipev: a V on one copy") {
  auto d = pipeline_layout(Schedule::dualpipe, shape(4, 8, 1, 8));
  CHECK(d.chunks == 8);
  CHECK(d.duplicated_params);
  CHECK(d.owner[0] == 0);
  CHECK(d.owner[3] == 3);
  CHECK(d.owner[4] == 3);  // direction 1 starts on the last rank
  CHECK(d.owner[7] == 0);
  CHECK(d.route_of(0).front() == 0);
  CHECK(d.route_of(4).front() == 4);
  CHECK(d.chunks_of(1) == std::vector<int>{1, 6});
  auto v = pipeline_layout(Schedule::dualpipev, shape(4, 8, 1, 8));
  CHECK(v.chunks == 8);
  CHECK_FALSE(v.duplicated_params);
  CHECK(v.chunks_of(0) == std::vector<int>{0, 7});
  CHECK(v.chunks_of(3) == std::vector<int>{3, 4});
  CHECK(v.layers[0] == 1);
}

TEST_CASE("schedules refuse shapes they cannot run, saying why") {
  CHECK(schedule_problem(Schedule::interleaved, shape(4, 6, 2)).find("divisible by pp") != std::string::npos);
  CHECK(schedule_problem(Schedule::interleaved, shape(4, 8, 1)).find("virtual_stages >= 2") != std::string::npos);
  CHECK(schedule_problem(Schedule::dualpipe, shape(3, 8)).find("even") != std::string::npos);
  CHECK(schedule_problem(Schedule::dualpipev, shape(4, 7)).find(">= 2*pp") != std::string::npos);
  CHECK(schedule_problem(Schedule::one_f_one_b, shape(4, 8, 2)).find("only to the interleaved") != std::string::npos);
  CHECK(schedule_problem(Schedule::dualpipev, shape(4, 8, 1, 12)).find("not divisible") != std::string::npos);
  CHECK_THROWS(pipeline_layout(Schedule::dualpipe, shape(3, 8)));
}

namespace {

// A generated schedule written out as parallel.custom_schedule text.
std::vector<std::string> as_custom_text(inflect::plan::Schedule s, const inflect::plan::ScheduleShape& x) {
  using inflect::plan::StepKind;
  std::vector<std::string> out;
  for (int r = 0; r < x.stages; ++r) {
    std::string line;
    for (const auto& st : inflect::plan::stage_schedule(s, r, x)) {
      const char k = st.kind == StepKind::forward ? 'F' : st.kind == StepKind::backward ? 'B' : st.kind == StepKind::backward_input ? 'I' : 'W';
      if (!line.empty()) line += ' ';
      line += k;
      line += std::to_string(st.micro_batch);
      if (x.virtual_stages > 1) {
        line += '.';
        line += std::to_string(st.chunk / x.stages);  // the rank's local chunk
      }
    }
    out.push_back(line);
  }
  return out;
}

}  // namespace

TEST_CASE("a custom schedule is data: 1F1B and ZB-H1 written out replay exactly as the generated ones") {
  using namespace inflect::plan;
  ScheduleShape x;
  x.stages = 4;
  x.micro_batches = 8;
  x.layers = 8;
  for (Schedule s : {Schedule::one_f_one_b, Schedule::zero_bubble, Schedule::gpipe}) {
    ScheduleShape c = x;
    c.custom = std::make_shared<const std::vector<std::vector<ScheduleStep>>>(parse_custom_schedule(as_custom_text(s, x)));
    CHECK(schedule_problem(Schedule::custom, c).empty());
    const auto gen = replay_schedule(s, x, 1, 2, 1), cus = replay_schedule(Schedule::custom, c, 1, 2, 1);
    REQUIRE(cus.valid);
    CHECK(cus.makespan == doctest::Approx(gen.makespan));
    CHECK(cus.bubble == doctest::Approx(gen.bubble));
    CHECK(splits_backward(Schedule::custom, c) == (s == Schedule::zero_bubble));
    for (int st = 0; st < 4; ++st) CHECK(peak_activation_layers(Schedule::custom, st, c) == peak_activation_layers(s, st, x));
  }
  // Interleaved (V = 2) written out with .v suffixes: the same layout and the same replay.
  ScheduleShape xi = x;
  xi.virtual_stages = 2;
  ScheduleShape ci = xi;
  ci.custom = std::make_shared<const std::vector<std::vector<ScheduleStep>>>(parse_custom_schedule(as_custom_text(Schedule::interleaved, xi)));
  REQUIRE(schedule_problem(Schedule::custom, ci).empty());
  const auto gen = replay_schedule(Schedule::interleaved, xi), cus = replay_schedule(Schedule::custom, ci);
  REQUIRE(cus.valid);
  CHECK(cus.makespan == doctest::Approx(gen.makespan));
  CHECK(pipeline_layout(Schedule::custom, ci).owner == pipeline_layout(Schedule::interleaved, xi).owner);
  for (int st = 0; st < 4; ++st)
    CHECK(peak_activation_layers(Schedule::custom, st, ci) == peak_activation_layers(Schedule::interleaved, st, xi));
  // A local chunk beyond virtual_stages is named.
  ScheduleShape bad = xi;
  bad.custom = std::make_shared<const std::vector<std::vector<ScheduleStep>>>(
      parse_custom_schedule({"F0.0 F0.2", "F0.0", "F0.0", "F0.0"}));
  CHECK(schedule_problem(Schedule::custom, bad).find("local chunk 2, but virtual_stages is 2") != std::string::npos);
}

TEST_CASE("a custom schedule that cannot run says why: bad step, micro-batch out of range, deadlock, missing step") {
  using namespace inflect::plan;
  CHECK_THROWS_WITH_AS(parse_custom_schedule({"F0 B0", "F0 X0"}), doctest::Contains("rank 1: 'X0' is not a step"), inflect::core::Error);
  CHECK_THROWS_AS(parse_custom_schedule({"F0 B0", ""}), inflect::core::Error);
  ScheduleShape x;
  x.stages = 2;
  x.micro_batches = 2;
  x.layers = 2;
  auto with = [&](std::vector<std::string> text) {
    ScheduleShape c = x;
    c.custom = std::make_shared<const std::vector<std::vector<ScheduleStep>>>(parse_custom_schedule(text));
    return c;
  };
  CHECK(schedule_problem(Schedule::custom, x).find("needs parallel.custom_schedule") != std::string::npos);
  CHECK(schedule_problem(Schedule::custom, with({"F0 F1 B0 B1"})).find("lists 1 ranks but pp is 2") != std::string::npos);
  CHECK(schedule_problem(Schedule::custom, with({"F0 F1 B0 B1", "F0 B0 F2 B1"})).find("micro-batch 2") != std::string::npos);
  // Rank 1 runs B0 before its own F0: both ranks stop.
  const auto dead = replay_schedule(Schedule::custom, with({"F0 F1 B0 B1", "B0 F0 F1 B1"}));
  CHECK_FALSE(dead.valid);
  CHECK(dead.problem.find("deadlock: rank 0 at its step 3 (B0); rank 1 at its step 1 (B0)") != std::string::npos);
  const auto twice = replay_schedule(Schedule::custom, with({"F0 F1 B0 B1", "F0 B0 F0 F1 B1"}));
  CHECK(twice.problem.find("repeats F0") != std::string::npos);
  const auto missing = replay_schedule(Schedule::custom, with({"F0 F1 B0", "F0 B0 F1 B1"}));
  CHECK(missing.problem.find("micro-batch 1 never runs") != std::string::npos);
}

TEST_CASE("layers_per_stage: an uneven split lays out chunks and activations by hand") {
  using namespace inflect::plan;
  ScheduleShape x;
  x.stages = 4;
  x.micro_batches = 8;
  x.layers = 32;
  x.layers_per_stage = {9, 9, 9, 5};
  REQUIRE(schedule_problem(Schedule::one_f_one_b, x).empty());
  const PipelineLayout l = pipeline_layout(Schedule::one_f_one_b, x);
  CHECK(l.layers == std::vector<int>{9, 9, 9, 5});
  CHECK(l.first_layer == std::vector<int>{0, 9, 18, 27});
  // 1F1B: stage s holds p - s = 4, 3, 2, 1 micro-batches in flight, each of its layers.
  CHECK(peak_activation_layers(Schedule::one_f_one_b, 0, x) == 4 * 9);
  CHECK(peak_activation_layers(Schedule::one_f_one_b, 3, x) == 1 * 5);
  CHECK(schedule_problem(Schedule::zero_bubble, x).empty());
  // Wrong sums, sizes and multi-chunk schedules are refused with the reason.
  x.layers_per_stage = {9, 9, 9, 4};
  CHECK(schedule_problem(Schedule::one_f_one_b, x).find("sums to 31") != std::string::npos);
  x.layers_per_stage = {16, 16};
  CHECK(schedule_problem(Schedule::one_f_one_b, x).find("2 entries but pp is 4") != std::string::npos);
  x.layers_per_stage = {9, 9, 9, 5};
  CHECK(schedule_problem(Schedule::dualpipev, x).find("one model chunk each") != std::string::npos);
  x.layers_per_stage = {10, 10, 12, 0};
  CHECK(schedule_problem(Schedule::gpipe, x).find("at least one layer") != std::string::npos);
}

TEST_CASE("1F1B with lookahead: more warm-up forwards on every stage but the last, same work, same bubble") {
  // pp=4, m=8, lookahead 2: stage 0 warms up with min(3 + 2, 8) = 5 forwards F0..F4, then F5 B0
  // F6 B1 F7 B2, then drains B3..B7; it holds 6 micro-batches at once (4 without). The last stage
  // keeps F0 B0 F1 B1 ...: no stage after it to keep busy.
  ScheduleShape x = shape(4, 8);
  x.lookahead = 2;
  const auto s0 = stage_schedule(Schedule::one_f_one_b, 0, x);
  REQUIRE(s0.size() == 16);
  for (int i = 0; i < 6; ++i) CHECK(s0[static_cast<std::size_t>(i)].kind == StepKind::forward);
  CHECK(s0[6].kind == StepKind::backward);
  CHECK(s0[6].micro_batch == 0);
  const auto s3 = stage_schedule(Schedule::one_f_one_b, 3, x);
  CHECK(s3[1].kind == StepKind::backward);
  CHECK(peak_activation_layers(Schedule::one_f_one_b, 0, x) == doctest::Approx(6 * 2.0));  // 6 micro-batches x 2 layers
  CHECK(peak_activation_layers(Schedule::one_f_one_b, 0, shape(4, 8)) == doctest::Approx(4 * 2.0));
  // On unit costs with free links the warm-up costs nothing: the makespan is 1F1B's 33.
  const auto r = replay_schedule(Schedule::one_f_one_b, x);
  REQUIRE_MESSAGE(r.valid, r.problem);
  CHECK(r.makespan == doctest::Approx(33));
  // Only 1f1b takes it.
  ScheduleShape v = shape(4, 8, 2);
  v.lookahead = 1;
  CHECK(schedule_problem(Schedule::interleaved, v).find("1f1b schedule only") != std::string::npos);
  CHECK(schedule_label(Schedule::one_f_one_b, 1, 2) == "1f1b(lookahead 2)");
}
