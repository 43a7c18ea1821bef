#include "inflect/search/space.hpp"

#include <algorithm>

#include "inflect/core/error.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/plan_summary.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/plan/validate.hpp"

namespace inflect::search {

namespace {

std::vector<int> divisors(std::int64_t n) {
  std::vector<int> out;
  for (std::int64_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(static_cast<int>(d));
  return out;
}


}  // namespace

void apply(const Candidate& c, plan::Experiment& e) {
  auto& p = e.parallel;
  p.tp = c.tp;
  p.cp = c.cp;
  p.pp = c.pp;
  p.dp = c.dp;
  p.ep = c.ep;
  p.zero = c.zero;
  p.fsdp = false;
  p.schedule = c.schedule;
  p.virtual_stages = c.virtual_stages;
  p.recompute = c.recompute;
  p.sequence_parallel = c.sequence_parallel;
  e.training.micro_batch = c.micro_batch;
}

std::string describe(const plan::Experiment& base, const Candidate& c) {
  plan::Experiment e = base;
  apply(c, e);
  return plan::plan_label(e);
}

SearchSpace resolve_space(const plan::Experiment& base, SearchSpace space) {
  if (!base.workload.model) throw core::Error(core::ErrorKind::input, "a search needs a model (model.preset or model.*)");
  const auto& m = *base.workload.model;
  if (space.tp.empty()) {
    // The divisors of the node that plan::validate's tensor-parallel rules allow (the heads and
    // the KV heads).
    plan::Experiment e = base;
    for (int d : divisors(base.cluster.topology.devices_per_node)) {
      e.parallel.tp = d;
      if (plan::passes(e, plan::Stage::tensor_parallel)) space.tp.push_back(d);
    }
  }
  if (space.pp.empty()) space.pp = divisors(m.layers);
  if (space.ep.empty()) space.ep = m.is_moe() ? divisors(m.moe.experts) : std::vector<int>{1};
  return space;
}

double space_size(const SearchSpace& s) {
  return static_cast<double>(s.tp.size()) * s.cp.size() * s.pp.size() * s.ep.size() * s.micro_batch.size() * s.zero.size() *
         (s.schedules.size() + s.virtual_stages.size()) * s.recompute.size() * s.sequence_parallel.size();
}

std::vector<Candidate> enumerate_plans(const plan::Experiment& base, const SearchSpace& in) {
  using plan::Stage;
  const SearchSpace space = resolve_space(base, in);
  // One experiment whose plan each loop level overwrites with its knob (as apply() would) and
  // checks with plan::validate's rules of that knob's stage, so a combination is dropped at the
  // first knob that breaks a rule and every candidate kept passes them all.
  plan::Experiment e = base;
  auto& p = e.parallel;
  p.fsdp = false;  // a candidate's sharding is its zero
  p.dp = 0;        // derived from the devices
  auto legal = [&](Stage s) { return plan::passes(e, s); };

  std::vector<Candidate> out;
  Candidate c;
  for (int tp : space.tp) {
    p.tp = tp;
    if (!legal(Stage::tensor_parallel)) continue;
    // With tp = 1 sequence parallelism does not apply: one plan, whatever the list says.
    const std::vector<bool> sp_values = tp == 1 ? std::vector<bool>{false} : space.sequence_parallel;
    for (int cp : space.cp) {
      p.cp = cp;
      if (!legal(Stage::context_parallel)) continue;
      for (int pp : space.pp) {
        p.pp = pp;
        if (!legal(Stage::pipeline_parallel)) continue;
        const int dp = plan::derive_dp(e);
        for (int ep : space.ep) {
          p.ep = ep;
          if (!legal(Stage::expert_parallel)) continue;
          for (std::int64_t mb : space.micro_batch) {
            e.training.micro_batch = mb;
            if (!legal(Stage::micro_batch)) continue;
            for (int zero : space.zero) {
              p.zero = zero;
              if (!legal(Stage::zero)) continue;
              // ZeRO shards over dp*cp; with one rank there is nothing to shard: zero 0 is that plan.
              if (zero > 0 && dp * cp == 1) continue;
              for (plan::Schedule s : space.schedules) {
                // With one stage every schedule is the same plan: keep 1F1B only.
                if (pp == 1 && s != plan::Schedule::one_f_one_b) continue;
                p.schedule = s;
                const std::vector<int> one = {1};
                for (int v : s == plan::Schedule::interleaved ? space.virtual_stages : one) {
                  p.virtual_stages = v;
                  if (!legal(Stage::schedule)) continue;
                  for (plan::Recompute r : space.recompute)
                    for (bool sp : sp_values) {
                      p.sequence_parallel = sp;
                      if (!legal(Stage::sequence_parallel)) continue;
                      c.tp = tp;
                      c.cp = cp;
                      c.pp = pp;
                      c.dp = dp;
                      c.ep = ep;
                      c.micro_batch = mb;
                      c.zero = zero;
                      c.schedule = s;
                      c.virtual_stages = v;
                      c.recompute = r;
                      c.sequence_parallel = sp;
                      out.push_back(c);
                    }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace inflect::search
