#include <doctest/doctest.h>

#include <map>
#include <string>

#include "inflect/workload/layer_costs.hpp"
#include "workload_fixtures.hpp"

using namespace inflect::workload;
using inflect::core::KernelClass;
using inflect::core::Precision;

namespace {

// Every figure below is a product of integers under 2^53 or an exact halving: doubles hold them.
constexpr double kExact = 1e-12;

double flops_of(const std::vector<KernelSpec>& ks, KernelClass cls) {
  double f = 0;
  for (const auto& k : ks)
    if (k.cost.cls == cls) f += k.cost.flops.value();
  return f;
}

std::vector<KernelSpec> fwd(const LayerKernels& lk) {
  auto v = lk.attn_fwd;
  v.insert(v.end(), lk.mlp_fwd.begin(), lk.mlp_fwd.end());
  return v;
}

std::vector<KernelSpec> bwd(const LayerKernels& lk) {
  auto v = lk.mlp_bwd;
  v.insert(v.end(), lk.attn_bwd.begin(), lk.attn_bwd.end());
  return v;
}

const KernelSpec& find(const std::vector<KernelSpec>& ks, const std::string& name) {
  for (const auto& k : ks)
    if (k.name == name) return k;
  FAIL("no kernel named " << name);
  return ks.front();
}

ShardShape shard(int tp, bool sp, int cp, std::int64_t b, std::int64_t s) {
  ShardShape x;
  x.tp = tp;
  x.sequence_parallel = sp;
  x.cp = cp;
  x.micro_batch = b;
  x.seq_len = s;
  return x;
}

}  // namespace

TEST_CASE("GPT layer forward FLOPs: 24bsh^2 + 4bs^2h less the causal half of attention") {
  // gpt3-175b shape, b = 2, s = 2048, h = 12288, tp = 1.
  // GEMMs: qkv 6bsh^2 + proj 2bsh^2 + fc1 8bsh^2 + fc2 8bsh^2 = 24bsh^2
  //      = 24 * 2 * 2048 * 12288^2 = 14843406974976 (1.484e13).
  // Attention, non-causal 4bs^2h = 4 * 2 * 2048^2 * 12288 = 412316860416; causal keeps half:
  //      206158430208.
  ModelSpec m = fixtures::gpt3_175b();
  LayerKernels lk = transformer_layer(m, shard(1, false, 1, 2, 2048));
  const double b = 2, s = 2048, h = 12288;
  CHECK(flops_of(fwd(lk), KernelClass::gemm) == doctest::Approx(24 * b * s * h * h).epsilon(kExact));
  CHECK(flops_of(fwd(lk), KernelClass::attention) == doctest::Approx(0.5 * 4 * b * s * s * h).epsilon(kExact));
  CHECK(flops_of(fwd(lk), KernelClass::gemm) + flops_of(fwd(lk), KernelClass::attention) ==
        doctest::Approx(24 * b * s * h * h + 4 * b * s * s * h - 2 * b * s * s * h).epsilon(kExact));
}

TEST_CASE("backward GEMMs are twice the forward, flash attention backward is 2.5x") {
  // Each forward GEMM becomes a dgrad and a wgrad of the same 2mnk; FlashAttention-2's backward
  // does 5 matmuls against the forward's 2.
  for (const ModelSpec& m : {fixtures::gpt3_175b(), fixtures::llama3_70b()}) {
    LayerKernels lk = transformer_layer(m, shard(2, true, 1, 1, 4096));
    CHECK(flops_of(bwd(lk), KernelClass::gemm) ==
          doctest::Approx(2 * flops_of(fwd(lk), KernelClass::gemm)).epsilon(kExact));
    // The backward pass of fused attention is its own kernel class (its own efficiency curve).
    CHECK(flops_of(bwd(lk), KernelClass::attention) == 0);
    CHECK(flops_of(bwd(lk), KernelClass::attention_backward) ==
          doctest::Approx(2.5 * flops_of(fwd(lk), KernelClass::attention)).epsilon(kExact));
  }
}

