#include <doctest/doctest.h>

#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/workload/exec_graph.hpp"

using namespace inflect;
using workload::CollectiveKind;
using workload::ExecutionGraph;
using workload::GroupId;
using workload::OpId;
using workload::OpType;
using workload::ParallelDim;
using workload::Phase;

namespace {

// Four ranks in two "TP pairs" {0,1} {2,3}; rank r runs: compute k, all-gather on its pair's
// group, compute k (depending on both earlier ops). Each rank's ops are bracketed by end_rank.
struct Pairs {
  ExecutionGraph g;
  GroupId grp[2];
  std::uint32_t coll[2];
  std::uint32_t kernel = 0;
  std::uint8_t comp = 0, comm = 0;

  Pairs() {
    g.set_ranks(4, {0, 1, 2, 3}, {1, 1, 1, 1});
    comp = g.stream("compute");
    comm = g.stream("tp");
    core::KernelCost c;
    c.cls = core::KernelClass::memory;
    c.bytes = core::Bytes(1e6);
    kernel = g.add_kernel(workload::Kernel{"k", c, {}});
    for (int p = 0; p < 2; ++p) {
      grp[p] = g.add_group(workload::Group{{2 * p, 2 * p + 1}, {}});
      coll[p] = g.add_collective(workload::Collective{CollectiveKind::all_gather, ParallelDim::tp, grp[p], core::Bytes(1e6), "ag"});
    }
  }
  // Adds rank r's three ops; `bytes_coll` overrides its collective.
  void rank(int r, std::uint32_t c) {
    const OpId base = static_cast<OpId>(g.ops().size());
    g.add_op(r, comp, OpType::compute, kernel, Phase::forward, 0, 0, {});
    const std::vector<OpId> d1{base};
    g.add_op(r, comm, OpType::collective, c, Phase::forward, 0, 0, d1);
    const std::vector<OpId> d2{base, base + 1};
    g.add_op(r, comp, OpType::compute, kernel, Phase::forward, 0, 0, d2);
  }
};

}  // namespace

TEST_CASE("end_rank stores a rank that copies a kept one on its own groups as a replica") {
  Pairs t;
  t.rank(0, t.coll[0]);
  CHECK_FALSE(t.g.end_rank(0));  // the first rank is kept
  t.rank(1, t.coll[0]);
  CHECK(t.g.end_rank(1));        // same ops, same group: a replica
  t.rank(2, t.coll[1]);
  CHECK(t.g.end_rank(2));        // same ops on the other pair's group: a replica
  t.rank(3, t.coll[1]);
  CHECK(t.g.end_rank(3));
  // Stored: rank 0's three ops; the graph still has twelve.
  CHECK(t.g.ops().size() == 3);
  CHECK(t.g.op_count() == 12);
  REQUIRE(t.g.replicas().size() == 3);
  CHECK(t.g.replicas()[1].rank == 2);
  CHECK(t.g.replicas()[1].colls == std::vector<std::uint32_t>{t.coll[1]});
  t.g.validate();

  // op(): replica ops follow the kept ones, replica by replica, with their own rank and collective.
  const workload::Op o = t.g.op(3 + 3 + 1);  // rank 2's all-gather
  CHECK(o.rank == 2);
  CHECK(o.type == OpType::collective);
  CHECK(o.payload == t.coll[1]);
  CHECK(t.g.op_deps(3 + 3 + 2) == std::vector<OpId>{6, 7});  // rank 2's last op: its ops 0 and 1

  // expanded() is the graph built without end_rank: the ranks' ops in the order they were added.
  const ExecutionGraph e = t.g.expanded();
  REQUIRE(e.ops().size() == 12);
  CHECK(e.replicas().empty());
  for (int r = 0; r < 4; ++r) {
    CHECK(e.ops()[static_cast<std::size_t>(3 * r + 1)].rank == r);
    CHECK(e.ops()[static_cast<std::size_t>(3 * r + 1)].payload == t.coll[r / 2]);
    const auto d = e.deps(static_cast<OpId>(3 * r + 2));
    CHECK(std::vector<OpId>(d.begin(), d.end()) == std::vector<OpId>{static_cast<OpId>(3 * r), static_cast<OpId>(3 * r + 1)});
  }
  e.validate();
  // expanded_id() maps the stored numbering to expanded()'s: rank 2's all-gather is op 7 there.
  CHECK(t.g.expanded_id(3 + 3 + 1) == 7);
  CHECK(t.g.expanded_id(1) == 1);
}

