#include "sim/collectives.hpp"

#include <fmt/format.h>

#include "inflect/core/error.hpp"

namespace inflect::sim {

Collectives::Collectives(const workload::ExecutionGraph& g, const RankTemplates& t, CollectiveLowering& lowering,
                         net::FlowNetwork& net, core::EventQueue& q)
    : g_(g), t_(t), lowering_(lowering), net_(net), q_(q) {
  const auto& groups = g.groups();
  needed_.assign(groups.size(), 0);
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (auto r : groups[gi].members)
      if (t.rank_ops().index_of(r) >= 0) ++needed_[gi];
  open_head_.assign(groups.size(), InstanceId::none());
}

void Collectives::mismatched_call(Slot slot, TemplateOp top, InstanceId inst) const {
  const auto& mine = g_.collectives()[t_.op(top).payload];
  const auto& first = g_.collectives()[t_.op(instances_[inst].top).payload];
  throw core::Error(core::ErrorKind::input,
                    fmt::format("op {} on rank {}: call {} on group {} is a {} of {} bytes{} but other members "
                                "made it a {} of {} bytes{}",
                                t_.original(slot, top), g_.simulated_ranks()[slot.value()], t_.op(top).ordinal,
                                instances_[inst].group, workload::to_string(mine.kind), mine.bytes.value(),
                                mine.then.empty() ? "" : " (with more after it)", workload::to_string(first.kind),
                                first.bytes.value(), first.then.empty() ? "" : " (with more after it)"));
}

}  // namespace inflect::sim
