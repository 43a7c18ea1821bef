#include "inflect/plan/placement.hpp"

#include "inflect/core/error.hpp"

namespace inflect::plan {

int Coords::get(Dim d) const {
  switch (d) {
    case Dim::tp: return tp;
    case Dim::cp: return cp;
    case Dim::pp: return pp;
    case Dim::dp: return dp;
  }
  return 0;
}

void Coords::set(Dim d, int v) {
  switch (d) {
    case Dim::tp: tp = v; break;
    case Dim::cp: cp = v; break;
    case Dim::pp: pp = v; break;
    case Dim::dp: dp = v; break;
  }
}

Mesh::Mesh(const ParallelPlan& plan, int dp) {
  size_ = {plan.tp, plan.cp, plan.pp, dp};
  core::check_invariant(plan.order.size() == 4, "placement order names all four dimensions");
  int stride = 1;
  for (Dim d : plan.order) {
    stride_[static_cast<std::size_t>(d)] = stride;
    stride *= size_[static_cast<std::size_t>(d)];
  }
  ranks_ = stride;
}

int Mesh::size(Dim d) const { return size_[static_cast<std::size_t>(d)]; }

workload::RankId Mesh::rank(const Coords& c) const {
  return c.tp * stride_[0] + c.cp * stride_[1] + c.pp * stride_[2] + c.dp * stride_[3];
}

Coords Mesh::coords(workload::RankId r) const {
  Coords c;
  for (int d = 0; d < 4; ++d) c.set(static_cast<Dim>(d), (r / stride_[static_cast<std::size_t>(d)]) % size_[static_cast<std::size_t>(d)]);
  return c;
}

std::vector<workload::RankId> Mesh::group(workload::RankId r, Dim vary) const {
  Coords c = coords(r);
  std::vector<workload::RankId> out;
  for (int i = 0; i < size(vary); ++i) {
    c.set(vary, i);
    out.push_back(rank(c));
  }
  return out;
}

std::vector<workload::RankId> Mesh::group2(workload::RankId r, Dim inner, Dim outer) const {
  Coords c = coords(r);
  std::vector<workload::RankId> out;
  for (int o = 0; o < size(outer); ++o)
    for (int i = 0; i < size(inner); ++i) {
      c.set(outer, o);
      c.set(inner, i);
      out.push_back(rank(c));
    }
  return out;
}

}  // namespace inflect::plan
