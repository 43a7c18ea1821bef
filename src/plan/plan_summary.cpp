#include "inflect/plan/plan_summary.hpp"

#include <fmt/format.h>

#include <vector>

#include "inflect/core/strings.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/workload/layer_costs.hpp"

namespace inflect::plan {

std::string plan_label(const Experiment& e) {
  const ParallelPlan& p = e.parallel;
  const int dp = derive_dp(e);
  std::string sharding = p.fsdp ? (p.reshard_after_forward ? "fsdp" : "fsdp(no-reshard)") : fmt::format("zero{}", p.zero);
  // Hybrid sharding: the shard group reduce-scatters and gathers, its replicas all-reduce.
  if (const ShardGroups shards = shard_groups(p, dp); shards.replicas > 1)
    sharding += fmt::format(" hybrid{}x{}", shards.size, shards.replicas);
  if (p.ep > 1) sharding = fmt::format("ep{} ", p.ep) + sharding;
  std::string label = fmt::format("tp{} pp{} dp{} cp{}{} {} {} recompute={} mb{} m={}", p.tp, p.pp, dp, p.cp,
                                  p.sequence_parallel ? (p.tp_comm_overlap ? " sp tp-overlap" : " sp") : "", sharding,
                                  schedule_label(p.schedule, p.virtual_stages), workload::recompute_name(p.recompute),
                                  e.training.micro_batch, micro_batches(e, dp));
  if (!p.layers_per_stage.empty()) {
    std::vector<std::string> counts;
    for (int n : p.layers_per_stage) counts.push_back(std::to_string(n));
    label += " layers=";
    label += core::join(counts, "/");
  }
  return label;
}

workload::GraphFacts step_facts(const Experiment& e) {
  workload::GraphFacts f;
  const double tokens = static_cast<double>(e.training.global_batch * e.training.seq_len);
  f.tokens_per_step = tokens;
  if (e.workload.model) f.model_flops_per_step = core::Flops(workload::model_flops_per_token(*e.workload.model, e.training.seq_len) * tokens);
  f.micro_batches = micro_batches(e, derive_dp(e));
  return f;
}

}  // namespace inflect::plan