TEST_CASE("dgrad and wgrad shapes transpose the forward GEMM") {
  // fc2 forward: m = T = 2048, n = h = 12288, k = ffn/tp = 49152/8 = 6144.
  // dgrad dA = dC B^T: (2048, 6144, 12288); wgrad dB = A^T dC: (6144, 12288, 2048).
  LayerKernels lk = transformer_layer(fixtures::gpt3_175b(), shard(8, false, 1, 1, 2048));
  const auto& f = find(lk.mlp_fwd, "mlp_fc2").cost;
  CHECK(f.m == 2048);
  CHECK(f.n == 12288);
  CHECK(f.k == 6144);
  const auto& dg = find(lk.mlp_bwd, "mlp_fc2_dgrad").cost;
  CHECK((dg.m == 2048 && dg.n == 6144 && dg.k == 12288));
  const auto& wg = find(lk.mlp_bwd, "mlp_fc2_wgrad").cost;
  CHECK((wg.m == 6144 && wg.n == 12288 && wg.k == 2048));
}

TEST_CASE("tensor parallelism divides every GEMM's FLOPs by tp exactly") {
  // Megatron splits the column-parallel n (qkv, fc1, gate_up) or the row-parallel k (proj, fc2,
  // down) by tp; the token count m stays the same. tp = 8 -> each GEMM has 1/8 of the FLOPs.
  for (const ModelSpec& m : {fixtures::gpt3_175b(), fixtures::llama3_405b()}) {
    LayerKernels one = transformer_layer(m, shard(1, false, 1, 1, 2048));
    LayerKernels eight = transformer_layer(m, shard(8, true, 1, 1, 2048));
    std::map<std::string, double> base;
    for (const auto& k : fwd(one)) base[k.name] = k.cost.flops.value();
    for (const auto& k : bwd(one)) base[k.name] = k.cost.flops.value();
    int gemms = 0;
    for (const auto& ks : {fwd(eight), bwd(eight)})
      for (const auto& k : ks)
        if (k.cost.cls == KernelClass::gemm) {
          ++gemms;
          CHECK_MESSAGE(k.cost.flops.value() == doctest::Approx(base.at(k.name) / 8).epsilon(kExact), k.name);
        }
    CHECK(gemms == 12);  // 4 forward GEMMs, each with dgrad and wgrad
  }
}

TEST_CASE("GQA narrows the QKV projection, context parallelism splits tokens and attention work") {
  // llama3-70b, tp = 8: qkv n = (8192 + 2*8*128)/8 = 1280.
  // cp = 2, s = 8192: T = 8192/2 = 4096 local tokens; causal attention 2*b*s^2*h/(tp*cp) =
  // 2 * 8192^2 * 8192 / 16 = 68719476736.
  ModelSpec m = fixtures::llama3_70b();
  LayerKernels lk = transformer_layer(m, shard(8, true, 2, 1, 8192));
  const auto& qkv = find(lk.attn_fwd, "qkv_proj").cost;
  CHECK(qkv.n == 1280);
  CHECK(qkv.m == 4096);
  CHECK(find(lk.attn_fwd, "attn_core").cost.flops.value() == doctest::Approx(68719476736.0).epsilon(kExact));
  // K and V of the local chunk: 2 * b * s/cp * kv_heads*hd/tp * 2 bytes = 2 * 4096 * 128 * 2 = 2097152.
  CHECK(lk.cp_kv_bytes.value() == doctest::Approx(2097152.0).epsilon(kExact));
  // TP boundary tensor: b * s/cp * h * 2 bytes = 4096 * 8192 * 2 = 67108864.
  CHECK(lk.tp_boundary_bytes.value() == doctest::Approx(67108864.0).epsilon(kExact));
}

TEST_CASE("no TP, no CP: no boundary or ring bytes") {
  LayerKernels lk = transformer_layer(fixtures::llama3_8b(), shard(1, false, 1, 1, 8192));
  CHECK(lk.tp_boundary_bytes.value() == 0);
  CHECK(lk.cp_kv_bytes.value() == 0);
}

