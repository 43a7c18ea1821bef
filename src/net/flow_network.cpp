#include "inflect/net/flow_network.hpp"

#include <cmath>

#include "inflect/core/error.hpp"

namespace inflect::net {
// Time to move `bytes`, rounded up to the next picosecond so a transfer never completes before its
// bytes have moved; a duration that is a whole number of ticks up to floating-point noise (1e-12
// relative, far below the solver's tolerance) is not pushed to the next tick.
core::Time FlowNetwork::ByteRate::time_for(double bytes) const {
  if (!(bytes_per_s > 0)) return core::Time::max();
  const double ps = bytes / bytes_per_s * 1e12;
  if (!(ps < 9.2e18)) return core::Time::max();
  return core::Time::ps(static_cast<core::Time::rep>(std::ceil(ps * (1 - 1e-12))));
}

FlowNetwork::FlowNetwork(const std::vector<Link>& links) {
  solver_.reserve_constraints(links.size());
  for (const Link& l : links) solver_.add_constraint(l.capacity.value());
}

FlowNetwork::TransferId FlowNetwork::start(core::Time now, std::span<const std::pair<LinkId, double>> link_weights,
                                           double bytes, double bound) {
  TransferId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<TransferId>(transfers_.size());
    transfers_.emplace_back();
  }
  Transfer& t = transfers_[id];
  t.work.start(now, bytes, ByteRate{0});
  t.live = true;
  if (link_weights.empty() || bytes <= 0) {
    t.var = UINT32_MAX;
    instant_.push_back(id);
    return id;
  }
  t.var = solver_.add_variable(link_weights, bound);
  if (by_var_.size() <= t.var) by_var_.resize(t.var + 1);
  by_var_[t.var] = id;
  return id;
}

void FlowNetwork::finish(TransferId id) {
  Transfer& t = transfers_[id];
  core::check_invariant(t.live, "finishing a transfer that is not live");
  if (t.var != UINT32_MAX) solver_.remove_variable(t.var);
  t.live = false;
  ++t.stamp;
  free_.push_back(id);
}

void FlowNetwork::resolve(core::Time now, std::vector<std::pair<TransferId, core::Time>>& reschedule) {
  for (TransferId id : instant_) {
    if (!transfers_[id].live) continue;
    ++transfers_[id].stamp;
    reschedule.push_back({id, now});
  }
  instant_.clear();
  changed_.clear();
  solver_.solve(changed_);
  for (MaxMinSystem::VarId v : changed_) {
    TransferId id = by_var_[v];
    Transfer& t = transfers_[id];
    if (!t.live || t.var != v) continue;
    // Settle progress at the old rate, then predict completion at the new one.
    t.work.set_rate(now, ByteRate{solver_.rate(v)});
    ++t.stamp;
    reschedule.push_back({id, t.work.end()});
  }
}

}  // namespace inflect::net
