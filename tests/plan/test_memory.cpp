#include <doctest/doctest.h>

#include "inflect/plan/memory.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

namespace {

constexpr double kExact = 1e-12;  // every figure below is an exact integer product

// GPT-style model: h = 1024, 16 heads, ffn 4h, 8 layers, vocab 1000.
// One layer = QKV 3h^2 + 3h, out proj h^2 + h, MLP 8h^2 + 5h, two LayerNorms 4h = 12h^2 + 13h
//           = 12 * 1048576 + 13 * 1024 = 12,596,224 parameters.
plan::Experiment toy_experiment() {
  plan::Experiment e;
  e.name = "memory-case";
  e.cluster.device = test::toy_device();
  e.cluster.topology = test::toy_topology(8);
  e.cluster.nodes = 1;
  workload::ModelSpec m;
  m.name = "toy-gpt";
  m.layers = 8;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.mlp = workload::MlpKind::gelu;
  m.vocab = 1000;
  m.seq_len = 1024;
  e.workload.model = m;
  e.training.seq_len = 1024;
  e.training.global_batch = 8;
  e.training.micro_batch = 1;
  e.training.precision = core::Precision::bf16;
  e.parallel.tp = 2;
  e.parallel.pp = 2;
  e.parallel.dp = 2;
  e.parallel.zero = 1;
  e.parallel.recompute = plan::Recompute::full;
  return e;
}

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