TEST_CASE("sequence parallelism divides the norm's bytes by tp") {
  // GPT LayerNorm on T tokens reads and writes T*h bf16: 2 * 2048 * 12288 * 2 = 100663296 bytes;
  // with SP on tp = 8 each rank norms 256 tokens: 12582912.
  ModelSpec m = fixtures::gpt3_175b();
  auto no_sp = transformer_layer(m, shard(8, false, 1, 1, 2048));
  auto sp = transformer_layer(m, shard(8, true, 1, 1, 2048));
  CHECK(find(no_sp.attn_fwd, "input_norm").cost.bytes.value() == doctest::Approx(100663296.0).epsilon(kExact));
  CHECK(find(sp.attn_fwd, "input_norm").cost.bytes.value() == doctest::Approx(12582912.0).epsilon(kExact));
}

TEST_CASE("Llama layers have rotary and SwiGLU, GPT layers bias-GELU and dropout") {
  auto llama = transformer_layer(fixtures::llama3_8b(), shard(1, false, 1, 1, 8192));
  auto gpt = transformer_layer(fixtures::gpt3_175b(), shard(1, false, 1, 1, 2048));
  auto has = [](const std::vector<KernelSpec>& ks, const std::string& n) {
    for (const auto& k : ks)
      if (k.name == n) return true;
    return false;
  };
  CHECK(has(llama.attn_fwd, "rotary"));
  CHECK(has(llama.mlp_fwd, "swiglu"));
  CHECK_FALSE(has(llama.attn_fwd, "attn_bias_dropout_add"));
  CHECK(has(gpt.mlp_fwd, "bias_gelu"));
  CHECK(has(gpt.attn_fwd, "attn_bias_dropout_add"));
  CHECK_FALSE(has(gpt.attn_fwd, "rotary"));
  // SwiGLU gate+up GEMM: n = 2 * 14336 = 28672.
  CHECK(find(llama.mlp_fwd, "mlp_gate_up").cost.n == 28672);
}

TEST_CASE("head: logits GEMM split over the vocabulary") {
  // llama3-8b, tp = 4, b = 1, s = 8192: logits m = 8192, n = 128256/4 = 32064, k = 4096;
  // FLOPs 2 * 8192 * 32064 * 4096 = 2151778615296. Backward GEMMs double it.
  ModelSpec m = fixtures::llama3_8b();
  auto f = head_fwd(m, shard(4, true, 1, 1, 8192));
  auto b = head_bwd(m, shard(4, true, 1, 1, 8192));
  const auto& logits = find(f, "logits").cost;
  CHECK((logits.m == 8192 && logits.n == 32064 && logits.k == 4096));
  CHECK(flops_of(f, KernelClass::gemm) == doctest::Approx(2151778615296.0).epsilon(kExact));
  CHECK(flops_of(b, KernelClass::gemm) == doctest::Approx(2 * 2151778615296.0).epsilon(kExact));
  CHECK_FALSE(embedding_fwd(m, shard(4, true, 1, 1, 8192)).empty());
  CHECK_FALSE(embedding_bwd(m, shard(4, true, 1, 1, 8192)).empty());
}

TEST_CASE("Adam step moves 30 bytes per parameter in bf16, 28 in fp32") {
  // Read master, m, v, grad (4 x 4 B), write master, m, v (3 x 4 B), write bf16 weight (2 B).
  auto k = optimizer_step(1e9, Precision::bf16);
  CHECK(k.cost.cls == KernelClass::memory);
  CHECK(k.cost.bytes.value() == doctest::Approx(30e9).epsilon(kExact));
  CHECK(optimizer_step(1e9, Precision::fp32).cost.bytes.value() == doctest::Approx(28e9).epsilon(kExact));
}

