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
  Precision p;
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
  x.bpe = core::bytes_per_element(s.precision);
  x.gpt = m.mlp == MlpKind::gelu;
  x.p = s.precision;
  return x;
}

KernelSpec norm_fwd(const std::string& name, const Dims& x) {
  double elems = x.norm_tokens * x.h;
  return memory(name, 2 * elems * x.bpe, elems * (x.gpt ? kLayerNormOps : kRmsNormOps), x.p);
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

// Causal flash attention of the rank's local queries. Non-causal attention does QK^T and PV, each
// 2*b*s*s*h FLOPs over all heads: 4*b*s^2*h; causal masking skips half; TP splits heads; CP splits
// the (load-balanced) causal work evenly over the cp ranks.
double attn_fwd_flops(const Dims& x, double cp) {
  return 0.5 * 4 * x.b * x.s_full * x.s_full * x.q_width / cp;
}

}  // namespace

LayerKernels transformer_layer(const ModelSpec& m, const ShardShape& s) {
  const Dims x = dims(m, s);
  const double T = x.tokens;
  const double cp = s.cp;
  LayerKernels lk;

  // HBM traffic of attention: the local Q and O, plus K and V of every chunk the local queries
  // attend to (with CP the ring brings the whole sequence's K/V through; the upper bound) — the
  // s x s score matrix never leaves SRAM.
  const double q_bytes = T * x.q_width * x.bpe;
  const double kv_full_bytes = 2 * x.b * x.s_full * x.kv_width * x.bpe;
  const double attn_fwd = attn_fwd_flops(x, cp);

  // ---- attention block, forward
  lk.attn_fwd.push_back(norm_fwd("input_norm", x));
  lk.attn_fwd.push_back(gemm("qkv_proj", T, x.q_width + 2 * x.kv_width, x.h, x.p));
  if (!x.gpt) {
    double elems = T * (x.q_width + x.kv_width);  // rotary on Q and K
    lk.attn_fwd.push_back(memory("rotary", 2 * elems * x.bpe, elems * kRotaryOps, x.p));
  }
  {
    KernelCost c;
    c.cls = KernelClass::attention;
    c.precision = x.p;
    c.flops = Flops(attn_fwd);
    c.bytes = Bytes(2 * q_bytes + kv_full_bytes);  // read Q, K, V; write O
    lk.attn_fwd.push_back({"attn_core", c});
  }
  lk.attn_fwd.push_back(gemm("attn_out_proj", T, x.h, x.q_width, x.p));
  lk.attn_fwd.push_back(block_out_fwd("attn", x));

  // ---- MLP block, forward
  lk.mlp_fwd.push_back(norm_fwd("post_attn_norm", x));
  if (x.gpt) {
    lk.mlp_fwd.push_back(gemm("mlp_fc1", T, x.ffn, x.h, x.p));
    double elems = T * x.ffn;
    lk.mlp_fwd.push_back(memory("bias_gelu", 2 * elems * x.bpe, elems * kGeluOps, x.p));
  } else {
    lk.mlp_fwd.push_back(gemm("mlp_gate_up", T, 2 * x.ffn, x.h, x.p));
    double elems = T * x.ffn;
    lk.mlp_fwd.push_back(memory("swiglu", 3 * elems * x.bpe, elems * kSwigluOps, x.p));
  }
  lk.mlp_fwd.push_back(gemm(x.gpt ? "mlp_fc2" : "mlp_down", T, x.h, x.ffn, x.p));
  lk.mlp_fwd.push_back(block_out_fwd("mlp", x));

  // ---- MLP block, backward (runs first)
  block_out_bwd(lk.mlp_bwd, "mlp", x);
  gemm_bwd(lk.mlp_bwd, x.gpt ? "mlp_fc2" : "mlp_down", T, x.h, x.ffn, x.p);
  {
    double elems = T * x.ffn;
    if (x.gpt)  // read grad and saved input, write grad
      lk.mlp_bwd.push_back(memory("bias_gelu_bwd", 3 * elems * x.bpe, 2 * elems * kGeluOps, x.p));
    else        // read grad and saved gate/up, write both gradients
      lk.mlp_bwd.push_back(memory("swiglu_bwd", 5 * elems * x.bpe, 2 * elems * kSwigluOps, x.p));
  }
  gemm_bwd(lk.mlp_bwd, x.gpt ? "mlp_fc1" : "mlp_gate_up", T, x.gpt ? x.ffn : 2 * x.ffn, x.h, x.p);
  lk.mlp_bwd.push_back(norm_bwd("post_attn_norm_bwd", x));
  lk.mlp_bwd.push_back(residual_grad_add("mlp", x));

  // ---- attention block, backward
  block_out_bwd(lk.attn_bwd, "attn", x);
  gemm_bwd(lk.attn_bwd, "attn_out_proj", T, x.h, x.q_width, x.p);
  {
    KernelCost c;
    c.cls = KernelClass::attention_backward;
    c.precision = x.p;
    c.flops = Flops(kFlashBwdFlopRatio * attn_fwd);
    // read Q, O, dO, K, V; write dQ, dK, dV
    c.bytes = Bytes(4 * q_bytes + 2 * kv_full_bytes);
    lk.attn_bwd.push_back({"attn_core_bwd", c});
  }
  if (!x.gpt) {
    double elems = T * (x.q_width + x.kv_width);
    lk.attn_bwd.push_back(memory("rotary_bwd", 2 * elems * x.bpe, elems * kRotaryOps, x.p));
  }
  gemm_bwd(lk.attn_bwd, "qkv_proj", T, x.q_width + 2 * x.kv_width, x.h, x.p);
  lk.attn_bwd.push_back(norm_bwd("input_norm_bwd", x));
  lk.attn_bwd.push_back(residual_grad_add("attn", x));

  lk.tp_boundary_bytes = s.tp > 1 ? Bytes(T * x.h * x.bpe) : Bytes(0);
  lk.cp_kv_bytes = s.cp > 1 ? Bytes(2 * T * x.kv_width * x.bpe) : Bytes(0);
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
    KernelSpec g = gemm(std::move(name), rows, n, kk, x.p);
    const auto batch = static_cast<std::int64_t>(local_experts);
    g.cost.batch = batch;
    g.cost.flops = Flops(g.cost.flops.value() * local_experts);
    g.cost.bytes = Bytes(g.cost.bytes.value() * local_experts);
    return g;
  };
  const double up = x.gpt ? fe : 2 * fe;  // fc1, or gate and up together

  // ---- forward
  k.pre_fwd.push_back(norm_fwd("post_attn_norm", x));
  k.pre_fwd.push_back(gemm("router", T, m.moe.experts, x.h, x.p));
  k.pre_fwd.push_back(memory("router_topk", 2 * T * m.moe.experts * 4, T * m.moe.experts * kAddOps, x.p));  // fp32 logits
  if (m.moe.shared_experts > 0) {
    const double sf = m.moe.shared_experts * fe;
    k.pre_fwd.push_back(gemm("shared_up", T, x.gpt ? sf : 2 * sf, x.h, x.p));
    k.pre_fwd.push_back(memory("shared_act", 3 * T * sf * x.bpe, T * sf * kSwigluOps, x.p));
    k.pre_fwd.push_back(gemm("shared_down", T, x.h, sf, x.p));
  }
  k.pre_fwd.push_back(memory("moe_permute", 2 * T * m.moe.top_k * x.h * x.bpe, 0, x.p));
  k.experts_fwd.push_back(grouped("experts_up", per_expert, up, x.h));
  k.experts_fwd.push_back(memory("experts_act", 3 * copies * fe * x.bpe, copies * fe * kSwigluOps, x.p));
  k.experts_fwd.push_back(grouped("experts_down", per_expert, x.h, fe));
  k.post_fwd.push_back(memory("moe_unpermute_combine", (T * m.moe.top_k + T) * x.h * x.bpe, T * m.moe.top_k * x.h * 2, x.p));
  k.post_fwd.push_back(block_out_fwd("mlp", x));

  // ---- backward (post, experts, pre)
  block_out_bwd(k.post_bwd, "mlp", x);
  k.post_bwd.push_back(memory("moe_unpermute_combine_bwd", (T * m.moe.top_k + T) * x.h * x.bpe, T * m.moe.top_k * x.h * 2, x.p));
  auto grouped_bwd = [&](const std::string& name, double rows, double n, double kk) {
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
    gemm_bwd(k.pre_bwd, "shared_down", T, x.h, sf, x.p);
    k.pre_bwd.push_back(memory("shared_act_bwd", 5 * T * sf * x.bpe, 2 * T * sf * kSwigluOps, x.p));
    gemm_bwd(k.pre_bwd, "shared_up", T, x.gpt ? sf : 2 * sf, x.h, x.p);
  }
  gemm_bwd(k.pre_bwd, "router", T, m.moe.experts, x.h, x.p);
  k.pre_bwd.push_back(norm_bwd("post_attn_norm_bwd", x));
  k.pre_bwd.push_back(residual_grad_add("mlp", x));

  k.dispatch_bytes = Bytes(T * m.moe.top_k * k.load * x.h * x.bpe / (s.sequence_parallel ? s.tp : 1));
  return k;
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
  out.push_back(gemm("logits", x.tokens, v, x.h, x.p));
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
  gemm_bwd(out, "logits", x.tokens, v, x.h, x.p);
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
  out.cost.bytes = Bytes((rows * k + k * n + rows * n) * core::bytes_per_element(g.cost.precision));
  return out;
}

