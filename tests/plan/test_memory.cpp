#include <doctest/doctest.h>

#include "inflect/plan/compiler.hpp"
#include "inflect/plan/memory.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

namespace {

constexpr double kExact = 1e-12;  // every figure below is an exact integer product

// GPT-style model: h = 1024, 16 heads, ffn 4h, 8 layers, vocab 1000.
// One layer = QKV 3h^2 + 3h, out proj h^2 + h, MLP 8h^2 + 5h, two LayerNorms 4h = 12h^2 + 13h
//           = 12 * 1048576 + 13 * 1024 = 12,596,224 parameters.
plan::Experiment toy_experiment() { return test::toy_gpt_experiment(); }

}  // namespace

TEST_CASE("memory of pipeline stage 0 worked out by hand (tp2 pp2 dp2, ZeRO-1, full recompute)") {
  plan::Experiment e = toy_experiment();
  REQUIRE(e.workload.model->layer_params() == doctest::Approx(12596224.0).epsilon(kExact));
  plan::MemoryEstimate m = plan::estimate_memory(e, 2);
  REQUIRE(m.stages.size() == 2);
  const auto& s0 = m.stages[0];
  // Stage 0 holds 4 layers and the input embedding (1000 x 1024), split over tp = 2:
  // (4 * 12,596,224 + 1,024,000) / 2 = 25,704,448 parameters.
  CHECK(s0.params == doctest::Approx(25704448.0).epsilon(kExact));
  CHECK(s0.weights.value() == doctest::Approx(25704448.0 * 2).epsilon(kExact));       // bf16
  CHECK(s0.gradients.value() == doctest::Approx(25704448.0 * 4).epsilon(kExact));     // fp32 main grads
  CHECK(s0.optimizer.value() == doctest::Approx(25704448.0 * 12 / 2).epsilon(kExact));  // Adam, over dp = 2
  // Full recompute keeps each layer's input, 2*s*b*h bytes = 2 * 1024 * 1 * 1024 = 2,097,152 (no SP,
  // so not divided by tp); 1F1B stage 0 of 2 holds min(2, 4) = 2 micro-batches: 4 layers * 2 *
  // 2,097,152 = 16,777,216, plus the embedding output s*b*h*2 = 2,097,152.
  CHECK(s0.activations.value() == doctest::Approx(16777216.0 + 2097152.0).epsilon(kExact));
  // Buffers: one 80 MB gradient bucket + two pipeline messages of s*b*h*2 = 2,097,152 bytes.
  CHECK(s0.buffers.value() == doctest::Approx(80e6 + 2 * 2097152.0).epsilon(kExact));
  CHECK(m.fits());
}

TEST_CASE("a plan whose memory exceeds HBM is reported as not fitting") {
  plan::Experiment e = toy_experiment();
  e.cluster.device.hbm_capacity = core::Bytes(100e6);  // 100 MB: less than stage 0's weights + grads
  plan::MemoryEstimate m = plan::estimate_memory(e, 2);
  CHECK_FALSE(m.fits());
  CHECK(m.peak.value() > 100e6);
}

TEST_CASE("the peak is compared with the device's usable memory: reported less the reserve of the plan's communicators") {
  // The toy plan tp2 pp2 dp2 runs collectives on three communicators: its TP group, its PP pair and
  // its data-parallel group. A device reporting 80 GB with a 0.5 GB driver reserve, a 0.6 GB context
  // and 0.4 GB of buffers a communicator leaves 80 - 0.5 - 0.6 - 3 x 0.4 = 77.7 GB.
  plan::Experiment e = toy_experiment();
  e.cluster.device.hbm_capacity = core::Bytes(80e9);
  e.cluster.device.memory_reserve.driver = core::Bytes(0.5e9);
  e.cluster.device.memory_reserve.context = core::Bytes(0.6e9);
  e.cluster.device.memory_reserve.per_communicator = core::Bytes(0.4e9);
  plan::MemoryEstimate m = plan::estimate_memory(e, 2);
  CHECK(m.communicators == 3);
  CHECK(m.reported_capacity.value() == 80e9);
  CHECK(m.capacity.value() == doctest::Approx(77.7e9).epsilon(kExact));
  CHECK(m.reserved.value() == doctest::Approx(2.3e9).epsilon(kExact));
  // A plan that needs more than 77.7 GB no longer fits although it is below the 80 GB reported.
  e.cluster.device.hbm_capacity = core::Bytes(m.peak.value() + 2e9);
  CHECK_FALSE(plan::estimate_memory(e, 2).fits());
}

