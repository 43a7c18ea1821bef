// cluster.thermal: the per-device factor on thermal resistance.
#include <doctest/doctest.h>

#include "inflect/plan/experiment.hpp"

using inflect::plan::ThermalVariation;

TEST_CASE("thermal variation: named hot devices, every node's local rank, and a seeded spread") {
  ThermalVariation v;
  CHECK_FALSE(v.any());
  CHECK(v.resistance_scale(5, 8) == 1.0);
  v.hot.push_back({-1, 3, 1.5});  // device 3 of every node
  v.hot.push_back({12, -1, 2.0}); // global device 12
  CHECK(v.any());
  CHECK(v.resistance_scale(3, 8) == 1.5);
  CHECK(v.resistance_scale(11, 8) == 1.5);
  CHECK(v.resistance_scale(12, 8) == 2.0);
  CHECK(v.resistance_scale(4, 8) == 1.0);
  // A spread: within [1 - s, 1 + s], the same for the same seed and device, different otherwise.
  ThermalVariation sp;
  sp.spread = 0.1;
  sp.seed = 7;
  double lo = 2, hi = 0;
  for (int d = 0; d < 1000; ++d) {
    const double f = sp.resistance_scale(d, 8);
    CHECK(f >= 0.9);
    CHECK(f <= 1.1);
    lo = std::min(lo, f);
    hi = std::max(hi, f);
  }
  CHECK(lo < 0.91);  // 1000 draws cover the range
  CHECK(hi > 1.09);
  CHECK(sp.resistance_scale(42, 8) == sp.resistance_scale(42, 8));
  ThermalVariation other = sp;
  other.seed = 8;
  CHECK(other.resistance_scale(42, 8) != sp.resistance_scale(42, 8));
  // A node's own inlet temperature, else the cluster's.
  ThermalVariation n;
  n.node_inlets.push_back({1, 48});
  CHECK(n.any());
  CHECK(n.inlet_c(1, 25) == 48);
  CHECK(n.inlet_c(0, 25) == 25);
}
