#include "inflect/workload/layer_costs.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "inflect/core/error.hpp"

namespace inflect::workload {

namespace {

using core::Bytes;
using core::Flops;
using core::KernelClass;
using core::KernelCost;
using core::Precision;

double d(std::int64_t v) { return static_cast<double>(v); }

KernelSpec gemm(std::string name, double m, double n, double k, Precision p) {
  return {std::move(name), core::gemm_cost(m, n, k, p)};
}

// A forward GEMM (m, n, k) costs two GEMMs in backward: the input gradient dA = dC B^T (m, k, n)
// and the weight gradient dB = A^T dC (k, n, m); each has the forward's FLOPs.
void gemm_bwd(std::vector<KernelSpec>& out, const std::string& name, double m, double n, double k,
              Precision p) {
  out.push_back(gemm(name + "_dgrad", m, k, n, p));
  out.push_back(gemm(name + "_wgrad", k, n, m, p));
  out.back().weight_gradient = true;
}

// A bandwidth-bound kernel: `bytes` of HBM traffic; `flops` is an element-wise operation count for
// reports only (the compute model times memory kernels by their bytes).
KernelSpec memory(std::string name, double bytes, double flops, Precision p) {
  KernelCost c;
  c.cls = KernelClass::memory;
  c.precision = p;
  c.flops = Flops(flops);
  c.bytes = Bytes(bytes);
  return {std::move(name), c};
}

// Operation counts per element for the memory-bound kernels (report-only, see memory()).
constexpr double kLayerNormOps = 8;  // mean, variance, normalize, scale, shift
constexpr double kRmsNormOps = 4;    // square-sum, rsqrt, scale, weight
constexpr double kGeluOps = 8;       // tanh approximation + bias
constexpr double kSwigluOps = 6;     // sigmoid, two multiplies
constexpr double kRotaryOps = 3;     // two multiplies and an add per element
constexpr double kAddOps = 1;
constexpr double kDropoutAddOps = 3; // bias add, mask multiply, residual add
constexpr double kCrossEntropyOps = 4;
constexpr double kAdamOps = 12;      // two moment updates, bias correction, sqrt, divide, update
constexpr double kDropoutMaskBytes = 1;  // Megatron keeps dropout masks as one byte per element

// FlashAttention backward does 5 matmuls (recompute S = QK^T, dV, dP, dQ, dK) against the
// forward's 2: 2.5x the forward FLOPs (Dao 2023, "FlashAttention-2", section 3.2 / FLOP count
// used in its benchmarks).
constexpr double kFlashBwdFlopRatio = 2.5;

struct Dims {
  double b, s_local, s_full, h, tokens, norm_tokens, tp, q_width, kv_width, ffn, bpe;
  bool gpt;
  Precision p;   // activations, norms, element-wise kernels, attention (unless fp8_attention)
  Precision gp;  // the linear layers' GEMMs
  bool fp8;      // gp is FP8: Transformer Engine's casts come with every linear GEMM
  /// The norm before a linear layer writes its output in FP8 directly (TE's LayerNormLinear), so
  /// the layer needs only a transpose; not with sequence parallelism, where the norm's output is
  /// all-gathered in BF16 first and cast after the gather.
  bool norm_writes_fp8;
  Precision attn_p;  // the attention core
};

Dims dims(const ModelSpec& m, const ShardShape& s) {
  core::check_invariant(s.tp >= 1 && s.cp >= 1 && s.micro_batch >= 1 && s.seq_len >= 1,
                        "ShardShape needs tp, cp, micro_batch, seq_len >= 1");
  core::check_invariant(m.heads > 0 && m.kv_heads > 0 && m.hidden > 0, "ModelSpec needs a shape");
  Dims x{};
  x.b = d(s.micro_batch);
  x.s_full = d(s.seq_len);
  x.s_local = x.s_full / s.cp;
  x.h = d(m.hidden);
  x.tp = s.tp;
  x.tokens = x.b * x.s_local;
  // Megatron sequence parallelism runs the norms and dropouts on the rank's 1/tp of the tokens.
  x.norm_tokens = s.sequence_parallel ? x.tokens / s.tp : x.tokens;
  x.q_width = x.h / s.tp;
  x.kv_width = d(m.kv_heads) * d(m.head_dim()) / s.tp;
  x.ffn = d(m.ffn_hidden) / s.tp;
  x.p = core::activation_precision(s.precision);
  x.bpe = core::bytes_per_element(x.p);
  x.gp = s.precision;
  x.fp8 = s.precision == Precision::fp8;
  x.norm_writes_fp8 = x.fp8 && !(s.sequence_parallel && s.tp > 1);
  x.attn_p = x.fp8 && s.fp8.attention ? Precision::fp8 : x.p;
  x.gpt = m.mlp == MlpKind::gelu;
  return x;
}

// ---- Transformer Engine's FP8 linear layers (delayed or current per-tensor scaling on Hopper)
// An FP8 GEMM on Hopper takes both operands K-major, so every tensor a linear layer multiplies is
// cast to FP8 twice over: as it is (for the forward or the input gradient) and transposed (for
// the weight gradient). TE does this in one fused cast_transpose kernel per tensor: it reads the
// 16-bit tensor and writes both FP8 copies (transformer_engine/common/transpose/cast_transpose.cu;
// the amax of the tensor is taken in the same kernel). Per micro-batch that is the input of each
// linear layer in forward and its output gradient in backward; the weights once per step
// (fp8_weight_casts). The scale update from the amax history is one fused kernel per fp8_autocast
// region (a few microseconds per micro-batch: not modelled). Names end in "_fp8_cast".
constexpr double kCastTransposeBytes = 2 + 1 + 1;  // read BF16, write FP8 and its FP8 transpose
constexpr double kTransposeBytes = 1 + 1;          // read FP8, write its transpose
constexpr double kCastOps = 2;                     // scale and convert, per element (reports only)

KernelSpec fp8_cast_transpose(const std::string& tensor, double elems) {
  return memory(tensor + "_fp8_cast", kCastTransposeBytes * elems, kCastOps * elems, Precision::bf16);
}
KernelSpec fp8_transpose(const std::string& tensor, double elems) {
  return memory(tensor + "_fp8_cast", kTransposeBytes * elems, 0, Precision::fp8);
}

/// How a linear layer's input reaches FP8.
enum class Fp8Input : unsigned char { cast, from_norm };

/// A linear layer's forward GEMM [m, n] = [m, k] x [k, n] in the linear precision, after its
/// input's FP8 casts when that is FP8: a cast_transpose of the 16-bit input, or, where the norm
/// before it already wrote FP8 (Dims::norm_writes_fp8), only the transpose.
void linear_fwd(std::vector<KernelSpec>& out, const std::string& name, double m, double n, double k, const Dims& x,
                Fp8Input in = Fp8Input::cast) {
  if (x.fp8) out.push_back(in == Fp8Input::from_norm && x.norm_writes_fp8 ? fp8_transpose(name + "_input", m * k)
                                                                         : fp8_cast_transpose(name + "_input", m * k));
  out.push_back(gemm(name, m, n, k, x.gp));
}

/// Its backward: the output gradient's cast_transpose when FP8, then dgrad and wgrad.
void linear_bwd(std::vector<KernelSpec>& out, const std::string& name, double m, double n, double k, const Dims& x) {
  if (x.fp8) out.push_back(fp8_cast_transpose(name + "_output_grad", m * n));
  gemm_bwd(out, name, m, n, k, x.gp);
}

// A norm reads its input and writes its output; before a linear layer (`feeds_linear`) in an FP8
// recipe without SP, TE's fused LayerNormLinear writes that output in FP8 (1 byte).
KernelSpec norm_fwd(const std::string& name, const Dims& x, bool feeds_linear = false) {
  double elems = x.norm_tokens * x.h;
  const double out_bytes = feeds_linear && x.norm_writes_fp8 ? 1 : x.bpe;
  return memory(name, (x.bpe + out_bytes) * elems, elems * (x.gpt ? kLayerNormOps : kRmsNormOps), x.p);
}

// Norm backward reads the gradient and the saved input, writes the input gradient.
KernelSpec norm_bwd(const std::string& name, const Dims& x) {
  double elems = x.norm_tokens * x.h;
  return memory(name, 3 * elems * x.bpe, 2 * elems * (x.gpt ? kLayerNormOps : kRmsNormOps), x.p);
}

// GPT: Megatron's fused bias-dropout-add after each block (reads block output and residual, writes
// the sum and a 1-byte mask). Llama: a plain residual add.
KernelSpec block_out_fwd(const std::string& prefix, const Dims& x) {
  double elems = x.norm_tokens * x.h;
  if (x.gpt)
    return memory(prefix + "_bias_dropout_add", 3 * elems * x.bpe + elems * kDropoutMaskBytes,
                  elems * kDropoutAddOps, x.p);
  return memory(prefix + "_residual_add", 3 * elems * x.bpe, elems * kAddOps, x.p);
}

// Backward of the block output: GPT's dropout backward reads the gradient and mask and writes the
// branch gradient; then (both families) the block-input gradient sums the residual path and the
// norm path's gradient — appended after the norm backward, see residual_grad_add.
void block_out_bwd(std::vector<KernelSpec>& out, const std::string& prefix, const Dims& x) {
  double elems = x.norm_tokens * x.h;
  if (x.gpt)
    out.push_back(memory(prefix + "_dropout_bwd", 2 * elems * x.bpe + elems * kDropoutMaskBytes,
                         elems * kAddOps, x.p));
}

KernelSpec residual_grad_add(const std::string& prefix, const Dims& x) {
  double elems = x.norm_tokens * x.h;
  return memory(prefix + "_residual_grad_add", 3 * elems * x.bpe, elems * kAddOps, x.p);
}

// Causal flash attention of the rank's local queries: its T = b*s/cp tokens (CP splits the
// load-balanced causal work evenly over the cp ranks) attending to every chunk's keys (with CP the
// ring brings the whole sequence's K/V through; the upper bound); TP splits heads.
FlashAttentionShape flash_attention_shape(const Dims& x) {
  return FlashAttentionShape{x.b, x.s_local, x.s_full, x.q_width, x.kv_width, true};
}

// One of `batch` equal GEMMs [m, n] = [m, k] x [k, n], launched as one batched GEMM.
KernelSpec batched_gemm(std::string name, double batch, double m, double n, double k, Precision p) {
  KernelSpec g = gemm(std::move(name), m, n, k, p);
  g.cost.batch = static_cast<std::int64_t>(batch);
  g.cost.flops = Flops(g.cost.flops.value() * batch);
  g.cost.bytes = Bytes(g.cost.bytes.value() * batch);
  g.attention_core = true;
  return g;
}

KernelSpec core_memory(std::string name, double bytes, double flops, Precision p) {
  KernelSpec k = memory(std::move(name), bytes, flops, p);
  k.attention_core = true;
  return k;
}

// Attention as Megatron-LM ran it before flash attention (2021-22, megatron/model/transformer.py
// CoreAttention): Q K^T as a batched GEMM over the rank's heads writing the s x s scores to HBM,
// the fused scale-mask-softmax kernel (scaled_upper_triang_masked_softmax: reads the scores, writes
// the probabilities), dropout on them (GPT's attention dropout; writes the dropped probabilities
// and a 1-byte mask), then the probabilities times V as a second batched GEMM. Neither GEMM skips
// the masked half. Backward mirrors each: two GEMMs per product, the dropout's and the softmax's
// backward as element-wise passes over the s x s matrix. These are the kernels Korthikanti et al.'s
// selective recompute re-runs (attention_core).
void unfused_attention(LayerKernels& lk, const ModelSpec& m, const Dims& x) {
  const double heads = d(m.heads) / x.tp;
  const double batch = x.b * heads, sq = x.s_local, sk = x.s_full, hd = d(m.head_dim());
  const double elems = batch * sq * sk;  // the score matrix's elements over the rank's heads
  const double bpe = x.bpe;
  const bool dropout = x.gpt;
  lk.attn_fwd.push_back(batched_gemm("attn_scores", batch, sq, sk, hd, x.p));
  lk.attn_fwd.push_back(core_memory("attn_softmax", 2 * elems * bpe, elems * 5, x.p));
  if (dropout) lk.attn_fwd.push_back(core_memory("attn_probs_dropout", elems * (2 * bpe + kDropoutMaskBytes), elems, x.p));
  lk.attn_fwd.push_back(batched_gemm("attn_context", batch, sq, hd, sk, x.p));

  std::vector<KernelSpec> bwd;
  bwd.push_back(batched_gemm("attn_context_dprobs", batch, sq, sk, hd, x.p));  // dP = dO V^T
  bwd.push_back(batched_gemm("attn_context_dv", batch, sk, hd, sq, x.p));      // dV = P^T dO
  if (dropout) bwd.push_back(core_memory("attn_probs_dropout_bwd", elems * (2 * bpe + kDropoutMaskBytes), elems, x.p));
  bwd.push_back(core_memory("attn_softmax_bwd", 3 * elems * bpe, elems * 4, x.p));  // reads P and dP
  bwd.push_back(batched_gemm("attn_scores_dq", batch, sq, hd, sk, x.p));  // dQ = dS K
  bwd.push_back(batched_gemm("attn_scores_dk", batch, sk, hd, sq, x.p));  // dK = dS^T Q
  lk.attn_bwd.insert(lk.attn_bwd.end(), bwd.begin(), bwd.end());
}

}  // namespace

KernelCost flash_attention_cost(const FlashAttentionShape& a, Precision p, double element_bytes, bool backward) {
  const double q_bytes = a.batch * a.q_len * a.q_width * element_bytes;
  const double kv_bytes = 2 * a.batch * a.kv_len * a.kv_width * element_bytes;
  const double fwd_flops = (a.causal ? 0.5 : 1.0) * 4 * a.batch * a.q_len * a.kv_len * a.q_width;
  KernelCost c;
  c.cls = backward ? KernelClass::attention_backward : KernelClass::attention;
  c.precision = p;
  c.flops = Flops(backward ? kFlashBwdFlopRatio * fwd_flops : fwd_flops);
  c.bytes = Bytes(backward ? 4 * q_bytes + 2 * kv_bytes : 2 * q_bytes + kv_bytes);
  return c;
}

LayerKernels transformer_layer(const ModelSpec& m, const ShardShape& s) {
  const Dims x = dims(m, s);
  const double T = x.tokens;
  LayerKernels lk;


  // ---- attention block, forward
  lk.attn_fwd.push_back(norm_fwd("input_norm", x, true));
  linear_fwd(lk.attn_fwd, "qkv_proj", T, x.q_width + 2 * x.kv_width, x.h, x, Fp8Input::from_norm);
  if (!x.gpt) {
    double elems = T * (x.q_width + x.kv_width);  // rotary on Q and K
    lk.attn_fwd.push_back(memory("rotary", 2 * elems * x.bpe, elems * kRotaryOps, x.p));
  }
  LayerKernels unfused;  // the unfused attention's kernels, forward and backward
  if (s.unfused_attention) unfused_attention(unfused, m, x);
  if (s.unfused_attention) {
    lk.attn_fwd.insert(lk.attn_fwd.end(), unfused.attn_fwd.begin(), unfused.attn_fwd.end());
  } else {
    lk.attn_fwd.push_back({"attn_core", flash_attention_cost(flash_attention_shape(x), x.attn_p, x.bpe, false), false, true});
  }
  linear_fwd(lk.attn_fwd, "attn_out_proj", T, x.h, x.q_width, x);
  lk.attn_fwd.push_back(block_out_fwd("attn", x));

  // ---- MLP block, forward
  lk.mlp_fwd.push_back(norm_fwd("post_attn_norm", x, true));
  if (x.gpt) {
    linear_fwd(lk.mlp_fwd, "mlp_fc1", T, x.ffn, x.h, x, Fp8Input::from_norm);
    double elems = T * x.ffn;
    lk.mlp_fwd.push_back(memory("bias_gelu", 2 * elems * x.bpe, elems * kGeluOps, x.p));
  } else {
    linear_fwd(lk.mlp_fwd, "mlp_gate_up", T, 2 * x.ffn, x.h, x, Fp8Input::from_norm);
    double elems = T * x.ffn;
    lk.mlp_fwd.push_back(memory("swiglu", 3 * elems * x.bpe, elems * kSwigluOps, x.p));
  }
  linear_fwd(lk.mlp_fwd, x.gpt ? "mlp_fc2" : "mlp_down", T, x.h, x.ffn, x);
  lk.mlp_fwd.push_back(block_out_fwd("mlp", x));

  // ---- MLP block, backward (runs first)
  block_out_bwd(lk.mlp_bwd, "mlp", x);
  linear_bwd(lk.mlp_bwd, x.gpt ? "mlp_fc2" : "mlp_down", T, x.h, x.ffn, x);
  {
    double elems = T * x.ffn;
    if (x.gpt)  // read grad and saved input, write grad
      lk.mlp_bwd.push_back(memory("bias_gelu_bwd", 3 * elems * x.bpe, 2 * elems * kGeluOps, x.p));
    else        // read grad and saved gate/up, write both gradients
      lk.mlp_bwd.push_back(memory("swiglu_bwd", 5 * elems * x.bpe, 2 * elems * kSwigluOps, x.p));
  }
  linear_bwd(lk.mlp_bwd, x.gpt ? "mlp_fc1" : "mlp_gate_up", T, x.gpt ? x.ffn : 2 * x.ffn, x.h, x);
  lk.mlp_bwd.push_back(norm_bwd("post_attn_norm_bwd", x));
  lk.mlp_bwd.push_back(residual_grad_add("mlp", x));

  // ---- attention block, backward
  block_out_bwd(lk.attn_bwd, "attn", x);
  linear_bwd(lk.attn_bwd, "attn_out_proj", T, x.h, x.q_width, x);
  if (s.unfused_attention) {
    lk.attn_bwd.insert(lk.attn_bwd.end(), unfused.attn_bwd.begin(), unfused.attn_bwd.end());
  } else {
    lk.attn_bwd.push_back({"attn_core_bwd", flash_attention_cost(flash_attention_shape(x), x.attn_p, x.bpe, true), false, true});
  }
  if (!x.gpt) {
    double elems = T * (x.q_width + x.kv_width);
    lk.attn_bwd.push_back(memory("rotary_bwd", 2 * elems * x.bpe, elems * kRotaryOps, x.p));
  }
  linear_bwd(lk.attn_bwd, "qkv_proj", T, x.q_width + 2 * x.kv_width, x.h, x);
  lk.attn_bwd.push_back(norm_bwd("input_norm_bwd", x));
  lk.attn_bwd.push_back(residual_grad_add("attn", x));

  lk.tp_boundary_bytes = s.tp > 1 ? Bytes(T * x.h * x.bpe) : Bytes(0);
  lk.cp_kv_bytes = s.cp > 1 ? Bytes(2 * T * x.kv_width * x.bpe) : Bytes(0);
  if (s.cp > 1) {
    // Per ring step: read the step's output, read and write the running output (3 passes over
    // the local T x q elements); backward, read the step's gradient and read and write the
    // accumulator, for dQ (T x q) and dK, dV (2 x T x kv). The log-sum-exps are 1/head_dim of that.
    const double q_elems = T * x.q_width, kv_elems = 2 * T * x.kv_width;
    lk.cp_step_fwd.push_back(memory("attn_cp_out_merge", 3 * q_elems * x.bpe, 3 * q_elems, x.p));
    lk.cp_step_bwd.push_back(memory("attn_cp_grad_accumulate", 3 * (q_elems + kv_elems) * x.bpe, q_elems + kv_elems, x.p));
  }
  return lk;
}

MoeKernels moe_mlp(const ModelSpec& m, const ShardShape& s) {
  core::check_invariant(m.is_moe() && s.ep >= 1 && m.moe.experts % s.ep == 0, "moe_mlp needs an MoE model and ep | experts");
  const Dims x = dims(m, s);
  const double T = x.tokens;
  const double fe = d(m.moe.expert_ffn_hidden) / s.tp;
  const double local_experts = static_cast<double>(m.moe.experts) / s.ep;
  MoeKernels k;
  // The busiest rank gets imbalance x the mean; a capacity factor drops what exceeds it.
  k.load = m.moe.capacity_factor > 0 ? std::min(m.moe.imbalance, m.moe.capacity_factor) : m.moe.imbalance;
  const double copies = T * m.moe.top_k * k.load;  // token copies this rank's experts process
  const double per_expert = copies / local_experts;
  auto grouped = [&](std::string name, double rows, double n, double kk) {
    KernelSpec g = gemm(std::move(name), rows, n, kk, x.gp);
    const auto batch = static_cast<std::int64_t>(local_experts);
    g.cost.batch = batch;
    g.cost.flops = Flops(g.cost.flops.value() * local_experts);
    g.cost.bytes = Bytes(g.cost.bytes.value() * local_experts);
    return g;
  };
  const double up = x.gpt ? fe : 2 * fe;  // fc1, or gate and up together

  // ---- forward
  k.pre_fwd.push_back(norm_fwd("post_attn_norm", x));
  // The router is not a Transformer Engine module: BF16 in FP8 recipes (Megatron-Core TopKRouter).
  k.pre_fwd.push_back(gemm("router", T, m.moe.experts, x.h, x.p));
  k.pre_fwd.push_back(memory("router_topk", 2 * T * m.moe.experts * 4, T * m.moe.experts * kAddOps, x.p));  // fp32 logits
  if (m.moe.shared_experts > 0) {
    const double sf = m.moe.shared_experts * fe;
    linear_fwd(k.pre_fwd, "shared_up", T, x.gpt ? sf : 2 * sf, x.h, x);
    k.pre_fwd.push_back(memory("shared_act", 3 * T * sf * x.bpe, T * sf * kSwigluOps, x.p));
    linear_fwd(k.pre_fwd, "shared_down", T, x.h, sf, x);
  }
  k.pre_fwd.push_back(memory("moe_permute", 2 * T * m.moe.top_k * x.h * x.bpe, 0, x.p));
  // Routed experts are TE GroupedLinear modules: FP8 in FP8 recipes, each input cast first.
  if (x.fp8) k.experts_fwd.push_back(fp8_cast_transpose("experts_up_input", copies * x.h));
  k.experts_fwd.push_back(grouped("experts_up", per_expert, up, x.h));
  k.experts_fwd.push_back(memory("experts_act", 3 * copies * fe * x.bpe, copies * fe * kSwigluOps, x.p));
  if (x.fp8) k.experts_fwd.push_back(fp8_cast_transpose("experts_down_input", copies * fe));
  k.experts_fwd.push_back(grouped("experts_down", per_expert, x.h, fe));
  k.post_fwd.push_back(memory("moe_unpermute_combine", (T * m.moe.top_k + T) * x.h * x.bpe, T * m.moe.top_k * x.h * 2, x.p));
  k.post_fwd.push_back(block_out_fwd("mlp", x));

  // ---- backward (post, experts, pre)
  block_out_bwd(k.post_bwd, "mlp", x);
  k.post_bwd.push_back(memory("moe_unpermute_combine_bwd", (T * m.moe.top_k + T) * x.h * x.bpe, T * m.moe.top_k * x.h * 2, x.p));
  auto grouped_bwd = [&](const std::string& name, double rows, double n, double kk) {
    if (x.fp8) k.experts_bwd.push_back(fp8_cast_transpose(name + "_output_grad", rows * local_experts * n));
    k.experts_bwd.push_back(grouped(name + "_dgrad", rows, kk, n));
    k.experts_bwd.push_back(grouped(name + "_wgrad", kk, n, rows));
    k.experts_bwd.back().weight_gradient = true;
  };
  grouped_bwd("experts_down", per_expert, x.h, fe);
  k.experts_bwd.push_back(memory("experts_act_bwd", 5 * copies * fe * x.bpe, 2 * copies * fe * kSwigluOps, x.p));
  grouped_bwd("experts_up", per_expert, up, x.h);
  k.pre_bwd.push_back(memory("moe_permute_bwd", 2 * T * m.moe.top_k * x.h * x.bpe, 0, x.p));
  if (m.moe.shared_experts > 0) {
    const double sf = m.moe.shared_experts * fe;
    linear_bwd(k.pre_bwd, "shared_down", T, x.h, sf, x);
    k.pre_bwd.push_back(memory("shared_act_bwd", 5 * T * sf * x.bpe, 2 * T * sf * kSwigluOps, x.p));
    linear_bwd(k.pre_bwd, "shared_up", T, x.gpt ? sf : 2 * sf, x.h, x);
  }
  gemm_bwd(k.pre_bwd, "router", T, m.moe.experts, x.h, x.p);  // BF16, as in forward
  k.pre_bwd.push_back(norm_bwd("post_attn_norm_bwd", x));
  k.pre_bwd.push_back(residual_grad_add("mlp", x));

  k.dispatch_bytes = Bytes(T * m.moe.top_k * k.load * x.h * x.bpe / (s.sequence_parallel ? s.tp : 1));
  return k;
}

std::vector<KernelSpec> every_other_matmul_recompute(const ModelSpec& m, const LayerKernels& lk) {
  const double q = d(m.heads) * d(m.head_dim()), kv = d(m.kv_heads) * d(m.head_dim());
  const bool gpt = m.mlp == MlpKind::gelu;
  // The share of each fused GEMM's output columns that belongs to a recomputed matmul.
  auto share = [&](const std::string& name) -> double {
    if (name == "qkv_proj") return kv / (q + 2 * kv);  // wk
    if (name == "attn_out_proj") return 1;             // wo
    if (name == "mlp_gate_up") return 0.5;             // w3
    if (name == "mlp_fc2" && gpt) return 1;            // GPT's second MLP matmul
    return 0;
  };
  std::vector<KernelSpec> out;
  for (const auto* block : {&lk.attn_fwd, &lk.mlp_fwd})
    for (const KernelSpec& k : *block) {
      if (k.attention_core) continue;
      if (k.cost.cls != KernelClass::gemm) {
        out.push_back(k);
        out.back().name += "_recompute";
        continue;
      }
      const double f = share(k.name);
      if (f <= 0) continue;
      KernelSpec g = gemm(k.name + "_recompute", d(k.cost.m), d(k.cost.n) * f, d(k.cost.k), k.cost.precision);
      out.push_back(g);
    }
  return out;
}

std::vector<KernelSpec> embedding_fwd(const ModelSpec& m, const ShardShape& s) {
  const Dims x = dims(m, s);
  std::vector<KernelSpec> out;
  // Vocab-parallel lookup: every rank gathers its shard's rows for all local tokens (read + write).
  double elems = x.tokens * x.h;
  out.push_back(memory("embedding_lookup", 2 * elems * x.bpe, 0, x.p));
  if (x.gpt) {  // learned position embedding add and embedding dropout
    double n = x.norm_tokens * x.h;
    out.push_back(memory("embedding_pos_dropout", 3 * n * x.bpe + n * kDropoutMaskBytes,
                         n * kDropoutAddOps, x.p));
  }
  return out;
}

std::vector<KernelSpec> embedding_bwd(const ModelSpec& m, const ShardShape& s) {
  const Dims x = dims(m, s);
  std::vector<KernelSpec> out;
  if (x.gpt) {
    double n = x.norm_tokens * x.h;
    out.push_back(memory("embedding_dropout_bwd", 2 * n * x.bpe + n * kDropoutMaskBytes,
                         n * kAddOps, x.p));
  }
  // Scatter-add of the token gradients into the table gradient: read grad, read-modify-write rows.
  double elems = x.tokens * x.h;
  out.push_back(memory("embedding_wgrad", 3 * elems * x.bpe, elems * kAddOps, x.p));
  return out;
}

std::vector<KernelSpec> head_fwd(const ModelSpec& m, const ShardShape& s) {
  const Dims x = dims(m, s);
  const double v = d(m.vocab) / s.tp;
  std::vector<KernelSpec> out;
  out.push_back(norm_fwd("final_norm", x));
  // Megatron-Core's output_layer is not a TE module and torchtitan leaves `output` out of its FP8
  // conversion: the head stays in the activation precision unless fp8.output_head.
  if (x.fp8 && s.fp8.output_head) linear_fwd(out, "logits", x.tokens, v, x.h, x);
  else out.push_back(gemm("logits", x.tokens, v, x.h, x.p));
  // Vocab-parallel cross-entropy: read the logits, write the softmax kept for backward.
  double elems = x.tokens * v;
  out.push_back(memory("cross_entropy", 2 * elems * x.bpe, elems * kCrossEntropyOps, x.p));
  return out;
}

std::vector<KernelSpec> head_bwd(const ModelSpec& m, const ShardShape& s) {
  const Dims x = dims(m, s);
  const double v = d(m.vocab) / s.tp;
  std::vector<KernelSpec> out;
  double elems = x.tokens * v;
  // softmax - one_hot, in place: read and write the logit gradient.
  out.push_back(memory("cross_entropy_bwd", 2 * elems * x.bpe, elems * kAddOps, x.p));
  if (x.fp8 && s.fp8.output_head) linear_bwd(out, "logits", x.tokens, v, x.h, x);
  else gemm_bwd(out, "logits", x.tokens, v, x.h, x.p);
  out.push_back(norm_bwd("final_norm_bwd", x));
  return out;
}

KernelSpec gemm_row_slice(const KernelSpec& g, int parts) {
  core::check_invariant(g.cost.cls == KernelClass::gemm && g.cost.batch == 1 && parts >= 1 && g.cost.m >= parts,
                        "gemm_row_slice needs a GEMM with at least `parts` rows");
  KernelSpec out = g;
  out.name = g.name + "_slice";
  const double rows = d(g.cost.m) / parts, n = d(g.cost.n), k = d(g.cost.k);
  out.cost.m = static_cast<std::int64_t>(rows);
  out.cost.flops = Flops(g.cost.flops.value() / parts);  // the slices add up to the GEMM exactly
  out.cost.bytes = core::gemm_cost(rows, n, k, g.cost.precision).bytes;
  return out;
}

std::vector<KernelSpec> fp8_weight_casts(double params, core::Precision precision) {
  if (precision != Precision::fp8 || params <= 0) return {};
  return {fp8_cast_transpose("weights", params)};
}

KernelSpec optimizer_step(double params, core::Precision precision, const OptimizerState& st) {
  // Mixed-precision Adam as Megatron runs it, per parameter: read the master weight and both
  // moments and the main gradient, write master and moments, and, unless training in fp32, write
  // the 16-bit model weight (fp8 recipes also keep 16-bit weights). With FP32 master, moments and
  // gradients: 12 + 4 + 12 + 2 = 30 B/param. Remainders also read the 16-bit weight they extend.
  const bool fp32_weights = core::stored_as_fp32(precision);
  double per_param = 2 * (st.master + 2 * st.moment) + st.gradient + (fp32_weights ? 0 : 2) + (st.remainder ? 2 : 0);
  return memory("adam_step", params * per_param, params * kAdamOps, core::Precision::fp32);
}

core::Bytes activation_bytes_per_layer(const ModelSpec& m, const ShardShape& s, Recompute r, bool moe_layer) {
  // Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
  // eqs. 1-2 and Table 2, for 16-bit activations with 1-byte dropout masks:
  //   no TP:          s*b*h*(34 + 5*a*s/h)
  //   TP (t), no SP:  s*b*h*(10 + 24/t + 5*a*s/(h*t))
  //   TP + SP:        s*b*h/t*(34 + 5*a*s/h)
  //   selective recompute drops the 5as/h terms; so does no recompute here, since attention is a
  //   fused flash kernel (below); full recompute keeps only the 2sbh layer input
  //   (/t with SP). With CP, s is the rank's share s/cp. The formula is GPT-shaped (4h GELU MLP,
  //   dropouts); we apply it to every model as the paper's accounting. fp32 doubles it.
  const double sl = d(s.seq_len) / s.cp;
  const double b = d(s.micro_batch);
  const double h = d(m.hidden);
  const double a = m.heads;
  const double t = s.tp;
  const double sbh = sl * b * h;
  const double scale =
      core::stored_as_fp32(s.precision) ? 2.0 : 1.0;
  double bytes = 0;
  switch (r) {
    case Recompute::full:
      bytes = 2 * sbh / (s.sequence_parallel ? t : 1);
      break;
    case Recompute::selective:
      bytes = s.sequence_parallel ? sbh * 34 / t : sbh * (10 + 24 / t);
      break;
    case Recompute::none:
      if (s.unfused_attention) {
        // Unfused attention keeps the softmax output (2 B per score), and for GPT's attention
        // dropout its mask (1 B) and output (2 B): Korthikanti's 5as/h terms, split over tp
        // (Llama-style models have no attention dropout: 2as/h).
        const double per_score = m.mlp == MlpKind::gelu ? 5 : 2;
        bytes = (s.sequence_parallel ? sbh * 34 / t : sbh * (10 + 24 / t)) + per_score * a * sl * sl * s.cp * b / t;
        break;
      }
      // The attention core is a fused flash-style kernel (see transformer_layer), which never
      // materializes the s x s scores, softmax or dropout mask (Dao et al. 2022): the 5as/h terms
      // do not apply. It keeps instead the softmax log-sum-exp, 4 bytes per (token, head).
      bytes = (s.sequence_parallel ? sbh * 34 / t : sbh * (10 + 24 / t)) + sl * b * a / t * 4;
      break;
  }
  if (s.precision == Precision::fp8 && r != Recompute::full) {
    // Transformer Engine keeps, for a linear layer's weight gradient, the FP8 copy of its input
    // that it cast anyway (LayerNormLinear's FP8 norm output, Linear's cast input), 1 B where
    // Korthikanti counts 2: QKV's and fc1's inputs (2sbh each, replicated over TP without SP)
    // halve, fc2's (the activation output, 8sbh/t, used by nothing else) too; the attention output
    // stays for the attention's backward and its FP8 copy for the projection's adds 1sbh/t.
    bytes -= s.sequence_parallel ? sbh * 5 / t : sbh * (2 + 3 / t);
  }
  if (moe_layer && m.is_moe() && r != Recompute::full) {
    const double load = m.moe.capacity_factor > 0 ? std::min(m.moe.imbalance, m.moe.capacity_factor) : m.moe.imbalance;
    const double width = (m.moe.top_k * load + m.moe.shared_experts) * d(m.moe.expert_ffn_hidden) / (4 * h);
    bytes += sbh * 16 * (width - 1) / t + 2 * m.moe.top_k * load * sbh / (s.sequence_parallel ? t : 1);
  }
  return core::Bytes(bytes * scale);
}

double model_flops_per_token(const ModelSpec& m, std::int64_t seq_len) {
  // PaLM (Chowdhery et al. 2022, appendix B): 6N + 12*L*H*Q*T per token, with N the weights that
  // take part in matmuls: every layer's parameters plus the output head (vocab*hidden, tied or
  // not); the input embedding is a lookup, not a matmul. The attention term counts the full
  // (non-causal) score matrix, by that convention.
  // For mixture-of-experts models N counts the weights a token uses (router, top_k and shared
  // experts), as DeepSeek-V3 and Megatron-Core report MoE MFU.
  const double n = m.active_all_layer_params() + d(m.vocab) * d(m.hidden);
  return 6 * n + 12.0 * m.layers * d(m.hidden) * d(seq_len);
}

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

std::optional<Recompute> recompute_from_name(std::string_view name) {
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
    if (name == recompute_name(r)) return r;
  return std::nullopt;
}

}  // namespace inflect::workload
