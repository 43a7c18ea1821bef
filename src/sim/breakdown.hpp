#pragma once
// The step-time breakdown: where each rank's compute-stream idle time went.
//
// Whenever the compute stream idles, the idle is attributed by walking back along what released
// the op that ended it (attribute_gap). What the walk needs of past collective ops — when each was
// posted, when its data moved, what released it — lives in a small ring per stream (compute ops
// keep no record: the walk stops at them), which doubles when a record the walk may still reach
// would be overwritten.
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/core/time.hpp"
#include "sim/ids.hpp"
#include "sim/rank_state.hpp"
#include "sim/rank_templates.hpp"

namespace inflect::sim {

/// What the breakdown needs of a past collective op.
struct Record {
  core::Time posted;                   // when it reached its stream head with deps done
  core::Time start;                    // when data began to move
  core::Time end = core::Time::max();  // when it finished
  TemplateOp top;                      // which op (the ring is per rank and stream)
  TemplateOp binding;                  // the op that released it (same rank)
};

class Breakdown {
 public:
  /// `across_sites[g]`: group g spans several sites (its exposed time is also counted as across
  /// sites); empty on a cluster of one site.
  Breakdown(const RankTemplates& t, RankState& state, std::vector<char> across_sites = {});

  /// A record for collective `top` on stream `key`, replacing the oldest in the ring. A replaced
  /// record must be one the walk can no longer reach: attribute_gap walks back only through ops
  /// that finished after the rank's compute stream last went idle (each op it visits released the
  /// previous one, i.e. finished when that one was posted, after the gap began). If the oldest may
  /// still be reached, the ring doubles.
  Record& put(StreamKey key, TemplateOp top) {
    const StreamState& st = state_.streams[key];
    const SlotState& sl = state_.slots[t_.keys().slot(key)];
    const std::uint32_t pos = top - st.first;
    while (true) {
      Record& r = recs_[st.ring_at + (pos & st.ring_mask)];
      if (r.top.is_none() || r.end <= sl.idle_since) return r;
      grow_ring(key);
    }
  }
  /// The record of rank `slot`'s collective `top`, which must still be in its ring.
  Record& at(Slot slot, TemplateOp top) {
    const StreamState& st = state_.streams[t_.keys().key(slot, t_.op(top).stream)];
    Record& r = recs_[st.ring_at + ((top - st.first) & st.ring_mask)];
    core::check_invariant(r.top == top, "breakdown walked back to an op whose record was replaced");
    return r;
  }
  /// The compute stream of `slot` idled from `from` to `to`; `binding` released the op that ended
  /// the idle.
  void attribute_gap(Slot slot, core::Time from, core::Time to, TemplateOp binding);

 private:
  /// Rare (a ring starts at four records), so out of line, out of put() in the hot path.
  [[gnu::noinline]] void grow_ring(StreamKey key);

  const RankTemplates& t_;
  RankState& state_;
  std::vector<char> across_sites_;
  // Each stream's ring is a power-of-two block of recs_. One pool, so neighbouring streams share
  // cache lines.
  std::vector<Record> recs_;
};

}  // namespace inflect::sim
