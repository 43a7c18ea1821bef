// What training frameworks do differently, in the plan layer (docs/frameworks.md): Megatron-LM's
// scatter/gather pipeline sends, Megatron-Core's overlapped parameter gather, Megatron-DeepSpeed's
// embedding-aware pipeline split, the optimizer's state precisions, and torchtitan's op-level
// selective recompute. Every figure worked out by hand on the toy GPT (h = 1024, 8 layers,
// seq 1024, micro-batch 1, tp2 pp2 dp2, ZeRO-1; 4 micro-batches per step).
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "inflect/plan/compiler.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/plan/schedule.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

namespace {

struct CollStats {
  int count = 0;
  double bytes = 0;  // of the last one seen
};

std::map<std::string, CollStats> collectives(const plan::Experiment& e) {
  plan::CompileOptions full;
  full.fidelity = plan::Fidelity::full;
  const plan::CompiledPlan c = plan::compile(e, full);
  std::map<std::string, CollStats> out;
  const auto all = c.graph.expanded();
  for (const auto& op : all.ops()) {
    if (op.type != workload::OpType::collective) continue;
    const auto& coll = c.graph.collectives()[op.payload];
    ++out[coll.name].count;
    out[coll.name].bytes = coll.bytes.value();
  }
  return out;
}

}  // namespace

TEST_CASE("scatter/gather pipeline sends: 1/tp per TP rank over the network, all-gathered on arrival") {
  plan::Experiment e = test::toy_gpt_experiment();
  // The activation of one micro-batch: 1024 tokens x h 1024 x 2 B = 2 MiB.
  auto plain = collectives(e);
  CHECK(plain["pp_act"].bytes == doctest::Approx(2.0 * 1024 * 1024));
  CHECK(plain.count("pp_act_gather") == 0);
  e.parallel.pp_scatter_gather = true;
  auto sg = collectives(e);
  // Each of the tp = 2 ranks sends its half (1 MiB); the receivers all-gather the 2 MiB.
  CHECK(sg["pp_act"].bytes == doctest::Approx(1.0 * 1024 * 1024));
  CHECK(sg["pp_grad"].bytes == doctest::Approx(1.0 * 1024 * 1024));
  CHECK(sg["pp_act_gather"].bytes == doctest::Approx(2.0 * 1024 * 1024));
  // One gather per received message: as many as the receives of activations and gradients.
  CHECK(sg["pp_act_gather"].count == plain["pp_act"].count / 2);
  CHECK(sg["pp_grad_gather"].count == plain["pp_grad"].count / 2);
  // With sequence parallelism the message is already split 1/tp: no scatter/gather.
  e.parallel.sequence_parallel = true;
  CHECK(collectives(e).count("pp_act_gather") == 0);
}

TEST_CASE("overlap_param_gather: ZeRO-1's parameter all-gather moves under the first forward, per layer") {
  plan::Experiment e = test::toy_gpt_experiment();
  auto plain = collectives(e);
  CHECK(plain["dp_ag_params"].count > 0);
  CHECK(plain.count("dp_ag_layer_params") == 0);
  e.parallel.overlap_param_gather = true;
  auto ov = collectives(e);
  CHECK(ov.count("dp_ag_params") == 0);
  // 8 ranks x 4 layers each, once per step (micro-batch 0), as many collective ops as members.
  CHECK(ov["dp_ag_layer_params"].count == 8 * 4);
  // One layer's parameters on a rank (12h^2 + 13h = 12,596,224 / tp 2) in BF16.
  CHECK(ov["dp_ag_layer_params"].bytes == doctest::Approx(12596224.0 / 2 * 2));
}

TEST_CASE("Megatron-DeepSpeed's split counts the embedding and head as layers") {
  // BLOOM-176B: 70 layers + 2 over 12 stages = 6 each; first and last keep 5 layers.
  const auto bloom = plan::embedding_pipeline_split(70, 12);
  REQUIRE(bloom.size() == 12);
  CHECK(bloom.front() == 5);
  CHECK(bloom.back() == 5);
  CHECK(bloom[1] == 6);
  // 8 layers + 2 over 4 stages: partition_uniform gives 3, 3, 2, 2; less the ends: 2, 3, 2, 1.
  CHECK(plan::embedding_pipeline_split(8, 4) == std::vector<int>{2, 3, 2, 1});
  // A stage left without a layer: none.
  CHECK(plan::embedding_pipeline_split(2, 4).empty());
}

TEST_CASE("optimizer state precisions: NeMo's remainders keep 10 B/param of Adam state, not 12") {
  plan::Experiment e = test::toy_gpt_experiment();
  const double fp32_master = plan::estimate_memory(e, 2).stages[0].optimizer.value();
  e.training.optimizer.master = 2;
  e.training.optimizer.remainder = true;
  const double remainder = plan::estimate_memory(e, 2).stages[0].optimizer.value();
  CHECK(remainder == doctest::Approx(fp32_master * 10 / 12));
  e.training.optimizer.moment = 2;  // BF16 moments too: 2 + 2 x 2 = 6 B/param
  CHECK(plan::estimate_memory(e, 2).stages[0].optimizer.value() == doctest::Approx(fp32_master * 6 / 12));
  // BF16 main gradients halve the gradient memory and what DP reduces.
  const double grads = plan::estimate_memory(e, 2).stages[0].gradients.value();
  e.training.optimizer.gradient = 2;
  CHECK(plan::estimate_memory(e, 2).stages[0].gradients.value() == doctest::Approx(grads / 2));
}