TEST_CASE("activation bytes follow Korthikanti et al. 2022, with flash attention") {
  // gpt3-175b, s = 2048, b = 1, h = 12288, a = 96 -> sbh = 25165824, 5as/h = 5*96*2048/12288 = 80.
  // Attention is a fused flash kernel, so no recomputation never stores the s x s terms (5as/h):
  // it keeps 34 sbh (as selective) plus the softmax log-sum-exp, 4 bytes x s x b x a/t.
  ModelSpec m = fixtures::gpt3_175b();
  // No TP: sbh * 34 + 2048 * 96 * 4 = 855638016 + 786432 = 856424448.
  CHECK(activation_bytes_per_layer(m, shard(1, false, 1, 1, 2048), Recompute::none).value() ==
        doctest::Approx(856424448.0).epsilon(kExact));
  // TP 8 + SP: sbh/8 * 34 = 106954752 (+ 2048*12*4 = 98304 with none); full 2sbh/8 = 6291456.
  ShardShape tpsp = shard(8, true, 1, 1, 2048);
  CHECK(activation_bytes_per_layer(m, tpsp, Recompute::none).value() == doctest::Approx(107053056.0).epsilon(kExact));
  CHECK(activation_bytes_per_layer(m, tpsp, Recompute::selective).value() == doctest::Approx(106954752.0).epsilon(kExact));
  CHECK(activation_bytes_per_layer(m, tpsp, Recompute::full).value() == doctest::Approx(6291456.0).epsilon(kExact));
  // TP 8 without SP: sbh * (10 + 24/8) = sbh * 13 = 327155712 (+ 98304); full keeps 2sbh = 50331648.
  ShardShape tp = shard(8, false, 1, 1, 2048);
  CHECK(activation_bytes_per_layer(m, tp, Recompute::none).value() == doctest::Approx(327254016.0).epsilon(kExact));
  CHECK(activation_bytes_per_layer(m, tp, Recompute::full).value() == doctest::Approx(50331648.0).epsilon(kExact));
  // CP 2 halves s: sbh/t = 1024*12288/8 = 1572864 -> * 34 = 53477376, + 1024*12*4 = 49152.
  CHECK(activation_bytes_per_layer(m, shard(8, true, 2, 1, 2048), Recompute::none).value() ==
        doctest::Approx(53526528.0).epsilon(kExact));
}

TEST_CASE("model FLOPs per token: PaLM's 6N + 12 L h s") {
  // gpt3-175b, s = 2048. N = 96 * 1812099072 + 51200 * 12288 = 174590656512; 6N = 1047543939072;
  // 12 * 96 * 12288 * 2048 = 28991029248. Total 1076534968320.
  ModelSpec m = fixtures::gpt3_175b();
  CHECK(model_flops_per_token(m, 2048) == doctest::Approx(1076534968320.0).epsilon(kExact));
  // Cross-check with Narayanan et al. 2021's 96*B*s*l*h^2*(1 + s/(6h) + V/(16lh)) per step, which
  // counts recomputation (4 passes instead of 3): per token without recompute that is
  // 72*l*h^2*(1 + s/(6h) + V/(16lh)) = 1.07550e12. It leaves out biases and norms: agree to 0.5%.
  const double l = 96, h = 12288, s = 2048, v = 51200;
  const double megatron = 72 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  constexpr double kFormulaAgreement = 0.005;
  CHECK(model_flops_per_token(m, 2048) == doctest::Approx(megatron).epsilon(kFormulaAgreement));
}

