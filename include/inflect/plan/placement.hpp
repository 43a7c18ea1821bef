#pragma once
// Placement of ranks on devices and the process groups of a plan.
//
// A rank has one coordinate per mesh dimension (tp, cp, pp, dp). The placement order lists the
// dimensions innermost first: with the default [tp, cp, pp, dp], TP peers are consecutive ranks
// (one node's NVLink domain), then context-parallel peers, then pipeline stages, then replicas.
// Rank r runs on device r (devices are numbered node by node).
#include <array>
#include <vector>

#include "inflect/plan/experiment.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::plan {

struct Coords {
  int tp = 0, cp = 0, pp = 0, dp = 0;
  int get(Dim d) const;
  void set(Dim d, int v);
};

class Mesh {
 public:
  /// Sizes from a validated plan (dp already derived); order from plan.order.
  Mesh(const ParallelPlan& plan, int dp);
  int size(Dim d) const;
  int ranks() const { return ranks_; }
  workload::RankId rank(const Coords& c) const;
  Coords coords(workload::RankId r) const;
  /// The ranks that share every coordinate of `r` except `vary`, ordered by that coordinate.
  std::vector<workload::RankId> group(workload::RankId r, Dim vary) const;
  /// Same, varying two dimensions (e.g. dp and cp for gradient reduction), `inner` fastest.
  std::vector<workload::RankId> group2(workload::RankId r, Dim inner, Dim outer) const;

 private:
  std::array<int, 4> size_{};
  std::array<int, 4> stride_{};
  int ranks_ = 0;
};

}  // namespace inflect::plan
