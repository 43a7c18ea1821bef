#include "sim/speeds.hpp"

#include <algorithm>
#include <cmath>

namespace inflect::sim {

using workload::RankId;

Speeds::Speeds(const workload::ExecutionGraph& g, const hw::ComputeModel& model, const RankTemplates& t, const Variability& v)
    : t_(t), v_(v), enabled_(v.any()) {
  const std::uint32_t slots = t.slots();
  factor_.assign(slots, 1.0);
  if (!enabled_) return;
  const auto& sim = g.simulated_ranks();
  const workload::RankOps& ro = t.rank_ops();
  // Which ranks each simulated rank stands for: the non-simulated members of its synchronising
  // groups and of their mirrors (none in full fidelity, where every member is simulated and
  // groups have no mirrors).
  std::vector<char> synchronising(g.groups().size(), 0);
  for (const auto& c : g.collectives())
    if (c.dim != workload::ParallelDim::pp) synchronising[c.group] = 1;
  std::vector<std::vector<RankId>> stood(slots);
  for (std::size_t gi = 0; gi < g.groups().size(); ++gi) {
    if (!synchronising[gi]) continue;
    const workload::Group& grp = g.groups()[gi];
    std::vector<RankId> others;
    for (RankId m : grp.members)
      if (ro.index_of(m) < 0) others.push_back(m);
    for (const auto& mirror : grp.mirrors)
      for (RankId m : mirror)
        if (ro.index_of(m) < 0) others.push_back(m);
    if (others.empty()) continue;
    for (RankId r : grp.members)
      if (const std::int32_t s = ro.index_of(r); s >= 0) stood[static_cast<std::size_t>(s)].insert(stood[static_cast<std::size_t>(s)].end(), others.begin(), others.end());
  }
  member_begin_.reserve(slots + 1);
  for (std::uint32_t s = 0; s < slots; ++s) {
    auto& list = stood[s];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    member_begin_.push_back(static_cast<std::uint32_t>(members_.size()));
    const RankId own = sim[s];
    double f = v.device_factor(own);
    members_.emplace_back(own, f);
    for (RankId m : list) {
      const double fm = v.device_factor(m);
      members_.emplace_back(m, fm);
      f = std::max(f, fm);
    }
    factor_[Slot(s)] = f;
  }
  member_begin_.push_back(static_cast<std::uint32_t>(members_.size()));
  if (v.kernel_jitter > 0) {
    // A fused block draws once: the sum of independent per-part factors exp(j z_i) ~ 1 + j z_i has
    // the standard deviation j sqrt(sum d_i^2), i.e. a relative j sqrt(sum d_i^2) / sum d_i.
    sigma_.reserve(g.kernels().size());
    for (const auto& k : g.kernels()) {
      if (k.parts.empty()) {
        sigma_.push_back(v.kernel_jitter);
        continue;
      }
      double sum = 0, squares = 0;
      for (const auto& part : k.parts) {
        const double d = model.duration(part).seconds();
        sum += d;
        squares += d * d;
      }
      sigma_.push_back(sum > 0 ? v.kernel_jitter * std::sqrt(squares) / sum : v.kernel_jitter);
    }
  }
}

}  // namespace inflect::sim
