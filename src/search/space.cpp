#include "inflect/search/space.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "inflect/core/error.hpp"
#include "inflect/plan/plan_summary.hpp"
#include "inflect/plan/schedule.hpp"

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
  const int per_node = base.cluster.topology.devices_per_node;
  if (space.tp.empty())
    for (int d : divisors(per_node))
      if (m.heads % d == 0 && (m.kv_heads > 0 ? m.kv_heads : m.heads) % d == 0) space.tp.push_back(d);
  if (space.pp.empty()) space.pp = divisors(m.layers);
  if (space.ep.empty()) space.ep = m.is_moe() ? divisors(m.moe.experts) : std::vector<int>{1};
  return space;
}

double space_size(const SearchSpace& s) {
  return static_cast<double>(s.tp.size()) * s.cp.size() * s.pp.size() * s.ep.size() * s.micro_batch.size() * s.zero.size() *
         (s.schedules.size() + s.virtual_stages.size()) * s.recompute.size() * s.sequence_parallel.size();
}

std::vector<Candidate> enumerate_plans(const plan::Experiment& base, const SearchSpace& in) {
  const SearchSpace space = resolve_space(base, in);
  const auto& m = *base.workload.model;
  const std::int64_t devices = base.cluster.devices();
  const std::int64_t per_node = base.cluster.topology.devices_per_node;
  const std::int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const std::int64_t seq = base.training.seq_len, gb = base.training.global_batch;

  std::vector<Candidate> out;
  Candidate c;
  for (int tp : space.tp) {
    if (tp < 1 || per_node % tp != 0 || m.heads % tp != 0 || kv % tp != 0) continue;
    // With tp = 1 sequence parallelism does not apply: one plan, whatever the list says.
    const std::vector<bool> sp_values = tp == 1 ? std::vector<bool>{false} : space.sequence_parallel;
    for (int cp : space.cp) {
      if (cp < 1 || seq % cp != 0) continue;
      for (int pp : space.pp) {
        if (pp < 1 || m.layers % pp != 0) continue;
        const std::int64_t inner = std::int64_t{tp} * cp * pp;
        if (devices % inner != 0) continue;
        const std::int64_t dp = devices / inner;
        for (int ep : space.ep) {
          if (ep < 1 || (ep > 1 && (!m.is_moe() || m.moe.experts % ep != 0 || dp % ep != 0))) continue;
          for (std::int64_t mb : space.micro_batch) {
            if (mb < 1 || gb % (dp * mb) != 0) continue;
            const std::int64_t mbs = gb / (dp * mb);
            if (mbs > 65535) continue;
            for (int zero : space.zero) {
              if (zero < 0 || zero > 3) continue;
              // ZeRO shards over dp*cp; with one rank there is nothing to shard.
              if (zero > 0 && dp * cp == 1) continue;
              for (plan::Schedule s : space.schedules) {
                // With one stage every schedule is the same plan: keep 1F1B only.
                if (pp == 1 && s != plan::Schedule::one_f_one_b) continue;
                const std::vector<int> one = {1};
                for (int v : s == plan::Schedule::interleaved ? space.virtual_stages : one) {
                  plan::ScheduleShape shape;
                  shape.stages = pp;
                  shape.micro_batches = static_cast<int>(mbs);
                  shape.virtual_stages = v;
                  shape.layers = m.layers;
                  if (!plan::schedule_problem(s, shape).empty()) continue;
                  for (plan::Recompute r : space.recompute)
                    for (bool sp : sp_values) {
                      if (sp && (seq / cp) % tp != 0) continue;
                      c.tp = tp;
                      c.cp = cp;
                      c.pp = pp;
                      c.dp = static_cast<int>(dp);
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
