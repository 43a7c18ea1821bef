#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/sim/engine.hpp"
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

constexpr double kTick = 1e-12;  // one picosecond: durations are rounded once per op


struct Recorder : sim::Observer {
  std::vector<sim::OpSpan> spans;
  void on_op(const ExecutionGraph&, const sim::OpSpan& s) override { spans.push_back(s); }
};

}  // namespace

TEST_CASE("a chain of compute ops on one rank takes the sum of their durations") {
  // Three kernels of 1e7, 2e7, 3e7 bytes at 1 TB/s: 10 + 20 + 30 us = 60 us.
  ExecutionGraph g;
  g.set_ranks(1, {0}, {1});
  auto s = g.stream("compute");
  std::vector<OpId> none;
  g.add_op(0, s, OpType::compute, mem_kernel(g, 1e7), Phase::forward, 0, 0, none);
  g.add_op(0, s, OpType::compute, mem_kernel(g, 2e7), Phase::forward, 0, 0, none);
  g.add_op(0, s, OpType::compute, mem_kernel(g, 3e7), Phase::forward, 0, 0, none);
  Rig rig(1);
  auto r = sim::run_engine(g, rig.topo, rig.compute);
  CHECK(r.makespan.seconds() == doctest::Approx(60e-6).epsilon(1e-9));
  CHECK(r.ranks[0].compute.seconds() == doctest::Approx(60e-6).epsilon(1e-9));
  CHECK(r.ranks[0].other.count_ps() == 0);
}

TEST_CASE("send/recv: the receiver waits for the producer (bubble) and the transfer (exposed pp)") {
  // Rank 0 (node 0) computes 10 us, then sends 1e6 bytes to rank 8 (node 1) over the 10 GB/s NICs:
  // the route is nic_up(0), nic_down(8) under one leaf, so 1e6 / 1e10 = 100 us plus latencies.
  // With latency L = 1 us per element: path latency = nic 1 + switch 1 (NIC/switch latency on the
  // route) and the collective adds no overhead. Rank 8 then computes 10 us.
  ExecutionGraph g;
  g.set_ranks(16, {0, 8}, {1, 1});
  auto comp = g.stream("compute");
  auto pp = g.stream("pp");
  auto grp = g.add_group(workload::Group{{0, 8}, {}});
  auto coll = g.add_collective(workload::Collective{CollectiveKind::send_recv, ParallelDim::pp, grp, core::Bytes(1e6), "act"});
  auto k = mem_kernel(g, 1e7);
  std::vector<OpId> none;
  OpId a = g.add_op(0, comp, OpType::compute, k, Phase::forward, 0, 0, none);
  std::vector<OpId> da{a};
  g.add_op(0, pp, OpType::collective, coll, Phase::forward, -1, 0, da);
  OpId recv = g.add_op(8, pp, OpType::collective, coll, Phase::forward, -1, 0, none);
  std::vector<OpId> dr{recv};
  g.add_op(8, comp, OpType::compute, k, Phase::forward, 0, 0, dr);
  Rig rig(2, 1e-6);
  net::Path path = rig.topo.route(0, 8);
  const double transfer = 1e6 / 1e10;
  const double expected = 10e-6 + path.latency.value() + transfer + 10e-6;
  auto r = sim::run_engine(g, rig.topo, rig.compute);
  CHECK(r.makespan.seconds() == doctest::Approx(expected).epsilon(1e-6));
  const auto& rx = r.ranks[1];
  // Rank 8 idles 10 us waiting for the sender (bubble), then latency + transfer (exposed pp).
  CHECK(rx.bubble.seconds() == doctest::Approx(10e-6).epsilon(1e-6));
  CHECK(rx.exposed[static_cast<int>(ParallelDim::pp)].seconds() ==
        doctest::Approx(path.latency.value() + transfer).epsilon(1e-6));
  CHECK((rx.compute + rx.bubble + rx.other + rx.exposed[static_cast<int>(ParallelDim::pp)]).count_ps() == rx.finish.count_ps());
}

