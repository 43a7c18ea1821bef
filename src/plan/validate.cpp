#include "inflect/plan/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string_view>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/diloco.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/plan/schedule.hpp"

namespace inflect::plan {

namespace {

/// Where the rules put what they find: each problem with its message (validate), or only whether
/// there is one (passes), so that the search's filter formats no text.
class Findings {
 public:
  explicit Findings(std::vector<Problem>* out) : out_(out) {}
  /// Records a broken rule; `explain` builds its Problem and runs only when messages are kept.
  template <class Explain>
  void add(Explain&& explain) {
    ++count_;
    if (out_ != nullptr) out_->push_back(explain());
  }
  int count() const { return count_; }

 private:
  std::vector<Problem>* out_;
  int count_ = 0;
};

/// "1, 2, 4, 8": the divisors of n up to limit.
std::string divisors_up_to(std::int64_t n, std::int64_t limit) {
  std::vector<std::string> out;
  for (std::int64_t d = 1; d <= n && d <= limit; ++d)
    if (n % d == 0) out.push_back(std::to_string(d));
  return core::join(out);
}

/// A problem whose message ends with the values that would be allowed.
Problem with_allowed(std::string key, const std::string& what, std::string allowed) {
  std::string message = fmt::format("{}; allowed: {}", what, allowed);
  return Problem{std::move(key), std::move(message), std::move(allowed)};
}

/// A degree or count below its minimum (the loader's option table already rejects these; a plan
/// built in code reaches them). The rules after it would divide by the value.
Problem out_of_range(std::string key, std::string_view name, std::int64_t value, std::string allowed) {
  return with_allowed(std::move(key), fmt::format("{}={} is out of range", name, value), std::move(allowed));
}

std::int64_t devices_of(const Experiment& e) {
  return std::int64_t{e.cluster.nodes} * e.cluster.topology.devices_per_node;
}

void check_tensor_parallel(const Experiment& e, Findings& f) {
  const auto& c = e.cluster;
  const auto& p = e.parallel;
  const std::int64_t per_node = c.topology.devices_per_node;
  // Every later rule divides by the node or the device count.
  if (per_node < 1 || c.nodes < 1) {
    f.add([&] {
      return Problem{"cluster",
                     fmt::format("the cluster has {} nodes of {} devices; a plan needs at least one device", c.nodes, per_node), ""};
    });
    return;
  }
  if (p.tp < 1) {
    f.add([&] { return out_of_range("parallel.tp", "tp", p.tp, "1 or more"); });
    return;
  }
  // TP exchanges activations inside every layer (an all-reduce per block, or with sequence
  // parallelism an all-gather and a reduce-scatter), which only pays on one node's scale-up
  // fabric: no tensor-parallel group may span nodes, so tp fits in the node and divides it.
  if (p.tp > per_node)
    f.add([&] {
      return with_allowed("parallel.tp",
                          fmt::format("tp={} exceeds the {} devices of one node's scale-up domain (topology '{}')", p.tp, per_node,
                                      c.topology.name),
                          divisors_up_to(per_node, per_node));
    });
  else if (per_node % p.tp != 0)
    f.add([&] {
      return with_allowed("parallel.tp",
                          fmt::format("tp={} does not divide the {} devices of one node, so some tensor-parallel groups would span nodes",
                                      p.tp, per_node),
                          divisors_up_to(per_node, per_node));
    });

  const auto& m = e.workload.model;
  if (!m) return;
  const std::int64_t heads = m->heads;
  const std::int64_t kv = m->kv_heads > 0 ? m->kv_heads : m->heads;
  // A tp that is allowed divides the heads, the KV heads and the node at once.
  auto allowed = [&] { return divisors_up_to(std::gcd(std::gcd(heads, kv), per_node), per_node); };
  // Megatron splits attention by heads: each TP rank computes heads/tp whole query heads (the
  // QKV and output projections are split along them).
  if (heads % p.tp != 0)
    f.add([&] {
      return with_allowed("parallel.tp", fmt::format("tp={} does not divide the {} attention heads of model '{}'", p.tp, heads, m->name),
                          allowed());
    });
  // Grouped-query attention: each TP rank holds kv_heads/tp whole key/value heads. Megatron-Core
  // requires num_query_groups % tp == 0 (TransformerConfig raises otherwise): it does not
  // replicate KV heads over the ranks of a tp larger than kv_heads (inference engines do), and
  // neither do the layer costs (workload/layer_costs.cpp: kv_width = kv_heads * head_dim / tp).
  if (kv % p.tp != 0)
    f.add([&] {
      return with_allowed("parallel.tp",
                          fmt::format("tp={} does not divide the {} key/value heads of model '{}' (grouped-query attention shards "
                                      "whole KV heads)",
                                      p.tp, kv, m->name),
                          allowed());
    });
}

void check_context_parallel(const Experiment& e, Findings& f) {
  const auto& p = e.parallel;
  const auto& t = e.training;
  if (p.cp < 1) {
    f.add([&] { return out_of_range("parallel.cp", "cp", p.cp, "1 or more"); });
    return;
  }
  // Ring attention gives each context-parallel rank an equal slice of every sequence.
  if (t.seq_len > 0 && t.seq_len % p.cp != 0)
    f.add([&] {
      return Problem{"parallel.cp",
                     fmt::format("cp={} does not divide seq_len={}: context parallelism splits every sequence into cp equal chunks", p.cp,
                                 t.seq_len),
                     ""};
    });
}

void check_pipeline_parallel(const Experiment& e, Findings& f) {
  const auto& p = e.parallel;
  if (p.pp < 1) {
    f.add([&] { return out_of_range("parallel.pp", "pp", p.pp, "1 or more"); });
    return;
  }
  if (p.dp < 0) {
    f.add([&] { return out_of_range("parallel.dp", "dp", p.dp, "0 (derive it from the devices) or more"); });
    return;
  }
  // Every device holds exactly one rank of the tp x cp x pp x dp grid.
  const std::int64_t devices = devices_of(e);
  const std::int64_t inner = std::int64_t{p.tp} * p.pp * p.cp;
  auto cluster = [&] {
    return fmt::format("{} devices ({} nodes * {} per node)", devices, e.cluster.nodes, e.cluster.topology.devices_per_node);
  };
  if (p.dp > 0) {
    if (inner * p.dp != devices)
      f.add([&] {
        const bool derivable = devices % inner == 0;
        return Problem{"parallel.dp",
                       fmt::format("tp*pp*cp*dp = {}*{}*{}*{} = {} but the cluster has {}; {}", p.tp, p.pp, p.cp, p.dp,
                                   inner * p.dp, cluster(),
                                   derivable ? fmt::format("allowed: dp={} (or leave dp out)", devices / inner)
                                             : fmt::format("tp*pp*cp = {} does not divide the devices", inner)),
                       derivable ? std::to_string(devices / inner) : ""};
      });
  } else if (devices % inner != 0) {
    f.add([&] {
      return Problem{"parallel",
                     fmt::format("tp*pp*cp = {}*{}*{} = {} does not divide the cluster's {}, so dp cannot be derived", p.tp, p.pp, p.cp,
                                 inner, cluster()),
                     ""};
    });
  }
  // Pipeline stages hold whole layers, as many each unless layers_per_stage splits them unevenly
  // (the schedule stage checks that split).
  const auto& m = e.workload.model;
  if (m && p.layers_per_stage.empty() && m->layers % p.pp != 0)
    f.add([&] {
      return with_allowed("parallel.pp", fmt::format("pp={} does not divide the {} layers of model '{}'", p.pp, m->layers, m->name),
                          divisors_up_to(m->layers, m->layers));
    });
}

void check_expert_parallel(const Experiment& e, Findings& f) {
  const auto& p = e.parallel;
  if (p.ep < 1) {
    f.add([&] { return out_of_range("parallel.ep", "ep", p.ep, "1 or more"); });
    return;
  }
  if (p.ep == 1) return;
  // Expert parallelism splits the routed experts of the MoE layers; a dense model has none.
  const auto& m = e.workload.model;
  if (!m || !m->is_moe()) {
    f.add([&] {
      return Problem{"parallel.ep", fmt::format("ep={} needs a mixture-of-experts model (model.moe); this model is dense", p.ep), ""};
    });
    return;
  }
  // Each expert-parallel rank holds experts/ep whole experts.
  if (m->moe.experts % p.ep != 0)
    f.add([&] {
      return with_allowed("parallel.ep", fmt::format("ep={} does not divide the {} experts of model '{}'", p.ep, m->moe.experts, m->name),
                          divisors_up_to(m->moe.experts, m->moe.experts));
    });
  // Megatron-Core folds expert parallelism inside data parallelism: each group of ep consecutive
  // data-parallel ranks splits the experts.
  const int dp = derive_dp(e);
  if (dp % p.ep != 0)
    f.add([&] {
      return with_allowed("parallel.ep",
                          fmt::format("ep={} does not divide dp={}: expert parallelism is folded inside data parallelism", p.ep, dp),
                          divisors_up_to(dp, dp));
    });
}

void check_micro_batch(const Experiment& e, Findings& f) {
  const auto& t = e.training;
  if (t.micro_batch < 1) {
    f.add([&] { return out_of_range("training.micro_batch", "micro_batch", t.micro_batch, "1 or more"); });
    return;
  }
  // A compiled step trains on sequences; a replayed trace brings its own batch.
  if (e.workload.model && t.global_batch < 1) {
    f.add([&] { return out_of_range("training.global_batch", "global_batch", t.global_batch, "1 or more"); });
    return;
  }
  if (t.global_batch < 1) return;
  const int dp = derive_dp(e);
  const std::int64_t per_step = std::int64_t{dp} * t.micro_batch;
  // Every data-parallel rank runs the same whole number of micro-batches per step.
  if (t.global_batch % per_step != 0) {
    f.add([&] {
      const std::int64_t lo = t.global_batch / per_step * per_step;
      std::string near = lo > 0 ? fmt::format("{} or {}", lo, lo + per_step) : std::to_string(per_step);
      std::string message = fmt::format("global_batch={} is not divisible by dp*micro_batch = {}*{} = {}: every data-parallel rank runs a "
                                        "whole number of micro-batches; nearest allowed: {}",
                                        t.global_batch, dp, t.micro_batch, per_step, near);
      return Problem{"training.global_batch", std::move(message), std::move(near)};
    });
    return;
  }
  // The execution graph numbers an op's micro-batch in 16 bits (workload::Op::micro_batch).
  constexpr std::int64_t kMaxMicroBatches = 65535;
  if (t.global_batch / per_step > kMaxMicroBatches)
    f.add([&] {
      return Problem{"training.global_batch",
                     fmt::format("global_batch={} makes {} micro-batches per step (global_batch / (dp * micro_batch)); at most {} are "
                                 "supported",
                                 t.global_batch, t.global_batch / per_step, kMaxMicroBatches),
                     ""};
    });
}

void check_sharding(const Experiment& e, Findings& f) {
  const auto& p = e.parallel;
  // ZeRO shards over the data-parallel group: 1 the optimizer states, 2 also the gradients, 3
  // also the parameters.
  if (p.zero < 0 || p.zero > 3)
    f.add([&] { return with_allowed("parallel.zero", fmt::format("zero={} is not a ZeRO stage", p.zero), "0, 1, 2, 3"); });
  // FSDP is ZeRO-3 under torch's name (the loader sets zero: 3 for fsdp: true).
  if (p.fsdp && p.zero != 3)
    f.add([&] {
      return Problem{"parallel.fsdp",
                     fmt::format("fsdp: true shards parameters, gradients and optimizer states (zero 3), but zero is {}", p.zero), ""};
    });
  if (p.shard_group < 0) {
    f.add([&] { return out_of_range("parallel.shard_group", "shard_group", p.shard_group, "0 (shard over all of dp*cp) or more"); });
    return;
  }
  if (p.shard_group == 0) return;
  // Hybrid sharding shards within groups and replicates across them: with nothing sharded there
  // is nothing to group.
  if (p.zero == 0)
    f.add([] {
      return Problem{"parallel.shard_group", "shard_group shards within groups and needs zero >= 1 (or fsdp: true)", ""};
    });
  // The groups tile the dp*cp ranks that share one model shard (with DiLoCo, one worker's).
  const int dp = derive_dp(e), workers = diloco_workers(e);
  const bool per_worker = workers > 1 && dp % workers == 0;
  const std::int64_t group = std::int64_t{per_worker ? dp / workers : dp} * e.parallel.cp;
  if (group % p.shard_group != 0)
    f.add([&] {
      return with_allowed("parallel.shard_group",
                          fmt::format("shard_group={} does not divide {} = {}", p.shard_group,
                                      per_worker ? "a DiLoCo worker's dp*cp, dp/workers*cp" : "dp*cp", group),
                          divisors_up_to(group, group));
    });
}

// training.diloco (plan/diloco.hpp): the workers tile the data-parallel ranks, and what lives
// inside a data-parallel group (expert parallelism) lies inside one worker.
void check_diloco(const Experiment& e, Findings& f) {
  if (!e.training.diloco) return;
  const DilocoSpec& d = *e.training.diloco;
  if (!e.workload.model) {
    f.add([] { return Problem{"training.diloco", "training.diloco compiles a model's steps; a recorded trace has one step of its own", ""}; });
    return;
  }
  if (d.sync_every < 1)
    f.add([&] { return out_of_range("training.diloco.sync_every", "sync_every", d.sync_every, "1 or more"); });
  // One worker has no one to synchronise with: that is synchronous training (plus an outer
  // optimizer whose cost is all DiLoCo would add), so it is refused rather than reported as DiLoCo.
  if (d.workers < 2) {
    f.add([&] {
      return out_of_range("training.diloco.workers", "workers", d.workers,
                          "2 or more (one worker is synchronous training: leave training.diloco out)");
    });
    return;
  }
  const int dp = derive_dp(e);
  if (dp % d.workers != 0) {
    f.add([&] {
      std::string allowed;
      for (int k = 2; k <= dp; ++k)
        if (dp % k == 0) allowed += (allowed.empty() ? "" : ", ") + std::to_string(k);
      return with_allowed("training.diloco.workers",
                          fmt::format("workers={} does not divide dp={}: the data-parallel ranks are split into workers of "
                                      "equal size",
                                      d.workers, dp),
                          allowed.empty() ? "none (dp is 1)" : allowed);
    });
    return;
  }
  const int per_worker = dp / d.workers;
  if (per_worker % e.parallel.ep != 0)
    f.add([&] {
      return Problem{"parallel.ep",
                     fmt::format("ep={} does not divide a DiLoCo worker's dp/workers = {}/{} = {}: expert parallelism is folded "
                                 "inside data parallelism, which is inside a worker",
                                 e.parallel.ep, dp, d.workers, per_worker),
                     ""};
    });
  // Streaming DiLoCo syncs each fragment once per H inner steps, at a different step: at most one
  // per step; a fragment is whole layers, so every pipeline stage holds a part of each.
  if (d.fragments < 1 || d.fragments > d.sync_every)
    f.add([&] {
      return out_of_range("training.diloco.fragments", "fragments", d.fragments,
                          fmt::format("1 to sync_every ({}): one fragment's sync per inner step at most", d.sync_every));
    });
  const auto& p = e.parallel;
  int fewest = e.workload.model->layers / std::max(p.pp, 1);
  for (int n : p.layers_per_stage) fewest = std::min(fewest, n);
  if (d.fragments > fewest)
    f.add([&] {
      return out_of_range("training.diloco.fragments", "fragments", d.fragments,
                          fmt::format("at most {}, the layers of the smallest pipeline stage: a fragment is whole layers", fewest));
    });
  if (d.compression == OuterCompression::topk && !(d.topk_fraction > 0 && d.topk_fraction <= 1))
    f.add([&] {
      return Problem{"training.diloco.topk_fraction",
                     fmt::format("topk_fraction={} is out of range; compression topk sends this fraction of the elements: "
                                 "allowed: a fraction in (0, 1]",
                                 d.topk_fraction),
                     "(0, 1]"};
    });
  if (!(d.token_multiplier > 0))
    f.add([&] {
      return Problem{"training.diloco.token_multiplier",
                     fmt::format("token_multiplier={} is out of range; allowed: a positive factor", d.token_multiplier), ""};
    });
}

void check_zero(const Experiment& e, Findings& f) {
  check_diloco(e, f);
  if (f.count() == 0) check_sharding(e, f);
}

/// The key a schedule problem points at: the setting the message is about.
const char* schedule_key(const ParallelPlan& p, const std::string& why) {
  if (why.find("layers_per_stage") != std::string::npos) return "parallel.layers_per_stage";
  if (why.find("virtual_stages") != std::string::npos && p.virtual_stages != 1) return "parallel.virtual_stages";
  if (p.schedule == Schedule::custom) return "parallel.custom_schedule";
  return "parallel.schedule";
}

void check_schedule(const Experiment& e, Findings& f) {
  const auto& p = e.parallel;
  const auto& t = e.training;
  // The micro-batch count is the micro_batch stage's; without a model there is no pipeline.
  if (!e.workload.model || t.global_batch < 1 || t.micro_batch < 1) return;
  const int dp = derive_dp(e);
  if (t.global_batch % (std::int64_t{dp} * t.micro_batch) != 0) return;
  ScheduleShape shape;
  try {
    shape = schedule_shape(e, dp);
  } catch (const core::Error& err) {  // a malformed custom step (the loader reports it at its rank)
    f.add([&] { return Problem{"parallel.custom_schedule", err.message(), ""}; });
    return;
  }
  // Each schedule has its own conditions on the pipeline depth, the micro-batch count and the
  // layers per model chunk (plan/schedule.cpp, schedule_problem).
  if (auto why = schedule_problem(p.schedule, shape); !why.empty()) {
    f.add([&] {
      return Problem{schedule_key(p, why),
                     fmt::format("schedule {}: {} (micro-batches per step: {} = global_batch / (dp * micro_batch))",
                                 schedule_name(p.schedule), why, shape.micro_batches),
                     ""};
    });
    return;
  }
  // A custom order must be a schedule: every step once, in dependency order, without deadlock.
  if (p.schedule == Schedule::custom) {
    const ScheduleReplay replay = replay_schedule(p.schedule, shape);
    if (!replay.valid)
      f.add([&] {
        return Problem{"parallel.custom_schedule",
                       fmt::format("the custom schedule cannot run: {} (micro-batches per step: {})", replay.problem, shape.micro_batches),
                       ""};
      });
  }
}

void check_sequence_parallel(const Experiment& e, Findings& f) {
  const auto& p = e.parallel;
  const auto& t = e.training;
  // Megatron's sequence parallelism splits the activations between the TP blocks (norms,
  // dropout) along the sequence: each TP rank keeps 1/tp of the cp slice's tokens.
  if (p.sequence_parallel && (t.seq_len / p.cp) % p.tp != 0)
    f.add([&] {
      return Problem{"parallel.sequence_parallel",
                     fmt::format("sequence parallelism needs seq_len/cp ({}) divisible by tp ({})", t.seq_len / p.cp, p.tp), ""};
    });
  // Transformer Engine's TP overlap pipelines the sequence-parallel all-gathers and
  // reduce-scatters with their GEMMs: without them there is nothing to overlap.
  if (p.tp_comm_overlap && (p.tp < 2 || !p.sequence_parallel))
    f.add([&] {
      return Problem{"parallel.tp_comm_overlap",
                     fmt::format("tp_comm_overlap overlaps the sequence-parallel all-gathers and reduce-scatters: it needs "
                                 "tp > 1 (tp is {}) and sequence_parallel: true",
                                 p.tp),
                     ""};
    });
}

void check_stage(const Experiment& e, Stage s, Findings& f) {
  switch (s) {
    case Stage::tensor_parallel: return check_tensor_parallel(e, f);
    case Stage::context_parallel: return check_context_parallel(e, f);
    case Stage::pipeline_parallel: return check_pipeline_parallel(e, f);
    case Stage::expert_parallel: return check_expert_parallel(e, f);
    case Stage::micro_batch: return check_micro_batch(e, f);
    case Stage::zero: return check_zero(e, f);
    case Stage::schedule: return check_schedule(e, f);
    case Stage::sequence_parallel: return check_sequence_parallel(e, f);
  }
}

}  // namespace

std::vector<Problem> validate(const Experiment& e) {
  std::vector<Problem> out;
  Findings f(&out);
  for (Stage s : kStages) {
    check_stage(e, s, f);
    if (f.count() > 0) break;
  }
  return out;
}

bool passes(const Experiment& e, Stage stage) {
  Findings f(nullptr);
  check_stage(e, stage, f);
  return f.count() == 0;
}

}  // namespace inflect::plan
