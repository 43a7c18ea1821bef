#include <doctest/doctest.h>

#include <vector>

#include "inflect/workload/exec_graph.hpp"
#include "inflect/workload/rank_classes.hpp"

using namespace inflect;
using workload::CollectiveKind;
using workload::ExecutionGraph;
using workload::GroupId;
using workload::OpId;
using workload::OpType;
using workload::ParallelDim;
using workload::Phase;

namespace {

// Four ranks, two kernels, groups and collectives to pick from; each rank runs: compute, a
// collective on `first`, a collective on `second`, compute (each op after the one before).
struct Four {
  ExecutionGraph g;
  std::uint32_t k1 = 0, k2 = 0;
  std::uint8_t comp = 0, comm = 0;

  Four() {
    g.set_ranks(4, {0, 1, 2, 3}, {1, 1, 1, 1});
    comp = g.stream("compute");
    comm = g.stream("tp");
    core::KernelCost c;
    c.cls = core::KernelClass::memory;
    c.bytes = core::Bytes(1e6);
    k1 = g.add_kernel(workload::Kernel{"k1", c, {}});
    k2 = g.add_kernel(workload::Kernel{"k2", c, {}});
  }
  GroupId group(std::vector<workload::RankId> members) { return g.add_group(workload::Group{std::move(members), {}}); }
  std::uint32_t all_gather(GroupId grp, double bytes = 1e6, const char* name = "ag") {
    return g.add_collective(workload::Collective{CollectiveKind::all_gather, ParallelDim::tp, grp, core::Bytes(bytes), name});
  }
  void rank(int r, std::uint32_t first, std::uint32_t second, std::uint32_t kernel) {
    const auto base = static_cast<OpId>(g.ops().size());
    g.add_op(r, comp, OpType::compute, k1, Phase::forward, 0, 0, {});
    const std::vector<OpId> d1{base}, d2{base + 1}, d3{base + 2};
    g.add_op(r, comm, OpType::collective, first, Phase::forward, 0, 0, d1);
    g.add_op(r, comm, OpType::collective, second, Phase::forward, 0, 0, d2);
    g.add_op(r, comp, OpType::compute, kernel, Phase::forward, 0, 0, d3);
  }
  workload::RankClasses classes() const { return workload::rank_classes(g, workload::RankOps(g)); }
};

}  // namespace

TEST_CASE("rank_classes: ranks whose ops are the same up to their groups form one class") {
  // Ranks 0 and 1 call their TP pair {0,1} then the DP group {0,2}/{1,3}; ranks 2 and 3 likewise
  // on their own groups. All four copy rank 0: one class, two roles (the TP group, the DP group).
  Four t;
  const GroupId tp01 = t.group({0, 1}), tp23 = t.group({2, 3}), dp02 = t.group({0, 2}), dp13 = t.group({1, 3});
  const auto tp_a = t.all_gather(tp01), tp_b = t.all_gather(tp23);
  const auto dp_a = t.all_gather(dp02), dp_b = t.all_gather(dp13);
  t.rank(0, tp_a, dp_a, t.k2);
  t.rank(1, tp_a, dp_b, t.k2);
  t.rank(2, tp_b, dp_a, t.k2);
  t.rank(3, tp_b, dp_b, t.k2);
  const auto rc = t.classes();
  CHECK(rc.classes() == 1);
  CHECK(rc.class_of == std::vector<std::uint32_t>{0, 0, 0, 0});
  CHECK(rc.representative == std::vector<std::uint32_t>{0});
  const auto roles = rc.roles(0);
  CHECK(std::vector<GroupId>(roles.begin(), roles.end()) == std::vector<GroupId>{tp01, dp02});
  const auto three = rc.binding(3);
  CHECK(std::vector<GroupId>(three.begin(), three.end()) == std::vector<GroupId>{tp23, dp13});
}

