#include "plan/plan_context.hpp"

#include "inflect/plan/diloco.hpp"

namespace inflect::plan::compiler {

PlanContext::PlanContext(const Experiment& e, const CompileOptions& o)
    : experiment(e),
      options(o),
      model(*e.workload.model),
      plan(e.parallel),
      dp(derive_dp(e)),
      shape(schedule_shape(e, dp)),
      layout(pipeline_layout(plan.schedule, shape)),
      mesh(plan, dp),
      shard(shard_shape(e)),
      layer(workload::transformer_layer(model, shard)) {
  if (model.is_moe()) {
    moe = workload::moe_mlp(model, shard);
    ep_bytes = moe.dispatch_bytes.value();
  }
  workers = diloco_workers(e);
  worker_dp = plan::worker_dp(e, dp);
  diloco_sync = workers > 1 && o.diloco_step == DilocoStep::sync;
  const ShardGroups shards = shard_groups(plan, worker_dp);
  dp_group_size = shards.size;
  replicas = shards.replicas;
  grad_bytes = grad_bytes_per_param(e.training);
  pp_message_bytes = static_cast<double>(e.training.micro_batch * e.training.seq_len / plan.cp * model.hidden) *
                     core::bytes_per_element(core::activation_precision(e.training.precision)) / (plan.sequence_parallel ? plan.tp : 1);
  edp_group_size = worker_dp * plan.cp / plan.ep;
  // Megatron-LM's scatter/gather: without SP each TP rank sends its 1/tp of the (replicated)
  // activation; the receivers all-gather the pieces over TP (steps.cpp).
  pp_gather = plan.pp_scatter_gather && plan.tp > 1 && !plan.sequence_parallel;
  if (pp_gather) pp_message_bytes /= plan.tp;
  overlap_param_gather = plan.overlap_param_gather && (plan.zero == 1 || plan.zero == 2) && dp_group_size > 1;

  memory = estimate_memory(e, dp, schedule_facts(plan.schedule, shape));  // the shape derived above
  // ZeRO >= 1: each rank updates its shard, dense parameters over dp*cp (or the shard group),
  // routed experts over dp*cp/ep (the expert-data-parallel group), inside its DiLoCo worker.
  for (const StageMemory& st : memory.stages) stage_shard_params.push_back(optimizer_shard_params(e, dp, st));
}

workload::RankId PlanContext::at_stage(workload::RankId r, int stage) const {
  Coords c = mesh.coords(r);
  c.pp = stage;
  return mesh.rank(c);
}

bool PlanContext::flows_up(int chunk) const {
  // The second arm of DualPipeV and DualPipe's second direction run from rank p-1 back to 0.
  return (plan.schedule == Schedule::dualpipe || plan.schedule == Schedule::dualpipev) && chunk >= plan.pp;
}

}  // namespace inflect::plan::compiler
