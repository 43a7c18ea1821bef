// Device speed variability and per-kernel jitter in the engine (sim/variability.hpp,
// docs/variability.md): the draws, a straggler worked out by hand, and the symmetric-fidelity rule
// (a representative runs at the pace of the slowest rank its synchronising groups tie it to).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "inflect/sim/engine.hpp"
#include "inflect/sim/variability.hpp"
#include "engine_fixtures.hpp"

using namespace inflect;
using workload::CollectiveKind;
using workload::ExecutionGraph;
using workload::OpId;
using workload::OpType;
using workload::ParallelDim;
using workload::Phase;
using test::mem_kernel;
using test::Rig;

namespace {


// Ranks 0 and 1: a 1 ms kernel, an all-reduce of 1e6 bytes after it, a 1 ms kernel after that.
ExecutionGraph kernel_allreduce_kernel() {
  ExecutionGraph g;
  g.set_ranks(2, {0, 1}, {1, 1});
  const auto comp = g.stream("compute");
  const auto dp = g.stream("dp");
  const auto k = mem_kernel(g, 1e9);
  const auto grp = g.add_group(workload::Group{{0, 1}, {}});
  const auto ar = g.add_collective(workload::Collective{CollectiveKind::all_reduce, ParallelDim::dp, grp, core::Bytes(1e6), "ar"});
  for (workload::RankId r : {0, 1}) {
    std::vector<OpId> none;
    const OpId a = g.add_op(r, comp, OpType::compute, k, Phase::forward, 0, 0, none);
    std::vector<OpId> da{a};
    const OpId c = g.add_op(r, dp, OpType::collective, ar, Phase::forward, -1, 0, da);
    std::vector<OpId> dc{c};
    g.add_op(r, comp, OpType::compute, k, Phase::forward, 0, 0, dc);
  }
  return g;
}

}  // namespace

TEST_CASE("variability: draws are pure functions of (seed, device), lognormal with the configured spread") {
  sim::Variability v;
  v.gpu_speed_spread = 0.02;
  v.seed = 1;
  sim::Variability same = v, other = v;
  other.seed = 2;
  // The same seed gives the same factor every time; another seed another one.
  int differ = 0;
  for (workload::RankId d = 0; d < 64; ++d) {
    CHECK(v.device_factor(d) == same.device_factor(d));
    differ += v.device_factor(d) != other.device_factor(d);
  }
  CHECK(differ == 64);
  // ln(factor) over 200k devices: mean 0 (the median device is the calibrated one) and standard
  // deviation 0.02; the sample mean's own standard error is 0.02 / sqrt(2e5) = 4.5e-5 and the
  // sample deviation's 0.02 / sqrt(4e5) = 3.2e-5, so 2e-4 is over four of them.
  double sum = 0, squares = 0;
  const int n = 200000;
  for (workload::RankId d = 0; d < n; ++d) {
    const double l = std::log(v.device_factor(d));
    sum += l;
    squares += l * l;
  }
  const double mean = sum / n;
  CHECK(std::abs(mean) < 2e-4);
  CHECK(std::sqrt(squares / n - mean * mean) == doctest::Approx(0.02).epsilon(0.01));
  // Off is exactly 1, and a named slow device multiplies its draw.
  CHECK(sim::Variability{}.device_factor(7) == 1.0);
  sim::Variability slow;
  slow.slow = {{3, 1.25}};
  CHECK(slow.device_factor(3) == 1.25);
  CHECK(slow.device_factor(2) == 1.0);
  // A kernel's jitter: pure in (seed, rank, op), different ops differ.
  CHECK(v.kernel_factor(5, 17, 0.05) == same.kernel_factor(5, 17, 0.05));
  CHECK(v.kernel_factor(5, 17, 0.05) != v.kernel_factor(5, 18, 0.05));
  CHECK(v.kernel_factor(5, 17, 0) == 1.0);
}

