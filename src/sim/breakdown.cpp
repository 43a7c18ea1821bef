#include "sim/breakdown.hpp"

#include <algorithm>

namespace inflect::sim {

using core::Time;

Breakdown::Breakdown(const RankTemplates& t, RankState& state, std::vector<char> across_sites)
    : t_(t), state_(state), across_sites_(std::move(across_sites)) {
  constexpr std::uint32_t kRing = 4;
  const std::uint32_t nkeys = t.keys().count(t.slots());
  recs_.assign(static_cast<std::size_t>(nkeys) * kRing, Record{});
  for (StreamKey k(0); k.value() < nkeys; k = StreamKey(k.value() + 1)) {
    state_.streams[k].ring_at = k.value() * kRing;
    state_.streams[k].ring_mask = kRing - 1;
  }
}

// Grow: a block twice the size at the end of the pool (the old one is left unused).
void Breakdown::grow_ring(StreamKey key) {
  StreamState& st = state_.streams[key];
  const std::uint32_t old_at = st.ring_at, old_size = st.ring_mask + 1;
  const auto at = static_cast<std::uint32_t>(recs_.size());
  recs_.resize(recs_.size() + 2 * old_size);
  for (std::uint32_t i = 0; i < old_size; ++i) {
    const Record old = recs_[old_at + i];
    if (!old.top.is_none()) recs_[at + ((old.top - st.first) & (2 * old_size - 1))] = old;
  }
  st.ring_at = at;
  st.ring_mask = 2 * old_size - 1;
}

// Walking back along bindings: while the binding collective's data was moving, the idle is exposed
// communication of its dimension; while it had arrived but waited for its peers, the idle is
// pipeline bubble (for pipeline point-to-point) or "other"; before it arrived, the idle is
// explained by what released *it*, recursively.
void Breakdown::attribute_gap(Slot slot, Time from, Time to, TemplateOp binding) {
  RankTimes& r = state_.slots[slot].times;
  while (to > from) {
    if (binding.is_none() || t_.op(binding).compute) {
      r.other += to - from;
      return;
    }
    const Record& rec = at(slot, binding);
    const auto dim = t_.op(binding).dim;
    auto overlap = [&](Time a, Time b) {
      Time lo = std::max(from, a), hi = std::min(to, b);
      return hi > lo ? hi - lo : Time::zero();
    };
    const Time exposed = overlap(rec.start, rec.end);
    r.exposed[static_cast<std::size_t>(dim)] += exposed;
    if (!across_sites_.empty() && across_sites_[t_.group(slot, t_.op(binding).role)]) r.exposed_across_sites += exposed;
    const Time waiting = overlap(rec.posted, rec.start);
    if (dim == workload::ParallelDim::pp) {
      r.bubble += waiting;
    } else {
      r.other += waiting;
      r.peer_wait += waiting;  // a member arrived later: a straggler (sim/variability)
    }
    // Idle after the collective ended (another stream's op released the compute op) is "other".
    r.other += overlap(std::max(rec.end, rec.posted), to);
    to = std::min(to, rec.posted);
    binding = rec.binding;
  }
}

}  // namespace inflect::sim