TEST_CASE("rank_classes: another kernel, another size or groups that do not map one-to-one make another class") {
  Four t;
  const GroupId ga = t.group({0, 1}), gb = t.group({0, 1}), gc = t.group({2, 3}), gd = t.group({2, 3});
  const auto a = t.all_gather(ga), b = t.all_gather(gb);
  t.rank(0, a, b, t.k1);
  SUBCASE("a different kernel") {
    t.rank(1, a, b, t.k2);
    CHECK(t.classes().class_of[1] == 1);
  }
  SUBCASE("a collective of another size") {
    t.rank(1, a, t.all_gather(gb, 2e6), t.k1);
    CHECK(t.classes().classes() == 3);  // ranks 2 and 3 have no ops: a third class, empty
  }
  SUBCASE("a collective of another name") {
    t.rank(1, a, t.all_gather(gb, 1e6, "other"), t.k1);
    CHECK(t.classes().class_of[1] == 1);
  }
  SUBCASE("two of the first rank's groups on one group") {
    // Rank 0 calls ga then gb; rank 2 calls gc twice (two collective entries, one group): the k-th
    // call on gc would match both sequences at once, so it is not a copy.
    t.rank(2, t.all_gather(gc), t.all_gather(gc), t.k1);
    CHECK(t.classes().class_of[2] != 0);
  }
  SUBCASE("one collective where the first rank calls two") {
    const auto c = t.all_gather(gc);
    t.rank(2, c, c, t.k1);
    CHECK(t.classes().class_of[2] != 0);
  }
  SUBCASE("the same ops on two other groups are a copy") {
    t.rank(2, t.all_gather(gc), t.all_gather(gd), t.k1);
    CHECK(t.classes().class_of[2] == 0);
  }
}

TEST_CASE("rank_classes: ranks whose ops interleave are compared in their issue order") {
  // Ranks 0 and 1 add their ops alternately; RankOps lists each rank's in order.
  Four t;
  const GroupId g01 = t.group({0, 1});
  const auto c = t.all_gather(g01);
  for (int i = 0; i < 2; ++i)
    for (int r = 0; r < 2; ++r) {
      const std::vector<OpId> none;
      t.g.add_op(r, i == 0 ? t.comp : t.comm, i == 0 ? OpType::compute : OpType::collective, i == 0 ? t.k1 : c,
                 Phase::forward, 0, 0, none);
    }
  t.g.set_ranks(2, {0, 1}, {1, 1});
  const workload::RankOps ops(t.g);
  CHECK(ops.count(1) == 2);
  CHECK(ops.id(1, 0) == 1);
  CHECK(ops.id(1, 1) == 3);
  CHECK(ops.position(1, 3) == 1);
  const auto rc = workload::rank_classes(t.g, ops);
  CHECK(rc.class_of == std::vector<std::uint32_t>{0, 0});
}

TEST_CASE("rank_classes: a replica stored by end_rank is in its kept rank's class, on its own groups") {
  // Rank 2 copies rank 0 on its own pair's group (end_rank stores it as a replica); rank 1 differs.
  Four t;
  const GroupId g01 = t.group({0, 1}), g23 = t.group({2, 3});
  const auto c01 = t.all_gather(g01), d01 = t.all_gather(g01, 1e6, "second");
  const auto c23 = t.all_gather(g23), d23 = t.all_gather(g23, 1e6, "second");
  t.rank(0, c01, d01, t.k1);
  CHECK_FALSE(t.g.end_rank(0));
  t.rank(1, c01, d01, t.k2);
  CHECK_FALSE(t.g.end_rank(1));
  t.rank(2, c23, d23, t.k1);
  CHECK(t.g.end_rank(2));
  t.rank(3, c23, d23, t.k2);
  CHECK(t.g.end_rank(3));
  const workload::RankOps ops(t.g);
  CHECK(ops.is_replica(2));
  CHECK(ops.id(2, 0) == t.g.ops().size());  // a replica's ops follow the stored ones
  const auto rc = workload::rank_classes(t.g, ops);
  CHECK(rc.class_of == std::vector<std::uint32_t>{0, 1, 0, 1});
  const auto two = rc.binding(2);
  CHECK(std::vector<GroupId>(two.begin(), two.end()) == std::vector<GroupId>{g23});
}