TEST_CASE("variability: a rank 0.9x as fast makes its peer wait 0.111 ms at the all-reduce") {
  // Rank 1 runs at speed 0.9: its kernels take 1/0.9 = 1.1111x, its first 1 ms kernel
  // 1e9 ps / 0.9 = 1,111,111,111.1 ps, rounded to 1,111,111,111 ps. Rank 0 finishes its kernel at
  // 1 ms and posts the all-reduce, which starts only when rank 1 arrives: rank 0's compute stream
  // idles 111,111,111 ps (0.111 ms) waiting for a straggler, then the all-reduce's own time A
  // (exposed DP on both ranks), then each runs its second kernel. Step = 1.111 ms + A + 1.111 ms
  // (rank 1 finishes last).
  Rig rig;
  const ExecutionGraph g = kernel_allreduce_kernel();
  const sim::EngineResult uniform = sim::run_engine(g, rig.topo, rig.compute);
  const core::Time all_reduce = uniform.makespan - core::Time::ps(2'000'000'000);  // step - 2 kernels
  sim::EngineOptions opt;
  opt.variability.slow = {{1, 1 / 0.9}};
  const sim::EngineResult r = sim::run_engine(g, rig.topo, rig.compute, opt);
  const core::Time slow_kernel = core::Time::ps(1'111'111'111);
  CHECK(r.makespan == slow_kernel + all_reduce + slow_kernel);
  const sim::RankTimes& fast = r.ranks[0];
  const sim::RankTimes& slow = r.ranks[1];
  CHECK(fast.peer_wait == core::Time::ps(111'111'111));
  CHECK(fast.other == fast.peer_wait);  // the wait is all its "other"
  CHECK(fast.device_slowdown == core::Time::zero());
  CHECK(slow.peer_wait == core::Time::zero());
  CHECK(slow.device_slowdown == core::Time::ps(2 * 111'111'111));
  CHECK(slow.compute == slow_kernel + slow_kernel);
  // Both see the all-reduce's transfer as exposed DP, the same as in the uniform run.
  CHECK(fast.exposed[static_cast<std::size_t>(ParallelDim::dp)] == uniform.ranks[0].exposed[static_cast<std::size_t>(ParallelDim::dp)]);
  // Without variability nothing moves: the options' default is off.
  CHECK(uniform.ranks[0].peer_wait == core::Time::zero());
  CHECK(uniform.ranks[0].device_slowdown == core::Time::zero());
}

TEST_CASE("variability: a symmetric representative runs at the pace of the slowest rank it stands for") {
  // Rank 0 stands for ranks 0..3: its data-parallel group {0, 1} has the mirror {2, 3}. Device 3
  // is 1.25x slow: in full fidelity everybody would wait for it at every all-reduce, so the
  // representative's 1 ms kernels take 1.25 ms each (2.5 ms of compute, 0.5 ms of it variability).
  // A pipeline group's mirror ({0, 4} mirrored by {3, 7}) does not synchronise the stage (the
  // other stage's representative runs at its own pace), so a slow rank 7 there changes nothing.
  auto build = [](bool through_pipeline_only) {
    ExecutionGraph g;
    g.set_ranks(8, {0, 4}, {4, 4});
    const auto comp = g.stream("compute");
    const auto dp = g.stream("dp");
    const auto pp = g.stream("pp");
    const auto k = mem_kernel(g, 1e9);
    const auto dgrp = g.add_group(workload::Group{{0, 1}, {{2, 3}}});
    const auto dgrp4 = g.add_group(workload::Group{{4, 5}, {{6, 7}}});
    const auto pgrp = g.add_group(workload::Group{{0, 4}, {{1, 5}, {2, 6}, {3, 7}}});
    const auto ar = g.add_collective(workload::Collective{CollectiveKind::all_reduce, ParallelDim::dp, dgrp, core::Bytes(1e3), "ar"});
    const auto ar4 = g.add_collective(workload::Collective{CollectiveKind::all_reduce, ParallelDim::dp, dgrp4, core::Bytes(1e3), "ar"});
    const auto send = g.add_collective(workload::Collective{CollectiveKind::send_recv, ParallelDim::pp, pgrp, core::Bytes(1e3), "x"});
    std::vector<OpId> none;
    for (workload::RankId r : {0, 4}) {
      const OpId a = g.add_op(r, comp, OpType::compute, k, Phase::forward, 0, 0, none);
      std::vector<OpId> da{a};
      if (!through_pipeline_only) {
        const OpId c = g.add_op(r, dp, OpType::collective, r == 0 ? ar : ar4, Phase::forward, -1, 0, da);
        da = {c};
      }
      const OpId b = g.add_op(r, comp, OpType::compute, k, Phase::forward, 0, 0, da);
      (void)b;
    }
    g.add_op(0, pp, OpType::collective, send, Phase::forward, -1, 0, none);
    g.add_op(4, pp, OpType::collective, send, Phase::forward, -1, 0, none);
    return g;
  };
  Rig rig;
  sim::EngineOptions opt;
  opt.variability.slow = {{3, 1.25}, {7, 1.5}};
  {
    const ExecutionGraph g = build(false);
    const sim::EngineResult r = sim::run_engine(g, rig.topo, rig.compute, opt);
    CHECK(r.ranks[0].compute == core::Time::ps(2'500'000'000));
    CHECK(r.ranks[0].device_slowdown == core::Time::ps(500'000'000));
    // Rank 4 stands for 4..7 through its own data-parallel group: 1.5x.
    CHECK(r.ranks[1].compute == core::Time::ps(3'000'000'000));
  }
  {
    // Without the data-parallel all-reduces only the pipeline group links the ranks: no one
    // stands for device 3 or 7, so both representatives run at the calibrated speed.
    ExecutionGraph g;
    g.set_ranks(8, {0, 4}, {4, 4});
    const auto comp = g.stream("compute");
    const auto pp = g.stream("pp");
    const auto k = mem_kernel(g, 1e9);
    const auto pgrp = g.add_group(workload::Group{{0, 4}, {{1, 5}, {2, 6}, {3, 7}}});
    const auto send = g.add_collective(workload::Collective{CollectiveKind::send_recv, ParallelDim::pp, pgrp, core::Bytes(1e3), "x"});
    std::vector<OpId> none;
    for (workload::RankId r : {0, 4}) g.add_op(r, comp, OpType::compute, k, Phase::forward, 0, 0, none);
    g.add_op(0, pp, OpType::collective, send, Phase::forward, -1, 0, none);
    g.add_op(4, pp, OpType::collective, send, Phase::forward, -1, 0, none);
    const sim::EngineResult r = sim::run_engine(g, rig.topo, rig.compute, opt);
    CHECK(r.ranks[0].compute == core::Time::ps(1'000'000'000));
    CHECK(r.ranks[1].compute == core::Time::ps(1'000'000'000));
  }
}

TEST_CASE("variability: per-kernel jitter averages out over many kernels, and is reproducible") {
  // One rank, 1,000 kernels of 1 ms with jitter 0.05: each takes exp(0.05 z) ms, whose mean is
  // exp(0.05^2 / 2) = 1.00125, so the chain takes 1,001.25 ms on average with a standard
  // deviation of sqrt(1000) x 0.05 ms = 1.6 ms; 8 ms is five of them.
  ExecutionGraph g;
  g.set_ranks(1, {0}, {1});
  const auto comp = g.stream("compute");
  const auto k = mem_kernel(g, 1e9);
  std::vector<OpId> none;
  for (int i = 0; i < 1000; ++i) g.add_op(0, comp, OpType::compute, k, Phase::forward, 0, 0, none);
  Rig rig;
  sim::EngineOptions opt;
  opt.variability.kernel_jitter = 0.05;
  opt.variability.seed = 7;
  const sim::EngineResult a = sim::run_engine(g, rig.topo, rig.compute, opt);
  const sim::EngineResult b = sim::run_engine(g, rig.topo, rig.compute, opt);
  CHECK(a.makespan == b.makespan);
  CHECK(a.makespan.seconds() == doctest::Approx(1.00125).epsilon(0.008));
  CHECK(a.makespan != core::Time::ps(1'000'000'000'000));
  CHECK(a.ranks[0].device_slowdown == a.makespan - core::Time::ps(1'000'000'000'000));
  opt.variability.seed = 8;
  CHECK(sim::run_engine(g, rig.topo, rig.compute, opt).makespan != a.makespan);
}

TEST_CASE("variability: a fused block draws once with the spread its parts' sum would have") {
  // A block of two equal 0.5 ms parts: the sum of two independent factors exp(j z_i) x 0.5 ms has
  // a standard deviation of j x sqrt(2 x 0.5^2) ms = j x 0.707 ms, so the block draws
  // exp(j / sqrt(2) z). With j = 0.1 over 2,000 blocks, ln(block time / 1 ms) has a sample
  // deviation of 0.0707 (within 5%: the deviation's standard error is 1.6%).
  ExecutionGraph g;
  g.set_ranks(1, {0}, {1});
  const auto comp = g.stream("compute");
  core::KernelCost half;
  half.cls = core::KernelClass::memory;
  half.bytes = core::Bytes(5e8);
  const auto block = g.add_kernel(workload::Kernel{"block", half, {half, half}});
  std::vector<OpId> none;
  const int n = 2000;
  for (int i = 0; i < n; ++i) g.add_op(0, comp, OpType::compute, block, Phase::forward, 0, 0, none);
  struct Spans : sim::Observer {
    std::vector<double> logs;
    void on_op(const ExecutionGraph&, const sim::OpSpan& s) override { logs.push_back(std::log((s.end - s.start).seconds() / 1e-3)); }
  } spans;
  Rig rig;
  sim::EngineOptions opt;
  opt.observer = &spans;
  opt.variability.kernel_jitter = 0.1;
  sim::run_engine(g, rig.topo, rig.compute, opt);
  REQUIRE(spans.logs.size() == n);
  double sum = 0, squares = 0;
  for (double l : spans.logs) {
    sum += l;
    squares += l * l;
  }
  const double mean = sum / n;
  CHECK(std::sqrt(squares / n - mean * mean) == doctest::Approx(0.1 / std::sqrt(2.0)).epsilon(0.05));
}