TEST_CASE("communicators: one per parallel dimension of more than one rank, and the expert-data-parallel group") {
  plan::ParallelPlan p;
  CHECK(plan::communicators(p, 1) == 0);  // one GPU: none
  CHECK(plan::communicators(p, 8) == 1);  // plain data parallelism
  p.tp = 8;
  p.pp = 4;
  CHECK(plan::communicators(p, 16) == 3);  // tp, pp, dp
  p.cp = 2;
  CHECK(plan::communicators(p, 1) == 4);  // tp, cp, pp and the dp*cp = 2 gradient group
  p.ep = 2;
  // ep 2 over dp*cp = 16: the EP group and the expert-data-parallel group of 16/2 = 8 ranks.
  CHECK(plan::communicators(p, 8) == 6);
}

TEST_CASE("ZeRO-1 divides only the optimizer states by the data-parallel group") {
  plan::Experiment e = toy_experiment();
  plan::MemoryEstimate z1 = plan::estimate_memory(e, 2);
  e.parallel.zero = 0;
  plan::MemoryEstimate z0 = plan::estimate_memory(e, 2);
  CHECK(z0.stages[0].optimizer.value() == doctest::Approx(2 * z1.stages[0].optimizer.value()).epsilon(kExact));
  CHECK(z0.stages[0].weights.value() == doctest::Approx(z1.stages[0].weights.value()).epsilon(kExact));
}

TEST_CASE("memory by schedule, by hand: interleaved holds more activations, DualPipe twice the parameters") {
  // The toy plan has m = global_batch / (dp * micro_batch) = 8 / 2 = 4 micro-batches.
  plan::Experiment e = toy_experiment();
  const double layer_act = 2097152.0;  // full recompute: 2*s*b*h per layer and micro-batch
  const double embed_out = 2097152.0;

  // Interleaved, V = 2: 4 chunks of 2 layers, stage 0 holds chunks 0 and 2. Its warm-up is
  // (p-s-1)*2 + (V-1)*p = 2 + 2 = 4 chunk-forwards, then one more before the first backward:
  // 5 chunks * 2 layers = 10 layer-micro-batches (1F1B: 2 micro-batches * 4 layers = 8).
  e.parallel.schedule = plan::Schedule::interleaved;
  e.parallel.virtual_stages = 2;
  plan::MemoryEstimate il = plan::estimate_memory(e, 2);
  CHECK(il.stages[0].activations.value() == doctest::Approx(10 * layer_act + embed_out).epsilon(kExact));
  CHECK(il.stages[0].params == doctest::Approx(25704448.0).epsilon(kExact));  // same layers as 1F1B

  // DualPipe: rank 0 holds chunk 0 (layers 0-3, direction 0's start: the embedding) and chunk 3
  // (layers 4-7 of the second copy, direction 1's end: the output head): (8 * 12,596,224 +
  // 2 * 1,024,000) / 2 = 51,408,896 parameters, twice 1F1B's layers.
  e.parallel.schedule = plan::Schedule::dualpipe;
  e.parallel.virtual_stages = 1;
  plan::MemoryEstimate dp = plan::estimate_memory(e, 2);
  CHECK(dp.stages[0].params == doctest::Approx(51408896.0).epsilon(kExact));
  CHECK(dp.stages[0].optimizer.value() == doctest::Approx(51408896.0 * 12 / 2).epsilon(kExact));

  // DualPipeV: rank 0 holds chunks 0 and 3 of 4 (layers 0-1 and 6-7): one copy, both ends.
  e.parallel.schedule = plan::Schedule::dualpipev;
  plan::MemoryEstimate dv = plan::estimate_memory(e, 2);
  CHECK(dv.stages[0].params == doctest::Approx((4 * 12596224.0 + 2 * 1024000.0) / 2).epsilon(kExact));
  CHECK(dv.stages[1].params == doctest::Approx(4 * 12596224.0 / 2).epsilon(kExact));
}

