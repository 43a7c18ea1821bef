#pragma once
// Each simulated rank's kernel times under device variability (inflect/sim/variability.hpp,
// docs/variability.md).
//
// In full fidelity a rank runs at its own device's factor and every collective waits for its
// slowest member by itself. In symmetric fidelity a simulated rank stands for the ranks its
// groups' mirrors name; they reach every synchronising collective in step with it only if it runs
// at the speed of the slowest of them, so it takes the largest factor among itself and them: the
// ranks a stage's representative meets in a non-pipeline group (tensor-, context-, data- and
// expert-parallel, in the group or one of its mirrors) are the stage's ranks, which those groups
// tie together. Pipeline groups (send/recv between stages) are not synchronising and are left
// out: each stage's representative already runs at its own stage's pace. With per-kernel jitter
// each op takes the largest factor among them for that op, which is exact when every op ends at a
// synchronising collective and an upper bound otherwise (analysis runs jitter in full fidelity).
#include <cstdint>
#include <utility>
#include <vector>

#include "inflect/core/time.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/sim/variability.hpp"
#include "inflect/workload/exec_graph.hpp"
#include "sim/ids.hpp"
#include "sim/rank_templates.hpp"

namespace inflect::sim {

class Speeds {
 public:
  Speeds(const workload::ExecutionGraph& g, const hw::ComputeModel& model, const RankTemplates& t, const Variability& v);

  bool enabled() const { return enabled_; }
  /// Kernel `payload`, op `top` of rank `slot`, whose calibrated time is `base`: its time on the
  /// device(s) the rank stands for, rounded to the nearest picosecond.
  core::Time duration(Slot slot, TemplateOp top, std::uint32_t payload, core::Time base) const {
    double f = factor_[slot];
    if (v_.kernel_jitter > 0) {
      const double sigma = sigma_[payload];
      const std::uint32_t op = t_.position(top);
      f = 0;
      for (std::uint32_t i = member_begin_[slot.value()]; i < member_begin_[slot.value() + 1]; ++i)
        f = std::max(f, members_[i].second * v_.kernel_factor(members_[i].first, op, sigma));
    }
    return core::Time::ps(static_cast<core::Time::rep>(static_cast<double>(base.count_ps()) * f + 0.5));
  }
  /// The factor of rank `slot`'s device, or of the slowest rank it stands for.
  double factor(Slot slot) const { return factor_[slot]; }

 private:
  const RankTemplates& t_;
  const Variability& v_;
  bool enabled_ = false;
  IdVector<Slot, double> factor_;
  // Per slot: the ranks it stands for (itself first) and their device factors.
  std::vector<std::uint32_t> member_begin_;
  std::vector<std::pair<workload::RankId, double>> members_;
  std::vector<double> sigma_;  // per kernel: the jitter of its op (a fused block's is its parts' sum's)
};

}  // namespace inflect::sim