TEST_CASE("an FP8 layer: FP8 linear GEMMs with TE's casts, everything else BF16") {
  // gpt3-175b shape, b = 1, s = 2048, h = 12288, tp = 1, no SP: T = 2048 tokens.
  ModelSpec m = fixtures::gpt3_175b();
  ShardShape s8 = shard(1, false, 1, 1, 2048);
  s8.precision = Precision::fp8;
  ShardShape s16 = shard(1, false, 1, 1, 2048);
  const LayerKernels f8 = transformer_layer(m, s8), b16 = transformer_layer(m, s16);
  const double T = 2048, h = 12288;

  // Forward, in order: norm (writing FP8), qkv input transpose, qkv GEMM, attention, out-proj input
  // cast, out-proj GEMM, bias-dropout-add; then the MLP likewise.
  std::vector<std::string> names;
  for (const auto& k : f8.attn_fwd) names.push_back(k.name);
  CHECK(names == std::vector<std::string>{"input_norm", "qkv_proj_input_fp8_cast", "qkv_proj", "attn_core",
                                          "attn_out_proj_input_fp8_cast", "attn_out_proj", "attn_bias_dropout_add"});
  // The four linear GEMMs run in FP8, attention in BF16 (fp8_dpa off), the same FLOPs as BF16.
  for (const char* g : {"qkv_proj", "attn_out_proj"}) CHECK(find(f8.attn_fwd, g).cost.precision == Precision::fp8);
  for (const char* g : {"mlp_fc1", "mlp_fc2"}) CHECK(find(f8.mlp_fwd, g).cost.precision == Precision::fp8);
  CHECK(find(f8.attn_fwd, "attn_core").cost.precision == Precision::bf16);
  CHECK(find(f8.attn_fwd, "attn_core").cost.bytes == find(b16.attn_fwd, "attn_core").cost.bytes);
  CHECK(flops_of(fwd(f8), KernelClass::gemm) == doctest::Approx(flops_of(fwd(b16), KernelClass::gemm)).epsilon(kExact));

  // qkv GEMM bytes: FP8 A [T, h] and B [h, 3h] (1 B each), BF16 C [T, 3h] (2 B):
  //   2048*12288 + 12288*36864 + 2 * 2048*36864 = 25165824 + 452984832 + 150994944 = 629145600.
  CHECK(find(f8.attn_fwd, "qkv_proj").cost.bytes.value() == doctest::Approx(629145600.0).epsilon(kExact));
  // Without SP the norm writes FP8 (read 2 B, write 1 B per element: 3 * T*h = 75497472 B), so the
  // qkv input needs only a transpose (read 1, write 1: 2 * T*h = 50331648 B).
  CHECK(find(f8.attn_fwd, "input_norm").cost.bytes.value() == doctest::Approx(3 * T * h).epsilon(kExact));
  CHECK(find(f8.attn_fwd, "qkv_proj_input_fp8_cast").cost.bytes.value() == doctest::Approx(2 * T * h).epsilon(kExact));
  // The attention output [T, h] is BF16: a cast_transpose reads 2 B and writes 2 x 1 B: 4 * T*h.
  CHECK(find(f8.attn_fwd, "attn_out_proj_input_fp8_cast").cost.bytes.value() == doctest::Approx(4 * T * h).epsilon(kExact));
  // fc2's input is the GELU output [T, 4h]: 4 * T * 4h = 402653184 B.
  CHECK(find(f8.mlp_fwd, "mlp_fc2_input_fp8_cast").cost.bytes.value() == doctest::Approx(4 * T * 4 * h).epsilon(kExact));

  // Backward: each linear's output gradient is cast before its dgrad and wgrad (both FP8):
  // fc2's output gradient [T, h] (4 * T*h), qkv's [T, 3h] (4 * T * 3h).
  CHECK(find(f8.mlp_bwd, "mlp_fc2_output_grad_fp8_cast").cost.bytes.value() == doctest::Approx(4 * T * h).epsilon(kExact));
  CHECK(find(f8.attn_bwd, "qkv_proj_output_grad_fp8_cast").cost.bytes.value() == doctest::Approx(4 * T * 3 * h).epsilon(kExact));
  CHECK(find(f8.attn_bwd, "qkv_proj_wgrad").cost.precision == Precision::fp8);
  CHECK(find(f8.attn_bwd, "attn_core_bwd").cost.precision == Precision::bf16);
  int casts = 0;
  for (const auto& ks : {f8.attn_fwd, f8.mlp_fwd, f8.attn_bwd, f8.mlp_bwd})
    for (const auto& k : ks) casts += k.name.find("_fp8_cast") != std::string::npos;
  CHECK(casts == 8);  // one per linear layer per pass

  // Messages stay BF16: the TP boundary and CP ring bytes equal the BF16 layer's.
  ShardShape t8 = shard(8, true, 2, 1, 2048), t16 = t8;
  t8.precision = Precision::fp8;
  CHECK(transformer_layer(m, t8).tp_boundary_bytes == transformer_layer(m, t16).tp_boundary_bytes);
  CHECK(transformer_layer(m, t8).cp_kv_bytes == transformer_layer(m, t16).cp_kv_bytes);
  // With SP the norm's output is all-gathered in BF16 and cast after: the norm writes BF16 and the
  // qkv input is cast_transposed whole (T = 1024 local tokens after CP: 4 * 1024 * 12288 / 1).
  const LayerKernels sp8 = transformer_layer(m, t8);
  CHECK(find(sp8.attn_fwd, "qkv_proj_input_fp8_cast").cost.bytes.value() == doctest::Approx(4 * 1024 * h).epsilon(kExact));

  // The head stays BF16 unless fp8.output_head; fp8.attention puts the core in FP8.
  CHECK(find(head_fwd(m, s8), "logits").cost.precision == Precision::bf16);
  s8.fp8.output_head = true;
  s8.fp8.attention = true;
  CHECK(find(head_fwd(m, s8), "logits").cost.precision == Precision::fp8);
  CHECK(find(transformer_layer(m, s8).attn_fwd, "attn_core").cost.precision == Precision::fp8);
}