TEST_CASE("two transfers sharing a NIC take twice as long as one") {
  // Ranks 0 and 1 both send 1e6 bytes to rank 8: both routes end on nic_down(8) (10 GB/s), so each
  // gets 5 GB/s and both finish after 2e6 / 1e10 = 200 us (no latency in this rig).
  ExecutionGraph g;
  g.set_ranks(16, {0, 1, 8}, {1, 1, 1});
  auto s1 = g.stream("a");
  auto s2 = g.stream("b");
  auto g1 = g.add_group(workload::Group{{0, 8}, {}});
  auto g2 = g.add_group(workload::Group{{1, 8}, {}});
  auto c1 = g.add_collective(workload::Collective{CollectiveKind::send_recv, ParallelDim::pp, g1, core::Bytes(1e6), "x"});
  auto c2 = g.add_collective(workload::Collective{CollectiveKind::send_recv, ParallelDim::pp, g2, core::Bytes(1e6), "y"});
  std::vector<OpId> none;
  g.add_op(0, s1, OpType::collective, c1, Phase::forward, -1, 0, none);
  g.add_op(1, s1, OpType::collective, c2, Phase::forward, -1, 0, none);
  g.add_op(8, s1, OpType::collective, c1, Phase::forward, -1, 0, none);
  g.add_op(8, s2, OpType::collective, c2, Phase::forward, -1, 0, none);
  Rig rig(2);
  auto r = sim::run_engine(g, rig.topo, rig.compute);
  CHECK(r.makespan.seconds() == doctest::Approx(200e-6).epsilon(1e-6));
}

TEST_CASE("an all-reduce takes its lowered alpha-beta time when uncontended") {
  // 8 ranks of one node all-reduce 8e8 bytes on 100 GB/s ports: ring, 2*7/8*8e8 = 1.4e9 bytes per
  // port at 1e11 B/s = 14 ms.
  ExecutionGraph g;
  std::vector<workload::RankId> ranks{0, 1, 2, 3, 4, 5, 6, 7};
  g.set_ranks(8, ranks, std::vector<std::uint32_t>(8, 1));
  auto s = g.stream("tp");
  auto grp = g.add_group(workload::Group{ranks, {}});
  auto c = g.add_collective(workload::Collective{CollectiveKind::all_reduce, ParallelDim::tp, grp, core::Bytes(8e8), "ar"});
  std::vector<OpId> none;
  for (auto r : ranks) g.add_op(r, s, OpType::collective, c, Phase::forward, -1, 0, none);
  Rig rig(1);
  Recorder rec;
  sim::EngineOptions opt;
  opt.observer = &rec;
  auto r = sim::run_engine(g, rig.topo, rig.compute, opt);
  CHECK(r.makespan.seconds() == doctest::Approx(14e-3).epsilon(1e-6));
  CHECK(rec.spans.size() == 8);
}

TEST_CASE("a collective that a member never joins is reported as a deadlock, not a hang") {
  ExecutionGraph g;
  g.set_ranks(2, {0, 1}, {1, 1});
  auto s = g.stream("tp");
  auto grp = g.add_group(workload::Group{{0, 1}, {}});
  auto c = g.add_collective(workload::Collective{CollectiveKind::all_reduce, ParallelDim::tp, grp, core::Bytes(1e6), "ar"});
  std::vector<OpId> none;
  g.add_op(0, s, OpType::collective, c, Phase::forward, -1, 0, none);
  Rig rig(1);
  CHECK_THROWS_AS(sim::run_engine(g, rig.topo, rig.compute), core::Error);
}

TEST_CASE("mismatched calls on one group are an input error") {
  ExecutionGraph g;
  g.set_ranks(2, {0, 1}, {1, 1});
  auto s = g.stream("tp");
  auto grp = g.add_group(workload::Group{{0, 1}, {}});
  auto c1 = g.add_collective(workload::Collective{CollectiveKind::all_reduce, ParallelDim::tp, grp, core::Bytes(1e6), "a"});
  auto c2 = g.add_collective(workload::Collective{CollectiveKind::all_gather, ParallelDim::tp, grp, core::Bytes(1e6), "b"});
  std::vector<OpId> none;
  g.add_op(0, s, OpType::collective, c1, Phase::forward, -1, 0, none);
  g.add_op(1, s, OpType::collective, c2, Phase::forward, -1, 0, none);
  Rig rig(1);
  CHECK_THROWS_AS(sim::run_engine(g, rig.topo, rig.compute), core::Error);
}

