#include "inflect/net/flow_network.hpp"

#include <cmath>

#include "inflect/core/error.hpp"

namespace inflect::net {

FlowNetwork::FlowNetwork(const std::vector<Link>& links) {
  for (const Link& l : links) solver_.add_constraint(l.capacity.value());
}

FlowNetwork::TransferId FlowNetwork::start(core::Time now, std::span<const std::pair<LinkId, double>> link_weights,
                                           double bytes) {
  TransferId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<TransferId>(transfers_.size());
    transfers_.emplace_back();
  }
  Transfer& t = transfers_[id];
  t.remaining = bytes;
  t.rate = 0;
  t.last = now;
  t.live = true;
  if (link_weights.empty() || bytes <= 0) {
    t.var = UINT32_MAX;
    instant_.push_back(id);
    return id;
  }
  t.var = solver_.add_variable(link_weights);
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
    double dt = (now - t.last).seconds();
    t.remaining = std::max(0.0, t.remaining - t.rate * dt);
    t.last = now;
    t.rate = solver_.rate(v);
    ++t.stamp;
    core::Time done = t.rate > 0 ? now + core::Time::from_seconds(t.remaining / t.rate) : core::Time::max();
    // Round up by one tick so a transfer never completes before its bytes have moved.
    if (done != core::Time::max() && t.remaining > 0) done += core::Time::ps(1);
    reschedule.push_back({id, done});
  }
}

}  // namespace inflect::net
