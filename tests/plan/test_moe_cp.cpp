// Mixture of experts and context parallelism in the plan layer: parameters and optimizer states by
// EP (hand-computed), the ring attention steps of CP, and
// the EP all-to-alls the compiler places, with bytes that follow top_k and the token count.
#include <doctest/doctest.h>

#include "inflect/plan/compiler.hpp"
#include "inflect/plan/memory.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

namespace {

constexpr double kExact = 1e-12;

// The GPT toy of test_memory.cpp (h = 1024, 8 layers, vocab 1000, tp2 pp2 dp2, ZeRO-1) with an
// MoE MLP on every layer: 4 GELU experts of 2048, top-2.
plan::Experiment moe_experiment() {
  plan::Experiment e = test::toy_gpt_experiment();
  e.name = "moe-case";
  auto& m = *e.workload.model;
  m.name = "toy-moe";
  m.moe.experts = 4;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 2048;
  e.parallel.ep = 2;
  return e;
}

}  // namespace

TEST_CASE("MoE layer parameters worked out by hand") {
  const auto m = *moe_experiment().workload.model;
  // One expert: fc1 h x 2048 + fc2 2048 x h + biases 2048 + 1024 = 4,197,376.
  CHECK(m.expert_params() == doctest::Approx(4197376.0).epsilon(kExact));
  // Layer: the dense layer 12,596,224 less its MLP (8h^2 + 5h = 8,393,728), plus the router
  // (h x 4 = 4,096) and four experts (16,789,504) = 20,996,096.
  CHECK(m.layer_params(0) == doctest::Approx(20996096.0).epsilon(kExact));
  CHECK(m.routed_expert_params(0) == doctest::Approx(16789504.0).epsilon(kExact));
  // A token uses two experts: 20,996,096 - 2 * 4,197,376 = 12,601,344.
  CHECK(m.active_layer_params(0) == doctest::Approx(12601344.0).epsilon(kExact));
}

TEST_CASE("memory by EP, by hand: routed experts split over ep, their optimizer over dp*cp/ep") {
  plan::Experiment e = moe_experiment();
  plan::MemoryEstimate mem = plan::estimate_memory(e, 2);
  const auto& s0 = mem.stages[0];
  // Stage 0: 4 layers. Replicated part (4 * 4,206,592 + embedding 1,024,000) / tp 2 = 8,925,184;
  // routed experts 4 * 16,789,504 / (tp 2 * ep 2) = 16,789,504; together 25,714,688.
  CHECK(s0.expert_params == doctest::Approx(16789504.0).epsilon(kExact));
  CHECK(s0.params == doctest::Approx(25714688.0).epsilon(kExact));
  // ZeRO-1: the replicated part's Adam states over dp*cp = 2, the experts' over dp*cp/ep = 1.
  CHECK(s0.optimizer.value() == doctest::Approx(8925184.0 * 12 / 2 + 16789504.0 * 12).epsilon(kExact));
  // Without EP every rank holds all four experts of its layers.
  e.parallel.ep = 1;
  plan::MemoryEstimate no_ep = plan::estimate_memory(e, 2);
  CHECK(no_ep.stages[0].params == doctest::Approx(8925184.0 + 2 * 16789504.0).epsilon(kExact));
}

TEST_CASE("the compiler dispatches and combines tokens by all-to-all over the EP group, bytes by top_k") {
  plan::Experiment e = moe_experiment();
  auto count = [](const plan::CompiledPlan& c, double& bytes) {
    int n = 0;
    for (const auto& op : c.graph.ops()) {
      if (op.type != workload::OpType::collective) continue;
      const auto& coll = c.graph.collectives()[op.payload];
      if (coll.kind != workload::CollectiveKind::all_to_all) continue;
      CHECK(coll.dim == workload::ParallelDim::ep);
      CHECK(c.graph.groups()[coll.group].members.size() == 2);
      bytes = coll.bytes.value();
      ++n;
    }
    return n;
  };
  plan::CompileOptions full;
  full.fidelity = plan::Fidelity::full;
  double bytes = 0;
  const int n = count(plan::compile(e, full), bytes);
  // 8 ranks x 4 layers each x 4 micro-batches x (dispatch + combine) x (forward + backward), plus
  // the recomputed forward (full recomputation): 3 x 2 = 6 all-to-alls per layer and micro-batch.
  CHECK(n == 8 * 4 * 4 * 6);
  // Each rank sends its 1,024 tokens x top_k 2 copies of h = 1024 bf16 values: 4,194,304 bytes.
  CHECK(bytes == doctest::Approx(1024.0 * 2 * 1024 * 2).epsilon(kExact));
  e.workload.model->moe.top_k = 1;
  count(plan::compile(e, full), bytes);
  CHECK(bytes == doctest::Approx(1024.0 * 1 * 1024 * 2).epsilon(kExact));
  // No EP, no all-to-all.
  e.parallel.ep = 1;
  CHECK(count(plan::compile(e, full), bytes) == 0);
}

TEST_CASE("context parallelism runs ring attention: cp-1 KV hops per layer, each overlapping a core step") {
  plan::Experiment e = moe_experiment();  // the toy shape; experts play no part here
  e.workload.model->moe = {};
  e.parallel.ep = 1;
  e.parallel.cp = 2;
  e.parallel.dp = 1;  // tp2 cp2 pp2 on 8 devices; m = 8 micro-batches
  plan::CompileOptions full;
  full.fidelity = plan::Fidelity::full;
  const plan::CompiledPlan c = plan::compile(e, full);
  int kv = 0, kv_dkv = 0;
  double bytes = 0;
  for (const auto& op : c.graph.ops()) {
    if (op.type != workload::OpType::collective) continue;
    const auto& coll = c.graph.collectives()[op.payload];
    if (coll.name == "cp_ring_kv") {
      ++kv;
      bytes = coll.bytes.value();
    }
    if (coll.name == "cp_ring_kv_dkv") ++kv_dkv;
  }
  // 8 ranks x 4 layers x 8 micro-batches x 1 hop x (send + receive), in the forward and in the
  // recomputed forward (full recomputation); K, V and their gradients in backward.
  CHECK(kv == 8 * 4 * 8 * 2 * 2);
  CHECK(kv_dkv == 8 * 4 * 8 * 2);
  // Local K and V: 2 * 512 tokens * kv width 1024 / tp 2 * 2 bytes.
  CHECK(bytes == doctest::Approx(2.0 * 512 * 512 * 2).epsilon(kExact));
}
