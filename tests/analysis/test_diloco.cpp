// DiLoCo-style training (training.diloco; docs/low-communication.md): the inner and sync steps
// simulated by the engine and amortised over a period of sync_every steps.
#include <doctest/doctest.h>

#include <cmath>

#include "analysis/diloco.hpp"
#include "inflect/analysis/simulate.hpp"
#include "inflect/plan/diloco.hpp"
#include "inflect/plan/memory.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

TEST_CASE("diloco: a blocking sync adds the outer all-reduce and the outer kernels, amortised over H steps") {
  // dp8 in K = 2 workers of 4 ranks (ranks 0-3 and 4-7); ZeRO-1 shards each worker's optimizer
  // states over its 4 ranks, so a rank syncs P = P_stage / 4 parameters with its counterpart in
  // the other worker (rank r with r + 4): an all-reduce of the fp32 pseudo-gradient, N = 4P bytes,
  // between two devices of one switch with 100 GB/s ports, latency 0, the ideal library. A ring
  // of two sends N/2 in its reduce-scatter and N/2 in its all-gather: N bytes through the port,
  // N / 100 GB/s. The four pairs use their own ports, so they do not share. Before it the
  // pseudo-gradient kernel moves 12 B/param and after it the outer Nesterov update 26 B/param, at
  // the toy's 1 TB/s. Nothing else runs then (the inner reduction is done, ZeRO-1's gather comes
  // after), so on this idle network the sync step is the inner step plus
  //   extra = 12P/1e12 + 4P/1e11 + 26P/1e12 s,
  // and with H = 4 the amortised step is inner + extra / 4.
  const plan::Experiment e = test::toy_diloco_experiment(4);
  const plan::MemoryEstimate mem = plan::estimate_memory(e, 8);
  const double p = mem.stages[0].params / 4;
  CHECK(plan::optimizer_shard_params(e, 8, mem.stages[0]) == doctest::Approx(p).epsilon(1e-12));
  const double extra = 12 * p / 1e12 + 4 * p / 1e11 + 26 * p / 1e12;
  const analysis::RunReport r = analysis::simulate(e);
  const auto& d = r.diloco;
  REQUIRE(d.modeled);
  MESSAGE("P = ", p, ", inner ", d.inner_step.value(), " s, sync ", d.sync_step.value(), " s, expected extra ", extra, " s");
  CHECK((d.sync_step - d.inner_step).value() == doctest::Approx(extra).epsilon(1e-6));
  CHECK(d.time_per_step.value() == doctest::Approx(d.inner_step.value() + extra / 4).epsilon(1e-6));
  CHECK(r.step_time.value() == d.time_per_step.value());
  CHECK(d.sync_share == doctest::Approx(extra / 4 / d.time_per_step.value()).epsilon(1e-6));
  // The breakdown of the mean step still adds up to it; the sync's wait is data-parallel.
  const auto& b = r.breakdown;
  CHECK((b.compute + b.exposed_comm.total() + b.bubble + b.other).value() == doctest::Approx(r.step_time.value()).epsilon(1e-9));
  // Rates follow the mean step.
  CHECK(*r.tokens_per_s == doctest::Approx(*r.tokens_per_step / r.step_time.value()).epsilon(1e-12));
  // Bytes: 4P per rank per sync; across workers a ring of 2 sends 2(K-1)/K = 1 x that, where
  // synchronous DP's hierarchical all-reduce sends 2(K-1)/K x the rank's quarter of the fp32
  // gradients, 4 x P_stage / 4 = 4P, every step: over H = 4 steps DiLoCo sends 1/4 of DP's.
  CHECK(d.outer_bytes_per_rank.value() == doctest::Approx(4 * p).epsilon(1e-12));
  CHECK(d.traffic_vs_dp == doctest::Approx(0.25).epsilon(1e-12));
}

TEST_CASE("diloco: the synchronous plan is simulated beside it, and time to target scales with the multiplier") {
  // time_to_target_ratio = M * time_per_step / synchronous_step (the same tokens per step). The
  // synchronous step all-reduces over all 8 ranks every step; DiLoCo's inner step over 4.
  plan::Experiment e = test::toy_diloco_experiment(16);
  analysis::RunReport r = analysis::simulate(e);
  REQUIRE(r.diloco.synchronous_step.has_value());
  plan::Experiment sync = e;
  sync.training.diloco.reset();
  const analysis::RunReport s = analysis::simulate(sync);
  CHECK(r.diloco.synchronous_step->value() == s.step_time.value());
  CHECK(*r.diloco.time_to_target_ratio == doctest::Approx(r.step_time.value() / s.step_time.value()).epsilon(1e-12));
  CHECK(r.diloco.statistical_efficiency.find("not modelled") == 0);
  CHECK(r.diloco.statistical_efficiency.find("assumption, not a result") != std::string::npos);
  e.training.diloco->token_multiplier = 1.5;
  e.training.diloco->token_multiplier_given = true;
  r = analysis::simulate(e);
  CHECK(*r.diloco.time_to_target_ratio == doctest::Approx(1.5 * r.step_time.value() / s.step_time.value()).epsilon(1e-12));
  CHECK(r.diloco.statistical_efficiency.find("1.5 times the tokens") != std::string::npos);
}

TEST_CASE("diloco: syncing less often never slows the mean step") {
  // Blocking sync: mean = inner + (sync - inner) / H, and neither step depends on H.
  double last = 1e300;
  for (int h : {1, 2, 4, 8, 16, 64, 256}) {
    const analysis::RunReport r = analysis::simulate(test::toy_diloco_experiment(h));
    CAPTURE(h);
    CHECK(r.step_time.value() <= last);
    last = r.step_time.value();
  }
}

