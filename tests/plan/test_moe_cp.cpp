// Mixture of experts and context parallelism in the plan layer: parameters and optimizer states by
// EP (hand-computed), the ring attention steps of CP, and
// the EP all-to-alls the compiler places, with bytes that follow top_k and the token count.
#include <doctest/doctest.h>

#include <map>
#include <string>

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
    const auto all = c.graph.expanded();  // replicas written out: every rank's ops
    for (const auto& op : all.ops()) {
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
  const auto all = c.graph.expanded();
  for (const auto& op : all.ops()) {
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

namespace {

// The MoE toy over tp 1, pp 2, dp 4 with ep 2 on the 8-device node: the expert-data-parallel
// group (the ranks holding the same experts) is dp*cp/ep = 2 ranks. Global batch 8: m = 2.
plan::Experiment moe_edp2_experiment(int zero) {
  plan::Experiment e = moe_experiment();
  e.parallel.tp = 1;
  e.parallel.dp = 4;
  e.parallel.ep = 2;
  e.parallel.zero = zero;
  return e;
}

}  // namespace

TEST_CASE("memory by ZeRO-2 and ZeRO-3 with EP, by hand: dense over dp*cp, routed experts over dp*cp/ep") {
  // Stage 0 (tp 1): 4 MoE layers and the embedding. Dense part D = 4 * (20,996,096 - 16,789,504)
  // + 1,000 x 1,024 = 4 * 4,206,592 + 1,024,000 = 17,850,368; the rank's routed experts
  // E = 4 * 16,789,504 / ep 2 = 33,579,008. Sharded: D over dp*cp = 4, E over dp*cp/ep = 2.
  const double D = 17850368.0, E = 33579008.0;
  const plan::StageMemory z2 = plan::estimate_memory(moe_edp2_experiment(2), 4).stages[0];
  CHECK(z2.expert_params == doctest::Approx(E).epsilon(kExact));
  CHECK(z2.params == doctest::Approx(D + E).epsilon(kExact));
  // ZeRO-2: bf16 weights whole, 51,429,376 x 2 = 102,858,752; fp32 grads D*4/4 + E*4/2 =
  // 17,850,368 + 67,158,016 = 85,008,384; Adam D*12/4 + E*12/2 = 53,551,104 + 201,474,048 =
  // 255,025,152.
  CHECK(z2.weights.value() == doctest::Approx(102858752.0).epsilon(kExact));
  CHECK(z2.gradients.value() == doctest::Approx(85008384.0).epsilon(kExact));
  CHECK(z2.optimizer.value() == doctest::Approx(255025152.0).epsilon(kExact));
  // ZeRO-3: the weight shard D*2/4 + E*2/2 = 8,925,184 + 33,579,008 = 42,504,192, plus two gathered
  // layers of what the rank holds of a layer: dense 4,206,592 and its 2 of the 4 experts
  // 8,394,752 = 12,601,344 parameters, x 2 layers x 2 bytes = 50,405,376 (not the layer's 4
  // experts: 20,996,096 x 4 = 83,984,384). Gradients and optimizer as ZeRO-2.
  const plan::StageMemory z3 = plan::estimate_memory(moe_edp2_experiment(3), 4).stages[0];
  CHECK(z3.weights.value() == doctest::Approx(42504192.0 + 50405376.0).epsilon(kExact));
  CHECK(z3.gradients.value() == doctest::Approx(85008384.0).epsilon(kExact));
  CHECK(z3.optimizer.value() == doctest::Approx(255025152.0).epsilon(kExact));
  // ep = dp = 4: every rank holds its own experts (E = 4 * 16,789,504 / 4 = 16,789,504), a group
  // of one: they are not sharded at all, the dense part still is.
  plan::Experiment e = moe_edp2_experiment(3);
  e.parallel.ep = 4;
  const plan::StageMemory own = plan::estimate_memory(e, 4).stages[0];
  const double E4 = 16789504.0;
  CHECK(own.optimizer.value() == doctest::Approx(D * 12 / 4 + E4 * 12).epsilon(kExact));
  CHECK(own.gradients.value() == doctest::Approx(D * 4 / 4 + E4 * 4).epsilon(kExact));
  // Gathered: two layers of 4,206,592 + 4,197,376 (one expert) parameters.
  CHECK(own.weights.value() == doctest::Approx(D * 2 / 4 + E4 * 2 + 2 * (4206592.0 + 4197376.0) * 2).epsilon(kExact));
}

TEST_CASE("ZeRO-2/3 with EP: expert gradients reduce-scatter and expert weights gather over the expert-DP group") {
  plan::CompileOptions full;
  full.fidelity = plan::Fidelity::full;
  struct Seen {
    int n = 0;
    double bytes = 0;        // of one op (all equal, checked)
    double rank0_bytes = 0;  // summed over rank 0's ops
    std::size_t group = 0;
  };
  auto tally = [](const plan::CompiledPlan& c) {
    std::map<std::string, Seen> out;
    const auto all = c.graph.expanded();  // replicas written out: every rank's ops
    for (const auto& op : all.ops()) {
      if (op.type != workload::OpType::collective) continue;
      const auto& coll = c.graph.collectives()[op.payload];
      Seen& s = out[coll.name];
      ++s.n;
      s.bytes = coll.bytes.value();
      if (op.rank == 0) s.rank0_bytes += coll.bytes.value();
      s.group = c.graph.groups()[coll.group].members.size();
    }
    return out;
  };
  // ZeRO-3: one layer is dense 4,206,592 + the rank's 2 experts 8,394,752 parameters. 8 ranks x 4
  // layers x m = 2 x (forward + backward) gathers of each part: the dense part over dp = 4
  // (8,413,184 bf16 bytes), the experts over the expert-DP pair (16,789,504 bytes).
  auto z3 = tally(plan::compile(moe_edp2_experiment(3), full));
  CHECK(z3["dp_ag_layer_params"].n == 8 * 4 * 2 * 2);
  CHECK(z3["dp_ag_layer_params"].group == 4);
  CHECK(z3["dp_ag_layer_params"].bytes == doctest::Approx(4206592.0 * 2).epsilon(kExact));
  CHECK(z3["dp_ag_layer_expert_params"].n == 8 * 4 * 2 * 2);
  CHECK(z3["dp_ag_layer_expert_params"].group == 2);
  CHECK(z3["dp_ag_layer_expert_params"].bytes == doctest::Approx(8394752.0 * 2).epsilon(kExact));
  // Expert gradients: one reduce-scatter per layer and micro-batch, fp32: 8,394,752 x 4 bytes.
  CHECK(z3["dp_rs_expert_grads"].n == 8 * 4 * 2);
  CHECK(z3["dp_rs_expert_grads"].group == 2);
  CHECK(z3["dp_rs_expert_grads"].bytes == doctest::Approx(8394752.0 * 4).epsilon(kExact));
  CHECK(z3.count("dp_ag_expert_params") == 0);  // the next forward gathers
  CHECK(z3.count("dp_ar_expert_grads") == 0);

  // ZeRO-2: expert gradients reduce-scattered every micro-batch (in buckets with the dense ones):
  // rank 0 sends 2 micro-batches x 4 layers x 33,579,008 bytes; its expert parameters (E =
  // 33,579,008, bf16) are gathered once after the optimizer, over the pair.
  auto z2 = tally(plan::compile(moe_edp2_experiment(2), full));
  CHECK(z2["dp_rs_expert_grads"].group == 2);
  CHECK(z2["dp_rs_expert_grads"].rank0_bytes == doctest::Approx(2 * 4 * 8394752.0 * 4).epsilon(kExact));
  CHECK(z2["dp_ag_expert_params"].n == 8);
  CHECK(z2["dp_ag_expert_params"].group == 2);
  CHECK(z2["dp_ag_expert_params"].bytes == doctest::Approx(33579008.0 * 2).epsilon(kExact));
  CHECK(z2.count("dp_ag_layer_expert_params") == 0);
  // ZeRO-1 reduces the same expert gradients once, after the last micro-batch.
  auto z1 = tally(plan::compile(moe_edp2_experiment(1), full));
  CHECK(z1["dp_rs_expert_grads"].rank0_bytes == doctest::Approx(4 * 8394752.0 * 4).epsilon(kExact));

  // ep = dp: each rank holds its experts alone; no expert collective at all, the dense ones stay.
  for (int zero : {2, 3}) {
    CAPTURE(zero);
    plan::Experiment e = moe_edp2_experiment(zero);
    e.parallel.ep = 4;
    auto own = tally(plan::compile(e, full));
    for (const auto& [name, seen] : own) CHECK_MESSAGE(name.find("expert") == std::string::npos, name);
    CHECK(own["dp_rs_grads"].n > 0);
  }
}