TEST_CASE("end_rank keeps a rank that differs in a collective's size, its groups' pattern or its dependencies") {
  SUBCASE("a collective of another size") {
    Pairs t;
    const auto big = t.g.add_collective(workload::Collective{CollectiveKind::all_gather, ParallelDim::tp, t.grp[1], core::Bytes(2e6), "ag"});
    t.rank(0, t.coll[0]);
    t.g.end_rank(0);
    t.rank(2, big);
    CHECK_FALSE(t.g.end_rank(2));
    CHECK(t.g.ops().size() == 6);
  }
  SUBCASE("two calls on one group where the kept rank used two groups") {
    // Kept rank 0 calls group 0 then group 1 (one call each); rank 1 calls group 0 twice: the
    // engine matches calls per group by ordinal, so this is not a copy.
    Pairs t;
    const auto other = t.g.add_collective(workload::Collective{CollectiveKind::all_gather, ParallelDim::tp, t.grp[1], core::Bytes(1e6), "ag"});
    auto two_calls = [&](int r, std::uint32_t a, std::uint32_t b) {
      const std::vector<OpId> none;
      t.g.add_op(r, t.comm, OpType::collective, a, Phase::forward, 0, 0, none);
      t.g.add_op(r, t.comm, OpType::collective, b, Phase::forward, 0, 0, none);
    };
    t.g.set_ranks(4, {0, 1, 2, 3}, {1, 1, 1, 1});
    two_calls(1, t.coll[0], other);
    t.g.end_rank(1);
    const auto same = t.g.add_collective(workload::Collective{CollectiveKind::all_gather, ParallelDim::tp, t.grp[0], core::Bytes(1e6), "ag"});
    two_calls(0, t.coll[0], same);  // two distinct collective ids, one group
    CHECK_FALSE(t.g.end_rank(0));
  }
  SUBCASE("other dependencies") {
    Pairs t;
    t.rank(0, t.coll[0]);
    t.g.end_rank(0);
    const std::vector<OpId> none;
    t.g.add_op(1, t.comp, OpType::compute, t.kernel, Phase::forward, 0, 0, none);
    t.g.add_op(1, t.comm, OpType::collective, t.coll[0], Phase::forward, 0, 0, none);  // no dep
    const std::vector<OpId> d{3, 4};
    t.g.add_op(1, t.comp, OpType::compute, t.kernel, Phase::forward, 0, 0, d);
    CHECK_FALSE(t.g.end_rank(1));
  }
  SUBCASE("ops of another rank before end_rank are an error") {
    Pairs t;
    t.rank(0, t.coll[0]);
    CHECK_THROWS_AS(t.g.end_rank(1), core::Error);
  }
}

TEST_CASE("add_replica adds a known copy as end_rank would, and refuses what is not one") {
  // Built by end_rank (every rank emitted) and by add_replica (only rank 0 emitted), the graphs
  // must be the same.
  Pairs a, b;
  for (int r = 0; r < 4; ++r) {
    a.rank(r, a.coll[r / 2]);
    a.g.end_rank(r);
  }
  b.rank(0, b.coll[0]);
  b.g.end_rank(0);
  for (int r = 1; r < 4; ++r) b.g.add_replica(r, 0, {b.coll[r / 2]});
  REQUIRE(b.g.replicas().size() == a.g.replicas().size());
  for (std::size_t i = 0; i < a.g.replicas().size(); ++i) {
    CHECK(b.g.replicas()[i].rank == a.g.replicas()[i].rank);
    CHECK(b.g.replicas()[i].colls == a.g.replicas()[i].colls);
    CHECK(b.g.replicas()[i].offset == a.g.replicas()[i].offset);
    CHECK(b.g.replicas()[i].expanded_first == a.g.replicas()[i].expanded_first);
  }
  CHECK(b.g.op_count() == 12);
  b.g.validate();

  Pairs t;
  t.rank(0, t.coll[0]);
  t.g.end_rank(0);
  SUBCASE("a collective of another size") {
    const auto big = t.g.add_collective(workload::Collective{CollectiveKind::all_gather, ParallelDim::tp, t.grp[1], core::Bytes(2e6), "ag"});
    CHECK_THROWS_AS(t.g.add_replica(2, 0, {big}), core::Error);
  }
  SUBCASE("a group the rank is not in") { CHECK_THROWS_AS(t.g.add_replica(2, 0, {t.coll[0]}), core::Error); }
  SUBCASE("the wrong number of collectives, or no such kept rank") {
    CHECK_THROWS_AS(t.g.add_replica(1, 0, {}), core::Error);
    CHECK_THROWS_AS(t.g.add_replica(1, 1, {t.coll[0]}), core::Error);
  }
  SUBCASE("ops added since the last end_rank") {
    t.rank(1, t.coll[0]);
    CHECK_THROWS_AS(t.g.add_replica(2, 0, {t.coll[1]}), core::Error);
  }
  CHECK(t.g.replicas().empty());
}