TEST_CASE("diloco: int8 sends a quarter of fp32's bytes, plus prime's lookup tables") {
  // none: 4 B/param. int8: 1 B/param and a 1 KiB table with each of the ring's 2K chunks
  // (kInt8ChunksPerRank = 2 per rank): (P + 2 * 2 * 1024) / (4P) for K = 2. fp16/bf16: half.
  // top-k at 1%: 0.01 P entries of 8 B = 0.08 P, each rank's own before the gather.
  const plan::MemoryEstimate mem = plan::estimate_memory(test::toy_diloco_experiment(4), 8);
  const double p = mem.stages[0].params / 4;
  auto bytes = [](plan::OuterCompression c) { return analysis::simulate(test::toy_diloco_experiment(4, 2, c)).diloco.outer_bytes_per_rank.value(); };
  const double none = bytes(plan::OuterCompression::none);
  CHECK(none == doctest::Approx(4 * p).epsilon(1e-12));
  CHECK(bytes(plan::OuterCompression::int8) / none == doctest::Approx((p + 4096) / (4 * p)).epsilon(1e-12));
  CHECK(bytes(plan::OuterCompression::int8) / none == doctest::Approx(0.25).epsilon(1e-4));
  CHECK(bytes(plan::OuterCompression::bf16) / none == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(bytes(plan::OuterCompression::topk) == doctest::Approx(std::ceil(0.01 * p) * 8).epsilon(1e-12));
  // Top-k is gathered: the collective carries the K ranks' entries, each rank sends (K-1) of them.
  plan::DilocoSpec d = *test::toy_diloco_experiment(4, 4, plan::OuterCompression::topk).training.diloco;
  const plan::OuterCollective o = plan::outer_collective(d, 1e6);
  CHECK(o.kind == workload::CollectiveKind::all_gather);
  CHECK(o.payload == 1e4 * 8);
  CHECK(o.bytes == 4 * o.payload);
  CHECK(o.sent == 3 * o.payload);
}

TEST_CASE("diloco: streaming fragments is never slower than blocking on a compute-bound step") {
  // The toy's step is compute-bound (ms of GEMMs, an all-reduce of tens of MB at 100 GB/s). With
  // F fragments, F of every H steps carry 1/F of the bytes and kernels, the all-reduce overlapped
  // with the step's compute; blocking puts all of it in line once.
  const double blocking = analysis::simulate(test::toy_diloco_experiment(8, 2, plan::OuterCompression::none, 1)).step_time.value();
  for (int f : {2, 4, 8}) {
    const analysis::RunReport r = analysis::simulate(test::toy_diloco_experiment(8, 2, plan::OuterCompression::none, f));
    CAPTURE(f);
    CHECK(r.step_time.value() <= blocking);
    // The fragment's all-reduce hides under the step: its sync step is within the outer kernels
    // (1/F of 38 B/param) of the inner step.
    const double p = plan::estimate_memory(test::toy_diloco_experiment(8), 8).stages[0].params / 4;
    CHECK((r.diloco.sync_step - r.diloco.inner_step).value() <= 38 * p / f / 1e12 * 1.01);
  }
}

TEST_CASE("diloco: amortise weighs every step figure and keeps the breakdown additive") {
  // Two hand-made reports: a 1 s inner step (0.9 compute, 0.1 exposed dp) and a 3 s sync step
  // (0.9 compute, 2.1 exposed dp), weighted 3/4 and 1/4: 1.5 s, 0.9 compute, 0.6 dp.
  analysis::RunReport inner, sync;
  for (auto* r : {&inner, &sync}) {
    r->devices = 8;
    r->tokens_per_step = 1000;
    r->model_flops_per_step = core::Flops(8e12);
    r->peak_tflops_per_gpu = 100;
    r->breakdown.compute = core::Seconds(0.9);
  }
  inner.step_time = core::Seconds(1);
  inner.breakdown.exposed_comm.dp = core::Seconds(0.1);
  sync.step_time = core::Seconds(3);
  sync.breakdown.exposed_comm.dp = core::Seconds(2.1);
  inner.power.modeled = sync.power.modeled = true;
  inner.power.avg_device = core::Watts(600);
  sync.power.avg_device = core::Watts(200);
  inner.power.energy_per_step = core::Joules(600 * 8);
  sync.power.energy_per_step = core::Joules(200 * 3 * 8);
  const analysis::RunReport r = analysis::amortise(inner, 0.75, sync, 0.25);
  CHECK(r.step_time.value() == doctest::Approx(1.5));
  CHECK(r.breakdown.compute.value() == doctest::Approx(0.9));
  CHECK(r.breakdown.exposed_comm.dp.value() == doctest::Approx(0.6));
  CHECK(*r.tokens_per_s == doctest::Approx(1000 / 1.5));
  // 8e12 FLOP / 1.5 s / 8 devices = 0.667 TFLOP/s per GPU; MFU 0.667 / 100.
  CHECK(*r.model_tflops_per_gpu == doctest::Approx(8.0 / 1.5 / 8));
  CHECK(*r.mfu == doctest::Approx(8.0 / 1.5 / 8 / 100));
  // Power weighted by time (0.75 s at 600 W, 0.75 s at 200 W: 400 W); energy by count:
  // 0.75 * 4800 + 0.25 * 4800 = 4800 J, = 400 W * 8 devices * 1.5 s.
  CHECK(r.power.avg_device.value() == doctest::Approx(400));
  CHECK(r.power.energy_per_step.value() == doctest::Approx(4800));
  CHECK(r.power.energy_per_token->value() == doctest::Approx(4.8));
}