TEST_CASE("memory by ZeRO stage, by hand: each stage shards one more part over dp*cp") {
  // Stage 0 of the toy plan holds P = 25,704,448 parameters per rank (tp 2); dp*cp = 2.
  plan::Experiment e = toy_experiment();
  const double P = 25704448.0;
  auto stage0 = [&](int zero) {
    e.parallel.zero = zero;
    return plan::estimate_memory(e, 2).stages[0];
  };
  const auto z0 = stage0(0), z1 = stage0(1), z2 = stage0(2), z3 = stage0(3);
  CHECK(z0.optimizer.value() == doctest::Approx(12 * P).epsilon(kExact));
  CHECK(z0.gradients.value() == doctest::Approx(4 * P).epsilon(kExact));
  CHECK(z1.optimizer.value() == doctest::Approx(12 * P / 2).epsilon(kExact));
  CHECK(z1.gradients.value() == doctest::Approx(4 * P).epsilon(kExact));
  CHECK(z2.gradients.value() == doctest::Approx(4 * P / 2).epsilon(kExact));
  CHECK(z2.weights.value() == doctest::Approx(2 * P).epsilon(kExact));
  // ZeRO-3: the bf16 weight shard, plus the running and the prefetched layer unsharded: 2 layers
  // of 12,596,224 / tp 2 parameters at 2 bytes = 25,192,448 bytes.
  CHECK(z3.weights.value() == doctest::Approx(2 * P / 2 + 25192448.0).epsilon(kExact));
  CHECK(z3.gradients.value() == doctest::Approx(4 * P / 2).epsilon(kExact));
  CHECK(z3.optimizer.value() == doctest::Approx(12 * P / 2).epsilon(kExact));
  // Without resharding after forward all 4 layers stay gathered: 4 * 6,298,112 * 2 bytes.
  e.parallel.reshard_after_forward = false;
  CHECK(stage0(3).weights.value() == doctest::Approx(2 * P / 2 + 50384896.0).epsilon(kExact));
}

TEST_CASE("hybrid sharding divides by the shard group, not the whole data-parallel group") {
  // tp 1, pp 2, dp 4: stage 0 holds 4 * 12,596,224 + 1,024,000 = 51,408,896 parameters.
  plan::Experiment e = toy_experiment();
  e.parallel.tp = 1;
  e.parallel.dp = 4;
  e.training.global_batch = 16;
  const double P = 51408896.0;
  CHECK(plan::estimate_memory(e, 4).stages[0].optimizer.value() == doctest::Approx(12 * P / 4).epsilon(kExact));
  e.parallel.shard_group = 2;
  CHECK(plan::estimate_memory(e, 4).stages[0].optimizer.value() == doctest::Approx(12 * P / 2).epsilon(kExact));
}

TEST_CASE("ZeRO-3 gathers every layer before its forward and again before its backward, and reduce-scatters every micro-batch") {
  plan::Experiment e = toy_experiment();
  e.parallel.zero = 3;
  plan::CompileOptions full;
  full.fidelity = plan::Fidelity::full;
  auto count = [&](const char* name) {
    const plan::CompiledPlan c = plan::compile(e, full);
    int n = 0;
    const auto all = c.graph.expanded();  // replicas written out: every rank's ops
    for (const auto& op : all.ops())
      if (op.type == workload::OpType::collective && c.graph.collectives()[op.payload].name == name) ++n;
    return n;
  };
  // 8 ranks x 4 layers x 4 micro-batches x (forward + backward) gathers.
  CHECK(count("dp_ag_layer_params") == 8 * 4 * 4 * 2);
  // One reduce-scatter per layer and micro-batch; stage 0's embedding gradient adds one more per
  // micro-batch (the head's rides with stage 1's first layer): 4 * (4 * 5) + 4 * (4 * 4).
  CHECK(count("dp_rs_grads") == 4 * 20 + 4 * 16);
  CHECK(count("dp_ag_params") == 0);  // no gather after the step: the next forward gathers
  e.parallel.reshard_after_forward = false;
  CHECK(count("dp_ag_layer_params") == 8 * 4 * 4);
}
