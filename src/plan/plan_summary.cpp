#include "inflect/plan/plan_summary.hpp"

#include <fmt/format.h>

#include <vector>

#include "inflect/core/strings.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/diloco.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/workload/layer_costs.hpp"

namespace inflect::plan {

std::string plan_label(const Experiment& e) {
  const ParallelPlan& p = e.parallel;
  const int dp = derive_dp(e);
  std::string sharding = p.fsdp ? (p.reshard_after_forward ? "fsdp" : "fsdp(no-reshard)") : fmt::format("zero{}", p.zero);
  // Hybrid sharding: the shard group reduce-scatters and gathers, its replicas all-reduce (inside
  // a DiLoCo worker, when there are workers).
  if (const ShardGroups shards = shard_groups(p, worker_dp(e, dp)); shards.replicas > 1)
    sharding += fmt::format(" hybrid{}x{}", shards.size, shards.replicas);
  if (p.ep > 1) sharding = fmt::format("ep{} ", p.ep) + sharding;
  std::string label = fmt::format("tp{} pp{} dp{} cp{}{} {} {} recompute={} mb{} m={}", p.tp, p.pp, dp, p.cp,
                                  p.sequence_parallel ? (p.tp_comm_overlap ? " sp tp-overlap" : " sp") : "", sharding,
                                  schedule_label(p.schedule, p.virtual_stages, p.pipeline_lookahead), workload::recompute_name(p.recompute),
                                  e.training.micro_batch, micro_batches(e, dp));
  if (!p.layers_per_stage.empty()) {
    std::vector<std::string> counts;
    for (int n : p.layers_per_stage) counts.push_back(std::to_string(n));
    label += " layers=";
    label += core::join(counts, "/");
  }
  // DiLoCo: workers, inner steps per sync, compression, fragments when streamed.
  if (const auto& d = e.training.diloco) {
    label += fmt::format(" diloco k{} h{} {}", d->workers, d->sync_every, compression_name(d->compression));
    if (d->fragments > 1) label += fmt::format(" f{}", d->fragments);
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