TEST_CASE("symmetric mirrors weigh on shared links as the transfers they stand for") {
  // Full: ranks 0 and 1 each send 1e6 bytes to 8 and 9 respectively... on distinct NICs (rails), so
  // they do not share: 100 us. Mirror a transfer onto the SAME destination NIC instead: rank 0 ->
  // 8 with a mirror 1 -> 8 shares nic_down(8): the representative takes 200 us, as in the full run.
  ExecutionGraph g;
  g.set_ranks(16, {0, 8}, {2, 2});
  auto s = g.stream("pp");
  workload::Group grp{{0, 8}, {{1, 8}}};
  auto gid = g.add_group(grp);
  auto c = g.add_collective(workload::Collective{CollectiveKind::send_recv, ParallelDim::pp, gid, core::Bytes(1e6), "x"});
  std::vector<OpId> none;
  g.add_op(0, s, OpType::collective, c, Phase::forward, -1, 0, none);
  g.add_op(8, s, OpType::collective, c, Phase::forward, -1, 0, none);
  Rig rig(2);
  auto r = sim::run_engine(g, rig.topo, rig.compute);
  CHECK(r.makespan.seconds() == doctest::Approx(200e-6).epsilon(1e-6));
}

namespace {

// Ranks 0 and 1 (one node): a 10 us kernel, then `chain` all-gathers of 1e6 bytes on their group,
// each after the previous, then a 10 us kernel after the last. With `interleave` the two ranks'
// ops alternate in the graph (as an imported trace may have them) instead of rank by rank.
ExecutionGraph collective_chain(int chain, bool interleave) {
  ExecutionGraph g;
  g.set_ranks(2, {0, 1}, {1, 1});
  const auto comp = g.stream("compute");
  const auto tp = g.stream("tp");
  const auto k = mem_kernel(g, 1e7);
  const auto grp = g.add_group(workload::Group{{0, 1}, {}});
  const auto ag = g.add_collective(workload::Collective{CollectiveKind::all_gather, ParallelDim::tp, grp, core::Bytes(1e6), "ag"});
  std::vector<OpId> last(2);
  auto step = [&](int r, int i) {
    std::vector<OpId> d;
    if (i > 0) d.push_back(last[static_cast<std::size_t>(r)]);
    const bool compute = i == 0 || i == chain + 1;
    last[static_cast<std::size_t>(r)] =
        g.add_op(r, compute ? comp : tp, compute ? OpType::compute : OpType::collective, compute ? k : ag, Phase::forward, 0, 0, d);
  };
  if (interleave) {
    for (int i = 0; i <= chain + 1; ++i)
      for (int r = 0; r < 2; ++r) step(r, i);
  } else {
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i <= chain + 1; ++i) step(r, i);
  }
  return g;
}

}  // namespace

TEST_CASE("the breakdown walks back through many collectives: the idle between two kernels is all exposed TP") {
  // Twelve all-gathers run back to back while the compute stream idles: the second kernel's
  // binding chain walks back through all twelve (more than the engine's per-stream record ring
  // starts with, so it must grow). Both ranks arrive together, so nothing is waiting: the whole
  // gap between the kernels (step - 2 x 10 us) is exposed TP, and "other" is zero.
  Rig rig(1);
  const ExecutionGraph g = collective_chain(12, false);
  const auto r = sim::run_engine(g, rig.topo, rig.compute);
  const double gap = r.makespan.seconds() - 20e-6;
  CHECK(gap > 0);
  for (const auto& rank : r.ranks) {
    CHECK(rank.exposed[static_cast<std::size_t>(ParallelDim::tp)].seconds() == doctest::Approx(gap).epsilon(1e-9));
    CHECK(rank.other.count_ps() == 0);
    CHECK(rank.bubble.count_ps() == 0);
  }
}

TEST_CASE("ranks whose ops interleave in the graph run as when they come rank by rank") {
  Rig rig(1);
  const auto a = sim::run_engine(collective_chain(5, false), rig.topo, rig.compute);
  const auto b = sim::run_engine(collective_chain(5, true), rig.topo, rig.compute);
  CHECK(a.makespan == b.makespan);
  CHECK(a.events == b.events);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(a.ranks[i].exposed == b.ranks[i].exposed);
    CHECK(a.ranks[i].compute == b.ranks[i].compute);
  }
}

