#pragma once
// The plans a search considers: every combination of the knobs below that the model and the
// cluster allow (each degree divides what it must, the schedule can run the micro-batch count),
// in one fixed order, so a search is reproducible and its counts mean something.
#include <cstdint>
#include <string>
#include <vector>

#include "inflect/plan/experiment.hpp"

namespace inflect::search {

/// The values each knob may take. An empty degree list means every value the model and cluster
/// allow (tp: divisors of the node that divide the heads and KV heads; pp: divisors of the layers;
/// ep: divisors of the routed experts). The other defaults are listed in docs/search.md and
/// printed by `inflect search`.
struct SearchSpace {
  std::vector<int> tp, pp, ep;
  std::vector<int> cp = {1, 2, 4, 8};
  std::vector<int> zero = {0, 1, 2, 3};
  std::vector<plan::Schedule> schedules = {plan::Schedule::one_f_one_b, plan::Schedule::interleaved,
                                           plan::Schedule::zero_bubble, plan::Schedule::dualpipe,
                                           plan::Schedule::dualpipev};
  std::vector<int> virtual_stages = {2, 4};  // for the interleaved schedule
  std::vector<std::int64_t> micro_batch = {1, 2, 4, 8};
  std::vector<plan::Recompute> recompute = {plan::Recompute::none, plan::Recompute::selective,
                                            plan::Recompute::full};
  /// Megatron sequence parallelism, for plans with tp > 1 (with tp = 1 it does not apply).
  std::vector<bool> sequence_parallel = {true};
};

/// One plan: the degrees and choices that differ between plans (compact: the search holds
/// hundreds of thousands).
struct Candidate {
  int tp = 1, cp = 1, pp = 1, dp = 1, ep = 1;
  int zero = 0;
  plan::Schedule schedule = plan::Schedule::one_f_one_b;
  int virtual_stages = 1;
  std::int64_t micro_batch = 1;
  plan::Recompute recompute = plan::Recompute::none;
  bool sequence_parallel = false;
};

/// Writes the candidate's plan into `e` (parallel degrees, schedule, ZeRO, recomputation and
/// training.micro_batch); every other setting of `e` is kept.
void apply(const Candidate& c, plan::Experiment& e);
/// The candidate's plan on `base`, labelled as report.json's `plan` is (plan::plan_label:
/// "tp8 pp16 dp128 cp1 sp zero1 1f1b recompute=full mb1 m=8").
std::string describe(const plan::Experiment& base, const Candidate& c);

/// The degree lists with the defaults filled in for this model and cluster (what is enumerated).
SearchSpace resolve_space(const plan::Experiment& base, SearchSpace space);

/// Combinations of the (resolved) lists before any check: the size of what enumerate_plans walks.
double space_size(const SearchSpace& s);
/// The most combinations a search may ask for (parse_search rejects more).
inline constexpr double kMaxSpaceSize = 1e7;

/// Every plan of `space` that the model and cluster allow, in lexicographic order of (tp, cp,
/// pp, ep, micro_batch, zero, schedule, virtual_stages, recompute, sequence_parallel). `base`
/// supplies the model, cluster and training settings. The checks are plan::validate's rules, stage
/// by stage (plan::passes), so every candidate compiles.
std::vector<Candidate> enumerate_plans(const plan::Experiment& base, const SearchSpace& space);

}  // namespace inflect::search
