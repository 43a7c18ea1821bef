#pragma once
// Max-min fair sharing of capacities among variables, by progressive filling (after SimGrid's lmm).
//
// A pure library: it knows only constraints (capacities), variables and how much of each
// constraint one unit of a variable's rate consumes (its weight). No graph, YAML or rank types.
//
// Worked example, two links. Link A has capacity 10, link B capacity 4. Flow x crosses A only
// (weight 1); flow y crosses A and B (weight 1 on each). Progressive filling raises every unfixed
// rate together: B saturates first, at y = 4 (B's 4 / one flow); fix y = 4. A has 10 - 4 = 6 left
// for x alone, so x = 6. Result: x = 6, y = 4 — no flow can go faster without slowing a slower one.
//
// Incremental: only the connected components (through shared constraints) touched since the last
// solve() are re-solved, so independent flows (the TP collectives of different nodes) cost nothing
// to each other. A variable that arrives on constraints nobody uses ("solo", the common case) is
// not entered in their variable lists, only marked on them; it is entered (and its component
// re-solved) when a second variable joins one of them. Adding and removing a solo variable is a
// write per constraint.
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace inflect::net {

class MaxMinSystem {
 public:
  using VarId = std::uint32_t;
  using ConsId = std::uint32_t;
  static constexpr double kUnbounded = std::numeric_limits<double>::infinity();

  /// Room for `n` constraints without reallocating (a 16k-GPU topology has ~100k links).
  void reserve_constraints(std::size_t n) {
    cons_.reserve(n);
    occupant_.reserve(n);
    capacity_.reserve(n);
  }
  /// Adds a constraint of `capacity` (> 0) units per second.
  ConsId add_constraint(double capacity);
  /// Adds a variable using each listed constraint with the given weight (> 0); `bound` caps its
  /// rate. Duplicate constraints in `usage` are summed. Marks its component for re-solving.
  VarId add_variable(std::span<const std::pair<ConsId, double>> usage, double bound = kUnbounded);
  /// Removes a variable (its id may be reused by a later add_variable).
  void remove_variable(VarId v);
  /// Re-solves the components touched since the last call. Appends to `changed` every variable
  /// whose rate changed (including newly added ones).
  void solve(std::vector<VarId>& changed);
  /// Current rate of a live variable (units of its own progress per second).
  double rate(VarId v) const { return vars_[v].rate; }
  std::size_t live_variables() const { return live_; }
  double capacity(ConsId c) const { return capacity_[c]; }

 private:
  struct Use {
    ConsId cons;
    double weight;
  };
  struct Var {
    std::vector<Use> uses;
    std::vector<std::uint32_t> slot;  // position of this var in each used constraint's list
    double bound = kUnbounded;
    double rate = 0;
    double alone_rate = 0;  // min(bound, capacity / weight over its constraints): its rate when alone
    bool live = false;
    bool solo = false;      // marked on its constraints, not in their lists (see above)
    bool fixed = false;     // scratch for solve
    std::uint32_t mark = 0; // component visit stamp
  };
  struct Cons {
    double capacity = 0;
    std::vector<VarId> vars;  // live variables using it
    std::vector<std::uint32_t> use_index;  // index into that var's uses
    bool dirty = false;
    std::uint32_t mark = 0;
    // scratch for solve
    double remaining = 0;
    double unfixed_weight = 0;
  };
  static constexpr VarId kNoVar = std::numeric_limits<VarId>::max();  // occupant: no variable
  static constexpr VarId kListed = kNoVar - 1;                        // occupant: see `vars`
  void mark_dirty(ConsId c);
  void enter(VarId id, bool dirty);  // puts a variable in its constraints' lists

  std::vector<Var> vars_;
  std::vector<Cons> cons_;
  // Per constraint, who uses it: kNoVar, its solo variable, or kListed. Apart from `cons_` so the
  // check a new variable makes on each of its constraints reads 4 bytes, not a Cons.
  std::vector<VarId> occupant_;
  std::vector<double> capacity_;  // = cons_[c].capacity, compact for the solo rate
  std::vector<VarId> free_vars_;
  std::vector<ConsId> dirty_;
  std::vector<VarId> isolated_;  // new variables with no constraint: rate = bound
  std::uint32_t stamp_ = 0;
  std::size_t live_ = 0;
  // scratch
  std::vector<VarId> comp_vars_;
  std::vector<ConsId> comp_cons_;
  std::vector<ConsId> stack_;
  std::vector<double> old_rate_;
};

}  // namespace inflect::net
