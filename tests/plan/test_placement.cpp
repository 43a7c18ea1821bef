#include <doctest/doctest.h>

#include "inflect/plan/placement.hpp"

using namespace inflect::plan;

TEST_CASE("default placement: TP innermost, then CP, PP, DP") {
  // tp=8, cp=1, pp=4, dp=2: rank = tp + 8*(pp + 4*dp). Coordinates (tp 3, pp 2, dp 1) -> 3 + 8*(2+4) = 51.
  ParallelPlan p;
  p.tp = 8;
  p.pp = 4;
  Mesh m(p, 2);
  CHECK(m.ranks() == 64);
  CHECK(m.rank(Coords{3, 0, 2, 1}) == 51);
  Coords c = m.coords(51);
  CHECK(c.tp == 3);
  CHECK(c.pp == 2);
  CHECK(c.dp == 1);
  // The TP group of rank 51 is one node's 8 consecutive ranks 48..55.
  auto tp = m.group(51, Dim::tp);
  REQUIRE(tp.size() == 8);
  CHECK(tp.front() == 48);
  CHECK(tp.back() == 55);
  // Its DP group strides by tp*pp = 32: {19, 51}.
  auto dp = m.group(51, Dim::dp);
  CHECK(dp == std::vector<int>{19, 51});
  // Its pipeline neighbours differ by 8.
  auto pp = m.group(51, Dim::pp);
  CHECK(pp == std::vector<int>{35, 43, 51, 59});
}

TEST_CASE("a named order moves DP inside PP") {
  // order [tp, dp, pp, cp] with tp=2, dp=2, pp=2: rank = tp + 2*dp + 4*pp.
  ParallelPlan p;
  p.tp = 2;
  p.pp = 2;
  p.order = {Dim::tp, Dim::dp, Dim::pp, Dim::cp};
  Mesh m(p, 2);
  CHECK(m.rank(Coords{1, 0, 1, 1}) == 1 + 2 + 4);
  CHECK(m.group(0, Dim::dp) == std::vector<int>{0, 2});
}