KernelSpec optimizer_step(double params, core::Precision precision) {
  // Mixed-precision Adam as Megatron runs it, per parameter: read fp32 master weight, m and v
  // (12 B) and the fp32 main gradient (4 B); write master, m and v (12 B); and, unless training in
  // fp32, write the 16-bit model weight (2 B; fp8 recipes also keep 16-bit weights). = 30 B/param.
  bool fp32_weights = precision == core::Precision::fp32 || precision == core::Precision::tf32;
  double per_param = 12 + 4 + 12 + (fp32_weights ? 0 : 2);
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
      (s.precision == core::Precision::fp32 || s.precision == core::Precision::tf32) ? 2.0 : 1.0;
  double bytes = 0;
  switch (r) {
    case Recompute::full:
      bytes = 2 * sbh / (s.sequence_parallel ? t : 1);
      break;
    case Recompute::selective:
      bytes = s.sequence_parallel ? sbh * 34 / t : sbh * (10 + 24 / t);
      break;
    case Recompute::none:
      // The attention core is a fused flash-style kernel (see transformer_layer), which never
      // materializes the s x s scores, softmax or dropout mask (Dao et al. 2022): the 5as/h terms
      // do not apply. It keeps instead the softmax log-sum-exp, 4 bytes per (token, head).
      bytes = (s.sequence_parallel ? sbh * 34 / t : sbh * (10 + 24 / t)) + sl * b * a / t * 4;
      break;
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
