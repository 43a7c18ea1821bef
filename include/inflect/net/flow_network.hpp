#pragma once
// Transfers in flight over the topology's links, sharing bandwidth max-min fairly.
//
// One stepping contract (after SimGrid's next_occurring_event / update_actions_state): the engine
// starts and finishes transfers, then calls resolve(), which re-solves the touched components and
// reports every transfer whose completion time moved; the engine (re)schedules those, discarding
// stale completions by stamp.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "inflect/core/activity.hpp"
#include "inflect/core/time.hpp"
#include "inflect/net/maxmin.hpp"
#include "inflect/net/topology.hpp"

namespace inflect::net {

class FlowNetwork {
 public:
  using TransferId = std::uint32_t;

  /// `capacities[l]` in bytes/s for every link id of the topology.
  explicit FlowNetwork(const std::vector<Link>& links);

  /// Starts a transfer of `bytes` (its reference size) putting weight * rate on each listed link,
  /// its rate never above `bound` (bytes/s of the reference size: a WAN transport's limit).
  /// A transfer over no link completes at `now`.
  TransferId start(core::Time now, std::span<const std::pair<LinkId, double>> link_weights, double bytes,
                   double bound = MaxMinSystem::kUnbounded);
  /// Ends a transfer (it completed; its remaining bytes are taken as zero).
  void finish(TransferId t);
  /// Re-solves rates after starts and finishes at `now`; appends (transfer, new completion time)
  /// for every transfer whose completion moved.
  void resolve(core::Time now, std::vector<std::pair<TransferId, core::Time>>& reschedule);
  /// Bumped on every reschedule, so a stale completion event can be recognised.
  std::uint32_t stamp(TransferId t) const { return transfers_[t].stamp; }
  std::size_t active() const { return solver_.live_variables(); }

 private:
  /// A transfer's rate (core::Activity): bytes per second, from the max-min solver. Its completion
  /// rounds up to the next picosecond, so a transfer never completes before its bytes have moved.
  struct ByteRate {
    double bytes_per_s = 0;
    double work_in(core::Time span) const { return bytes_per_s * span.seconds(); }
    core::Time time_for(double bytes) const;
  };
  struct Transfer {
    core::Activity<ByteRate> work;  // bytes of the reference size still to move
    std::uint32_t stamp = 0;
    MaxMinSystem::VarId var = 0;
    bool live = false;
  };
  MaxMinSystem solver_;
  std::vector<Transfer> transfers_;
  std::vector<TransferId> by_var_;  // solver variable -> transfer
  std::vector<TransferId> free_;
  std::vector<MaxMinSystem::VarId> changed_;
  std::vector<TransferId> instant_;  // transfers over no link
};

}  // namespace inflect::net