TEST_CASE("FP8 weight copies: one cast_transpose of every linear weight per step, none in BF16") {
  // 1e9 BF16 parameters: read 2 B, write the FP8 weight and its transpose (1 B each): 4e9 B.
  const auto k = fp8_weight_casts(1e9, Precision::fp8);
  REQUIRE(k.size() == 1);
  CHECK(k[0].cost.bytes.value() == doctest::Approx(4e9));
  CHECK(fp8_weight_casts(1e9, Precision::bf16).empty());
}

TEST_CASE("unfused attention (Megatron-LM 2021): the s x s scores go through HBM") {
  // gpt3-175b, b = 1, s = 2048, tp = 8: 96/8 = 12 heads of 128 per rank; 12 * 2048^2 = 50,331,648
  // scores per micro-batch.
  ModelSpec m = fixtures::gpt3_175b();
  ShardShape s = shard(8, false, 1, 1, 2048);
  s.unfused_attention = true;
  const LayerKernels lk = transformer_layer(m, s);
  const double E = 12.0 * 2048 * 2048;
  std::vector<std::string> names;
  for (const auto& k : lk.attn_fwd) names.push_back(k.name);
  CHECK(names == std::vector<std::string>{"input_norm", "qkv_proj", "attn_scores", "attn_softmax", "attn_probs_dropout", "attn_context",
                                          "attn_out_proj", "attn_bias_dropout_add"});
  // Q K^T: 12 GEMMs of 2048 x 2048 x 128, no causal skipping: 2 * 12 * 2048^2 * 128 FLOPs; reads
  // Q and K (2 * 12 * 2048 * 128 elements) and writes the scores, 2 B each.
  const KernelSpec& scores = find(lk.attn_fwd, "attn_scores");
  CHECK(scores.cost.batch == 12);
  CHECK(scores.cost.flops.value() == doctest::Approx(2 * E * 128).epsilon(kExact));
  CHECK(scores.cost.bytes.value() == doctest::Approx((2 * 12.0 * 2048 * 128 + E) * 2).epsilon(kExact));
  // Softmax reads and writes the scores (4 B each); dropout reads, writes and keeps a 1-byte mask (5 B).
  CHECK(find(lk.attn_fwd, "attn_softmax").cost.bytes.value() == doctest::Approx(4 * E).epsilon(kExact));
  CHECK(find(lk.attn_fwd, "attn_probs_dropout").cost.bytes.value() == doctest::Approx(5 * E).epsilon(kExact));
  // Backward: dropout 5 B, softmax 6 B (reads P and dP, writes dS) per score, four GEMMs.
  CHECK(find(lk.attn_bwd, "attn_probs_dropout_bwd").cost.bytes.value() == doctest::Approx(5 * E).epsilon(kExact));
  CHECK(find(lk.attn_bwd, "attn_softmax_bwd").cost.bytes.value() == doctest::Approx(6 * E).epsilon(kExact));
  // All of it is the attention core (what selective recompute re-runs): 4 fwd + 6 bwd kernels.
  int core = 0;
  for (const auto& ks : {lk.attn_fwd, lk.attn_bwd})
    for (const auto& k : ks) core += k.attention_core;
  CHECK(core == 10);
  // Without recompute the layer keeps Korthikanti's 5as/h terms: 5 * 96 * 2048^2 * 1 / 8 B more
  // than the flash layer's (which keeps 4 B of log-sum-exp per token and head instead).
  ShardShape f = s;
  f.unfused_attention = false;
  const double diff = activation_bytes_per_layer(m, s, Recompute::none).value() - activation_bytes_per_layer(m, f, Recompute::none).value();
  CHECK(diff == doctest::Approx(5.0 * 96 * 2048 * 2048 / 8 - 2048.0 * 96 / 8 * 4).epsilon(kExact));
}