TEST_CASE("a kernel overlapping its rank's transfer is slowed for exactly the overlap (an activity whose rate changes)") {
  // Rank 0 starts a 100 us kernel (1e8 bytes at 1 TB/s) and posts a send of 1e6 bytes to rank 8,
  // which receives after its own 10 us kernel: the transfer moves over the 10 GB/s NICs from 10 us
  // to 110 us (no latency). With comm_interference 0.5 rank 0's kernel runs at 1/1.5 meanwhile: it
  // does 10 us of its work by t = 10 us, then 100 / 1.5 = 66.667 us by t = 110 us; the remaining
  // 23.333 us run at full speed, so it ends at 133.333 us (133,333,333 ps, rounded once) and
  // 33.333 us of its compute time is interference.
  ExecutionGraph g;
  g.set_ranks(16, {0, 8}, {1, 1});
  auto comp = g.stream("compute");
  auto pp = g.stream("pp");
  auto grp = g.add_group(workload::Group{{0, 8}, {}});
  auto coll = g.add_collective(workload::Collective{CollectiveKind::send_recv, ParallelDim::pp, grp, core::Bytes(1e6), "act"});
  std::vector<OpId> none;
  g.add_op(0, comp, OpType::compute, mem_kernel(g, 1e8), Phase::forward, 0, 0, none);
  g.add_op(0, pp, OpType::collective, coll, Phase::forward, -1, 0, none);
  const OpId before = g.add_op(8, comp, OpType::compute, mem_kernel(g, 1e7), Phase::forward, 0, 0, none);
  const std::vector<OpId> after{before};
  g.add_op(8, pp, OpType::collective, coll, Phase::forward, -1, 0, after);
  Rig rig(2);
  sim::EngineOptions opt;
  opt.comm_interference = 0.5;
  const auto r = sim::run_engine(g, rig.topo, rig.compute, opt);
  CHECK(r.ranks[0].finish.count_ps() == 133'333'333);
  CHECK(r.ranks[0].compute.count_ps() == 133'333'333);
  CHECK(r.ranks[0].interference.count_ps() == 33'333'333);
  CHECK(r.ranks[1].finish.count_ps() == 110'000'000);
}

TEST_CASE("a broadcast and a reduce take their chain's time: n over one port, not the ring all-reduce's 1.75 n") {
  // 8 ranks of one node, 8e8 bytes on 100 GB/s ports, no latency (the toy rig): NCCL's ring chain
  // from the root (members[0] = rank 3 here) puts n on the 7 edges it uses, so every loaded port
  // carries 8e8 bytes: 8 ms; the reduce, the same chain towards the root, too. Back to back on one
  // stream: 16 ms, each span reporting the ring.
  ExecutionGraph g;
  std::vector<workload::RankId> ranks{0, 1, 2, 3, 4, 5, 6, 7};
  g.set_ranks(8, ranks, std::vector<std::uint32_t>(8, 1));
  auto s = g.stream("dp");
  auto grp = g.add_group(workload::Group{{3, 4, 5, 6, 7, 0, 1, 2}, {}});
  auto bc = g.add_collective(workload::Collective{CollectiveKind::broadcast, ParallelDim::dp, grp, core::Bytes(8e8), "bcast"});
  auto rd = g.add_collective(workload::Collective{CollectiveKind::reduce, ParallelDim::dp, grp, core::Bytes(8e8), "reduce"});
  std::vector<OpId> none;
  for (auto r : ranks) {
    g.add_op(r, s, OpType::collective, bc, Phase::forward, -1, 0, none);
    g.add_op(r, s, OpType::collective, rd, Phase::backward, -1, 0, none);
  }
  Rig rig(1);
  Recorder rec;
  sim::EngineOptions opt;
  opt.observer = &rec;
  auto r = sim::run_engine(g, rig.topo, rig.compute, opt);
  CHECK(r.makespan.seconds() == doctest::Approx(16e-3).epsilon(1e-6));
  REQUIRE(rec.spans.size() == 16);
  for (const auto& sp : rec.spans) CHECK(std::string(sp.algorithm) == "ring");
}
