#include "inflect/net/maxmin.hpp"

#include <algorithm>
#include <cmath>

#include "inflect/core/error.hpp"

namespace inflect::net {

MaxMinSystem::ConsId MaxMinSystem::add_constraint(double capacity) {
  core::check_invariant(capacity > 0, "constraint capacity must be positive");
  Cons c;
  c.capacity = capacity;
  cons_.push_back(std::move(c));
  occupant_.push_back(kNoVar);
  capacity_.push_back(capacity);
  return static_cast<ConsId>(cons_.size() - 1);
}

void MaxMinSystem::mark_dirty(ConsId c) {
  if (!cons_[c].dirty) {
    cons_[c].dirty = true;
    dirty_.push_back(c);
  }
}

MaxMinSystem::VarId MaxMinSystem::add_variable(std::span<const std::pair<ConsId, double>> usage, double bound) {
  VarId id;
  if (!free_vars_.empty()) {
    id = free_vars_.back();
    free_vars_.pop_back();
  } else {
    id = static_cast<VarId>(vars_.size());
    vars_.emplace_back();
  }
  Var& v = vars_[id];
  v.slot.clear();
  v.bound = bound;
  v.rate = 0;
  v.live = true;
  // One pass copies, checks, tests the order and looks for company: this runs once per transfer
  // (millions of times in a full-fidelity step), usually over tens of links.
  v.uses.resize(usage.size());
  bool strictly_sorted = true, alone = true;
  const auto ncons = static_cast<ConsId>(cons_.size());
  double alone_rate = bound;
  for (std::size_t i = 0; i < usage.size(); ++i) {
    const auto [c, w] = usage[i];
    core::check_invariant(c < ncons && w > 0, "variable usage must name a constraint with positive weight");
    v.uses[i] = Use{c, w};
    if (i > 0 && !(usage[i - 1].first < c)) strictly_sorted = false;
    if (occupant_[c] != kNoVar) alone = false;
    alone_rate = std::min(alone_rate, capacity_[c] / w);
  }
  // Merge duplicate constraints (sort, then sum neighbours): O(u log u) for wide transfers. The
  // engine passes strictly increasing constraint ids already.
  if (!strictly_sorted) {
    auto by_cons = [](const Use& a, const Use& b) { return a.cons < b.cons; };
    std::sort(v.uses.begin(), v.uses.end(), by_cons);
    std::size_t out = 0;
    for (std::size_t i = 0; i < v.uses.size(); ++i) {
      if (out > 0 && v.uses[out - 1].cons == v.uses[i].cons) v.uses[out - 1].weight += v.uses[i].weight;
      else v.uses[out++] = v.uses[i];
    }
    v.uses.resize(out);
    alone_rate = bound;
    for (const Use& u : v.uses) alone_rate = std::min(alone_rate, capacity_[u.cons] / u.weight);
  }
  v.alone_rate = alone_rate;
  // A variable on constraints nobody else uses is a component of its own (the common case: a
  // collective on links no other transfer crosses): its rate is known without a search, and it
  // stays out of the constraints' lists unless another variable joins one of them.
  if (!alone)
    for (const Use& u : v.uses) {
      const VarId o = occupant_[u.cons];
      if (o != kNoVar && o != kListed) enter(o, true);  // the solo one gains company: list it, re-solve
    }
  if (alone) {
    v.solo = true;
    for (const Use& u : v.uses) occupant_[u.cons] = id;
    isolated_.push_back(id);
  } else {
    v.solo = false;
    enter(id, true);
  }
  ++live_;
  return id;
}

void MaxMinSystem::enter(VarId id, bool dirty) {
  Var& v = vars_[id];
  v.solo = false;
  v.slot.clear();
  for (std::uint32_t i = 0; i < v.uses.size(); ++i) {
    Cons& c = cons_[v.uses[i].cons];
    occupant_[v.uses[i].cons] = kListed;
    v.slot.push_back(static_cast<std::uint32_t>(c.vars.size()));
    c.vars.push_back(id);
    c.use_index.push_back(i);
    if (dirty) mark_dirty(v.uses[i].cons);
  }
}

void MaxMinSystem::remove_variable(VarId id) {
  Var& v = vars_[id];
  core::check_invariant(v.live, "removing a variable that is not live");
  if (v.solo) {
    for (const Use& u : v.uses) occupant_[u.cons] = kNoVar;
  } else {
    for (std::uint32_t i = 0; i < v.uses.size(); ++i) {
      Cons& c = cons_[v.uses[i].cons];
      std::uint32_t s = v.slot[i];
      VarId moved = c.vars.back();
      std::uint32_t moved_use = c.use_index.back();
      c.vars[s] = moved;
      c.use_index[s] = moved_use;
      vars_[moved].slot[moved_use] = s;
      c.vars.pop_back();
      c.use_index.pop_back();
      // A constraint left without variables has nothing to re-solve.
      if (!c.vars.empty()) mark_dirty(v.uses[i].cons);
      else occupant_[v.uses[i].cons] = kNoVar;
    }
  }
  v.live = false;
  v.solo = false;
  v.rate = 0;
  free_vars_.push_back(id);
  --live_;
}

void MaxMinSystem::solve(std::vector<VarId>& changed) {
  ++stamp_;  // an id can be queued twice (removed, then reused by a new variable, before a solve)
  for (VarId id : isolated_) {
    Var& var = vars_[id];
    if (!var.live || var.mark == stamp_) continue;
    var.mark = stamp_;
    // Still alone? A variable that joined one of its constraints since entered it in their
    // lists and made them dirty: the component search below solves both.
    if (!var.solo) continue;
    var.rate = var.alone_rate;  // capacities are fixed: computed when it was added
    changed.push_back(id);
  }
  isolated_.clear();
  for (ConsId seed : dirty_) {
    if (!cons_[seed].dirty) continue;  // already solved as part of an earlier component
    // Collect the component reachable from `seed` through shared variables.
    ++stamp_;
    comp_vars_.clear();
    comp_cons_.clear();
    stack_.clear();
    stack_.push_back(seed);
    cons_[seed].mark = stamp_;
    while (!stack_.empty()) {
      ConsId c = stack_.back();
      stack_.pop_back();
      comp_cons_.push_back(c);
      cons_[c].dirty = false;
      for (VarId v : cons_[c].vars) {
        Var& var = vars_[v];
        if (var.mark == stamp_) continue;
        var.mark = stamp_;
        comp_vars_.push_back(v);
        for (const Use& u : var.uses) {
          if (cons_[u.cons].mark != stamp_) {
            cons_[u.cons].mark = stamp_;
            stack_.push_back(u.cons);
          }
        }
      }
    }
    if (comp_vars_.empty()) continue;  // constraints a removed variable left empty
    if (comp_vars_.size() == 1) {
      // The common case (a collective on links nobody else uses): the rate is the tightest
      // constraint's capacity over the variable's weight on it, or its bound.
      Var& var = vars_[comp_vars_.front()];
      const double rate = var.alone_rate;
      if (rate != var.rate || var.rate == 0) changed.push_back(comp_vars_.front());
      var.rate = rate;
      continue;
    }
    // Progressive filling over the component. Order of iteration is deterministic (ids only).
    std::sort(comp_cons_.begin(), comp_cons_.end());
    std::sort(comp_vars_.begin(), comp_vars_.end());
    for (ConsId c : comp_cons_) {
      Cons& cs = cons_[c];
      cs.remaining = cs.capacity;
      cs.unfixed_weight = 0;
      for (std::size_t i = 0; i < cs.vars.size(); ++i)
        cs.unfixed_weight += vars_[cs.vars[i]].uses[cs.use_index[i]].weight;
    }
    std::size_t unfixed = comp_vars_.size();
    for (VarId v : comp_vars_) vars_[v].fixed = false;
    std::vector<double>& old_rate = old_rate_;
    old_rate.clear();
    for (VarId v : comp_vars_) old_rate.push_back(vars_[v].rate);
    double level = 0;  // rate every unfixed variable has reached
    while (unfixed > 0) {
      // The next saturation: the smallest level at which a constraint fills or a bound is hit.
      double next = std::numeric_limits<double>::infinity();
      for (ConsId c : comp_cons_) {
        const Cons& cs = cons_[c];
        if (cs.unfixed_weight > 0) next = std::min(next, level + std::max(0.0, cs.remaining) / cs.unfixed_weight);
      }
      for (VarId v : comp_vars_)
        if (!vars_[v].fixed) next = std::min(next, vars_[v].bound);
      core::check_invariant(std::isfinite(next), "max-min component without a finite limit");
      double delta = next - level;
      // Advance every constraint by delta and find those that are now full.
      const double eps = 1e-12;
      for (ConsId c : comp_cons_) {
        Cons& cs = cons_[c];
        if (cs.unfixed_weight > 0) cs.remaining -= delta * cs.unfixed_weight;
      }
      level = next;
      bool fixed_any = false;
      for (VarId v : comp_vars_) {
        Var& var = vars_[v];
        if (var.fixed) continue;
        bool saturated = var.bound <= level * (1 + eps);
        for (const Use& u : var.uses) {
          const Cons& cs = cons_[u.cons];
          if (cs.remaining <= eps * cs.capacity) { saturated = true; break; }
        }
        if (!saturated) continue;
        var.fixed = true;
        var.rate = level;
        fixed_any = true;
        --unfixed;
      }
      core::check_invariant(fixed_any, "progressive filling made no progress");
      // Weights of the newly fixed variables leave the unfixed sums.
      for (ConsId c : comp_cons_) {
        Cons& cs = cons_[c];
        double w = 0;
        for (std::size_t i = 0; i < cs.vars.size(); ++i) {
          const Var& var = vars_[cs.vars[i]];
          if (!var.fixed) w += var.uses[cs.use_index[i]].weight;
        }
        cs.unfixed_weight = w;
      }
    }
    for (std::size_t i = 0; i < comp_vars_.size(); ++i)
      if (vars_[comp_vars_[i]].rate != old_rate[i] || old_rate[i] == 0) changed.push_back(comp_vars_[i]);
  }
  dirty_.clear();
}

}  // namespace inflect::net
