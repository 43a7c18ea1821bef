// Recorded traces replayed by the engine (workload/kineto_*.cpp imports them, docs/traces.md
// "Kineto"): the step the engine runs against the step the trace recorded.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "engine_fixtures.hpp"
#include "inflect/sim/engine.hpp"
#include "inflect/workload/trace_import.hpp"

using namespace inflect;

namespace {

const std::string kData = std::string(INFLECT_SOURCE_DIR) + "/tests/data/kineto/";

struct Replay {
  double simulated = 0, recorded = 0;
};

Replay replay(const std::string& file) {
  const auto t = workload::import_trace(workload::TraceFormat::kineto, kData + file, {});
  test::Rig rig(1);
  const auto r = sim::run_engine(t.graph, rig.topo, rig.compute);
  REQUIRE(t.summary.recorded_step.has_value());
  return {r.makespan.seconds(), t.summary.recorded_step->value()};
}

}  // namespace

// tests/data/kineto/handmade_rank0.json (worked out in tests/workload/test_kineto_import.cpp): the
// host's delays run 0 + 8 + 11 + 30 + 15 = 64 us to the synchronize, which waits for the
// all-reduce; that starts at 40 us (after the add: GEMM 0-30, add 30-40) and moves 2 MiB between
// two ranks of the toy node (100 GB/s ports: a ring all-reduce of two sends S = 2 MiB, 21 us), so
// it is done by 61 us and the synchronize returns at 64; then 3 us to the optimizer's launch and
// its 6 us: 73 us. The recorded step is 90 us: NCCL took 40 us there for the all-reduce, which the
// model times on the toy fabric instead.
TEST_CASE("kineto replay: the hand-written step") {
  const Replay r = replay("handmade_rank0.json");
  CHECK(r.simulated == doctest::Approx(73e-6).epsilon(1e-9));
  CHECK(r.recorded == doctest::Approx(90e-6));
}

// Real traces without collectives: the replay runs the recorded durations under the recorded
// dependencies, so it must come back to the step the GPU ran (HTA's event-sync trace: 258 us
// simulated, 263 recorded; its ROCm trace: 8,944 us simulated, 8,912 recorded).
TEST_CASE("kineto replay: HTA's traces come back within 2% of their recorded steps") {
  for (const char* f : {"hta_event_sync.json.gz", "hta_mi250_rocm.json.gz"}) {
    const Replay r = replay(f);
    INFO(f << ": simulated " << r.simulated * 1e6 << " us, recorded " << r.recorded * 1e6 << " us");
    CHECK(std::abs(r.simulated - r.recorded) < 0.02 * r.recorded);
  }
}