TEST_CASE("torchtitan's op-level selective recompute re-runs wk, wo, w3 and the element-wise kernels") {
  // llama3-8b: h 4096, 32 heads, 8 KV heads of 128: q 4096, kv 1024; ffn 14336. b = 1, s = 8192.
  ModelSpec m = fixtures::llama3_8b();
  const LayerKernels lk = transformer_layer(m, shard(1, false, 1, 1, 8192));
  const auto rc = every_other_matmul_recompute(m, lk);
  double gemm = 0;
  bool attention = false;
  for (const auto& k : rc) {
    if (k.cost.cls == KernelClass::gemm) gemm += k.cost.flops.value();
    attention = attention || k.attention_core;
  }
  CHECK_FALSE(attention);  // the attention kernel's output is saved
  // 2 * 8192 * 4096 * (wk 1024 + wo 4096 + w3 14336) FLOPs.
  CHECK(gemm == doctest::Approx(2.0 * 8192 * 4096 * (1024 + 4096 + 14336)).epsilon(kExact));
}

TEST_CASE("ring CP adds a merge per step in forward and the gradient accumulation per step in backward") {
  // llama3-8b, b = 1, s = 8192, cp 4, tp 1: T = 2048 local tokens, q 4096, kv 1024.
  // Forward merge: 3 passes over T x q at 2 B = 3 * 2048 * 4096 * 2 = 50,331,648 B per step.
  // Backward: 3 passes over dQ (T x q) and dK, dV (2 x T x kv) = 3 * 2048 * (4096 + 2048) * 2.
  const LayerKernels lk = transformer_layer(fixtures::llama3_8b(), shard(1, false, 4, 1, 8192));
  REQUIRE(lk.cp_step_fwd.size() == 1);
  CHECK(lk.cp_step_fwd[0].cost.bytes.value() == doctest::Approx(50331648.0).epsilon(kExact));
  CHECK(lk.cp_step_bwd[0].cost.bytes.value() == doctest::Approx(3.0 * 2048 * 6144 * 2).epsilon(kExact));
  CHECK(transformer_layer(fixtures::llama3_8b(), shard(1, false, 1, 1, 8192)).cp_step_fwd.empty());
}

TEST_CASE("FP8 recipes keep the FP8 copies of linear inputs for backward: 5sbh/t less with SP") {
  // gpt3-175b, b = 1, s = 2048, tp 8 with SP: sbh = 2048 * 12288 = 25,165,824; BF16 keeps
  // 34 sbh / 8, FP8 (34 - 5) sbh / 8 (QKV and fc1 inputs 2 -> 1, fc2's 8 -> 4, the projection's
  // FP8 input copy + 1).
  ModelSpec m = fixtures::gpt3_175b();
  ShardShape s = shard(8, true, 1, 1, 2048);
  const double sbh = 2048.0 * 12288;
  CHECK(activation_bytes_per_layer(m, s, Recompute::selective).value() == doctest::Approx(34 * sbh / 8).epsilon(kExact));
  s.precision = Precision::fp8;
  CHECK(activation_bytes_per_layer(m, s, Recompute::selective).value() == doctest::Approx(29 * sbh / 8).epsilon(kExact));
  // Full recompute keeps only the layer input, in either precision.
  CHECK(activation_bytes_per_layer(m, s, Recompute::full).value() == doctest::Approx(2 * sbh / 8).epsilon(kExact));
}
