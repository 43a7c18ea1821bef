#include "inflect/plan/memory.hpp"

#include <algorithm>
#include <memory>

#include "inflect/plan/diloco.hpp"
#include "inflect/plan/schedule.hpp"
#include "inflect/workload/layer_costs.hpp"

namespace inflect::plan {

namespace {
/// Userbuffers Transformer Engine registers for its TP overlap in the default configuration: one
/// per overlapped GEMM role (ring exchange: qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad; pipeline:
/// proj_fprop, fc2_fprop; bulk: qkv_dgrad, qkv_wgrad, fc1_dgrad, fc1_wgrad).
constexpr double kTeUserbuffers = 10;
}  // namespace

workload::ShardShape shard_shape(const Experiment& e) {
  workload::ShardShape s;
  s.tp = e.parallel.tp;
  s.sequence_parallel = e.parallel.sequence_parallel;
  s.cp = e.parallel.cp;
  s.ep = e.parallel.ep;
  s.micro_batch = e.training.micro_batch;
  s.seq_len = e.training.seq_len;
  s.precision = e.training.precision;
  s.fp8 = e.training.fp8;
  s.unfused_attention = e.training.attention == "unfused";
  return s;
}

LayerShard layer_shard(const workload::ModelSpec& m, int layer, int tp, int ep) {
  const double routed = ep > 1 ? m.routed_expert_params(layer) : 0.0;
  return {(m.layer_params(layer) - routed) / tp, routed / (static_cast<double>(tp) * ep)};
}

double grad_bytes_per_param(const TrainingSpec& t) { return t.optimizer.gradient; }

int communicators(const ParallelPlan& p, int dp) {
  const int data = dp * p.cp;
  return (p.tp > 1) + (p.cp > 1) + (p.pp > 1) + (data > 1) + (p.ep > 1) + (p.ep > 1 && data / p.ep > 1);
}

std::int64_t micro_batches(const Experiment& e, int dp) {
  return e.training.global_batch / (static_cast<std::int64_t>(dp) * e.training.micro_batch);
}

ShardGroups shard_groups(const ParallelPlan& p, int dp) {
  ShardGroups g{dp * p.cp, 1};
  if (p.shard_group > 0 && p.shard_group < g.size) {
    g.replicas = g.size / p.shard_group;
    g.size = p.shard_group;
  }
  return g;
}

ScheduleShape schedule_shape(const Experiment& e, int dp) {
  ScheduleShape x;
  x.stages = e.parallel.pp;
  x.micro_batches = static_cast<int>(micro_batches(e, dp));
  x.virtual_stages = e.parallel.virtual_stages;
  x.layers = e.workload.model->layers;
  x.layers_per_stage = e.parallel.layers_per_stage;
  x.lookahead = e.parallel.pipeline_lookahead;
  if (e.parallel.schedule == Schedule::custom && !e.parallel.custom_schedule.empty())
    x.custom = std::make_shared<const std::vector<std::vector<ScheduleStep>>>(parse_custom_schedule(e.parallel.custom_schedule));
  return x;
}

ScheduleFacts schedule_facts(Schedule s, const ScheduleShape& shape) {
  ScheduleFacts f;
  f.layout = pipeline_layout(s, shape);
  for (int st = 0; st < shape.stages; ++st) f.peak_layers.push_back(peak_activation_layers(s, st, shape));
  return f;
}

MemoryEstimate estimate_memory(const Experiment& e, int dp) {
  return estimate_memory(e, dp, schedule_facts(e.parallel.schedule, schedule_shape(e, dp)));
}

MemoryEstimate estimate_memory(const Experiment& e, int dp, const ScheduleFacts& facts) {
  const auto& m = *e.workload.model;
  const auto& p = e.parallel;
  // Weights, activations and messages are 16-bit in an FP8 recipe too (core::activation_precision).
  const double bpe = core::bytes_per_element(core::activation_precision(e.training.precision));
  // Transformer Engine keeps each linear weight's FP8 copy and its transpose from the step's first
  // micro-batch to its last (fp8_weight_casts): 2 B per linear parameter beside the BF16 weight.
  const double fp8_copy_bytes = e.training.precision == core::Precision::fp8 ? 2 : 0;
  const PipelineLayout& layout = facts.layout;
  const core::Bytes per_layer = workload::activation_bytes_per_layer(m, shard_shape(e), p.recompute);
  const core::Bytes per_layer_moe =
      m.is_moe() ? workload::activation_bytes_per_layer(m, shard_shape(e), p.recompute, true) : per_layer;
  const double tokens_local = static_cast<double>(e.training.micro_batch * e.training.seq_len / p.cp);
  const double embed = static_cast<double>(m.vocab * m.hidden);

  MemoryEstimate out;
  // The peak is compared with what a framework can use: the reported capacity less the driver's
  // reserve, the context and each communicator's collective buffers (hw::MemoryReserve).
  // With DiLoCo every data-parallel group lies inside a worker of dp/K ranks (plan/diloco.hpp),
  // and the outer all-reduce's group is one more communicator.
  const int workers = diloco_workers(e);
  const int wdp = worker_dp(e, dp);
  out.communicators = communicators(p, wdp) + (workers > 1 ? 1 : 0);
  out.reported_capacity = e.cluster.device.hbm_capacity;
  out.capacity = e.cluster.device.usable_memory(out.communicators);
  out.reserved = out.reported_capacity - out.capacity;
  for (int s = 0; s < p.pp; ++s) {
    StageMemory st;
    st.stage = s;
    double params = 0, experts = 0;  // before TP (and, for routed experts, EP) sharding
    bool starts = false, ends = false;  // holds the first / last chunk of a route
    bool moe_layers = false;
    double linear_params = 0;  // the rank's share of its layers' weights (after TP and EP)
    for (int c : layout.chunks_of(s)) {
      const auto ci = static_cast<std::size_t>(c);
      for (int l = layout.first_layer[ci]; l < layout.first_layer[ci] + layout.layers[ci]; ++l) {
        linear_params += layer_shard(m, l, p.tp, p.ep).total();
        params += m.layer_params(l) - m.routed_expert_params(l);
        experts += m.routed_expert_params(l);
        moe_layers = moe_layers || m.moe_layer(l);
      }
      const bool first = layout.prev(c) < 0, last = layout.next(c) < 0;
      // The output head; a tied head shares the embedding when the same rank holds both ends.
      if (first) params += embed;
      if (last && !(m.tied_embeddings && layout.chunks_of(s).size() == static_cast<std::size_t>(layout.chunks))) params += embed;
      starts = starts || first;
      ends = ends || last;
    }
    // Routed experts are split over the EP group; everything else is replicated across it.
    params /= p.tp;
    experts /= static_cast<double>(p.tp) * p.ep;
    st.params = params + experts;
    st.expert_params = experts;
    params = st.params;
    // Sharding over the ranks that hold the same parameters: dp*cp (or the hybrid shard group)
    // for the dense part, dp*cp/ep (the expert-data-parallel group) for the routed experts.
    // ZeRO-1 shards the Adam states, ZeRO-2 also the gradients, ZeRO-3 also the weights.
    const double shard = p.shard_group > 0 ? p.shard_group : static_cast<double>(wdp) * p.cp;
    const double expert_shard = static_cast<double>(wdp) * p.cp / p.ep;
    auto sharded = [&](double per_param, int from_stage) {
      if (p.zero < from_stage) return params * per_param;
      return (params - experts) * per_param / shard + experts * per_param / expert_shard;
    };
    const double gbytes = grad_bytes_per_param(e.training);
    double weights = sharded(bpe, 3);
    if (p.zero >= 3) {
      // The gathered working set: the running layer and the prefetched next one, unsharded; or,
      // without resharding after forward, every layer of the rank between its forward and backward.
      // A layer gathers what the rank holds of it: its dense part / tp and, with EP, the rank's
      // experts (experts/ep of them) / tp.
      double widest = 0, all = 0;
      for (int c : layout.chunks_of(s))
        for (int l = layout.first_layer[static_cast<std::size_t>(c)];
             l < layout.first_layer[static_cast<std::size_t>(c)] + layout.layers[static_cast<std::size_t>(c)]; ++l) {
          const double held = layer_shard(m, l, p.tp, p.ep).total();
          widest = std::max(widest, held);
          all += held;
        }
      weights += (p.reshard_after_forward ? 2 * widest : all) * (bpe + fp8_copy_bytes);
    }
    weights += fp8_copy_bytes * (p.zero >= 3 ? 0 : linear_params);
    st.layer_params = linear_params;
    st.weights = core::Bytes(weights);
    st.gradients = core::Bytes(sharded(gbytes, 2));
    // Adam: the master weights (none when the weights are FP32 themselves: optimizer_step counts
    // them as the master) and two moments, by training.optimizer.
    const bool fp32_weights = core::stored_as_fp32(e.training.precision);
    // DiLoCo keeps its outer state beside them: the parameters at the last sync and the outer
    // momentum, fp32, on the optimizer's shard.
    st.optimizer = core::Bytes(sharded((fp32_weights ? 0 : e.training.optimizer.master) + 2 * e.training.optimizer.moment +
                                           (workers > 1 ? kOuterStateBytes : 0),
                                       1));
    // Per layer and micro-batch: an MoE layer keeps more than a dense one (the widest bound).
    const double per_layer_bytes = moe_layers ? per_layer_moe.value() : per_layer.value();
    double act = per_layer_bytes * facts.peak_layers[static_cast<std::size_t>(s)];
    if (ends) act += tokens_local * static_cast<double>(m.vocab) / p.tp * 4;  // fp32 logits for the loss
    if (starts) act += tokens_local * static_cast<double>(m.hidden) * bpe / (p.sequence_parallel ? p.tp : 1);
    st.activations = core::Bytes(act);
    const double act_msg = tokens_local * static_cast<double>(m.hidden) * bpe / (p.sequence_parallel ? p.tp : 1);
    // Transformer Engine's TP overlap registers one userbuffer per overlapped GEMM role (10 in
    // its default configuration: the AG, RS and bulk roles of qkv, proj, fc1 and fc2), each of
    // Megatron's input_shape [s*b/cp, h] in the activation type (TE pytorch/module/base.py,
    // initialize_ub; megatron/training/initialize.py, _initialize_tp_communicators).
    const double te_userbuffers = p.tp_comm_overlap ? kTeUserbuffers * tokens_local * static_cast<double>(m.hidden) * bpe : 0.0;
    st.buffers = core::Bytes(std::min(p.grad_bucket_bytes.value(), params * gbytes) +
                             (p.pp > 1 ? 2 * act_msg : 0) + te_userbuffers);
    if (st.total() > out.peak) {
      out.peak = st.total();
      out.peak_stage = s;
    }
    out.stages.push_back(st);
  }
  return out;
}

}  // namespace inflect::plan
