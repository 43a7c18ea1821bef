#pragma once
// FLOPs, bytes and GEMM shapes of each kernel of a transformer layer as one rank runs it, given
// how the layer is sharded. The plan compiler strings these kernels into the execution graph and
// places communication at the block boundaries (see LayerKernels).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inflect/core/precision.hpp"
#include "inflect/core/units.hpp"
#include "inflect/core/kernel_cost.hpp"
#include "inflect/workload/model.hpp"

namespace inflect::workload {

/// What an FP8 recipe (training precision fp8) runs in FP8 beyond the linear layers' GEMMs, which
/// always do. Both default off, as in Transformer Engine and Megatron-Core (TE's fp8_dpa /
/// Megatron's --fp8-dot-product-attention; the output head is not a TE module).
struct Fp8Recipe {
  bool attention = false;    // the attention core in FP8 (fp8_dpa)
  bool output_head = false;  // the vocabulary projection in FP8
};

/// How one rank holds a layer: tensor-parallel degree, Megatron sequence parallelism, context
/// parallel degree, and the local batch (sequences) and sequence length it processes.
struct ShardShape {
  int tp = 1;
  bool sequence_parallel = false;
  int cp = 1;
  int ep = 1;  // expert-parallel degree: each rank holds experts/ep routed experts
  std::int64_t micro_batch = 1;  // sequences per micro-batch
  std::int64_t seq_len = 0;      // full sequence length (before CP split)
  /// The training precision: what the linear layers' GEMMs run in. Everything else runs in
  /// core::activation_precision(precision) (BF16 for fp8).
  core::Precision precision = core::Precision::bf16;
  Fp8Recipe fp8;
  /// Attention as separate kernels that write the s x s scores to HBM (Megatron-LM before flash
  /// attention) instead of one fused flash kernel.
  bool unfused_attention = false;
};

/// One kernel: a name for traces ("qkv_proj", "attn_core", ...) and its cost.
struct KernelSpec {
  std::string name;
  core::KernelCost cost;
  /// A weight-gradient GEMM: zero-bubble schedules defer these to a later W step.
  bool weight_gradient = false;
  /// Part of the attention core between the QKV and output projections (the fused flash kernel,
  /// or the unfused scores/softmax/dropout/context kernels): what selective recompute re-runs
  /// and what context parallelism splits into ring steps.
  bool attention_core = false;
};

/// A layer's kernels by block. Megatron TP puts one collective after each block's output
/// projection (all-reduce, or reduce-scatter with SP) and, with SP, an all-gather before each block.
struct LayerKernels {
  std::vector<KernelSpec> attn_fwd, mlp_fwd;  // forward, in order
  std::vector<KernelSpec> attn_bwd, mlp_bwd;  // backward, in execution order (mlp_bwd runs first)
  /// Bytes of the activation tensor exchanged at a TP block boundary: b * s/cp * h * bytes (full
  /// tensor; the collective divides it). Zero when tp == 1.
  core::Bytes tp_boundary_bytes;
  /// Bytes of K and V of the local sequence chunk, passed around the CP ring per step.
  core::Bytes cp_kv_bytes;
  /// With CP as a ring: what each ring step adds beside its block of attention. Forward, merging
  /// the step's partial output into the running one by their log-sum-exps; backward, adding the
  /// step's dQ and dK/dV into their accumulators (Transformer Engine's AttnFuncWithCPAndKVP2P:
  /// flash_attn_fwd_out_correction, and the dq/dkv adds of its backward). Empty when cp == 1.
  std::vector<KernelSpec> cp_step_fwd, cp_step_bwd;
};

/// One fused flash attention kernel: `batch` sequences of `q_len` queries attending to `kv_len`
/// keys; widths are heads x head dim (the query heads', and the key (= value) heads', fewer with
/// GQA). The transformer layer's attention core and a trace's recorded flash attention op.
struct FlashAttentionShape {
  double batch = 1, q_len = 0, kv_len = 0, q_width = 0, kv_width = 0;
  bool causal = true;
};

/// Its cost. Forward: Q K^T and P V, 2*q_len*kv_len*head_dim FLOPs each per query head, half of
/// them skipped by causal masking; HBM traffic Q, K, V in and O out (the scores never leave SRAM).
/// Backward: 2.5x the forward's FLOPs (FlashAttention-2's five matmuls against two); Q, O, dO, K,
/// V in and dQ, dK, dV out. Tensors move at `element_bytes` each (the layer model keeps them at
/// the activations' precision when the core runs FP8); the kernel runs at `p`.
core::KernelCost flash_attention_cost(const FlashAttentionShape& a, core::Precision p, double element_bytes, bool backward);

/// The kernels of one layer as one rank runs them: T = micro_batch*seq_len/cp local tokens; GEMMs
/// with m = T and the TP-split n or k; causal flash attention (half the non-causal 4*b*s^2*h/tp,
/// /cp); norms and dropouts on T/tp tokens with SP. Backward: dgrad + wgrad per GEMM, flash
/// attention 2.5x forward FLOPs. Deterministic; FLOPs in FLOP, bytes of HBM traffic.
LayerKernels transformer_layer(const ModelSpec& m, const ShardShape& s);

/// The MLP of a mixture-of-experts layer as one rank runs it, in three pieces split by the EP
/// all-to-alls (token dispatch before the routed experts, combine after):
///   pre      norm, router GEMM (h x experts, replicated) and top-k, the shared experts on every
///            local token, and the permutation of routed token copies into expert order;
///   experts  grouped GEMMs of the rank's experts/ep experts over the token copies routed to them:
///            T*top_k copies per rank when balanced, times the imbalance (capped by the capacity
///            factor when there is one) on the busiest rank, which the step waits for;
///   post     un-permutation, the top-k weighted sum and the block output.
/// Backward runs post, experts, pre in that order. Expert GEMMs are TP-sharded like the dense MLP.
struct MoeKernels {
  std::vector<KernelSpec> pre_fwd, experts_fwd, post_fwd;
  std::vector<KernelSpec> post_bwd, experts_bwd, pre_bwd;
  /// Bytes each rank puts into one dispatch (and one combine) all-to-all: its T*top_k token
  /// copies of h elements (/tp with SP), times the imbalance of the busiest rank.
  core::Bytes dispatch_bytes;
  /// Token copies the busiest rank's experts process, over the balanced T*top_k.
  double load = 1;
};
MoeKernels moe_mlp(const ModelSpec& m, const ShardShape& s);

/// One of `parts` equal slices of the GEMM `g` along its rows (M/parts rows), as a GEMM pipelined
/// with its communication runs it (Transformer Engine's TP overlap): the slice has 1/parts of the
/// FLOPs and its own shape, so the compute model times it as the smaller GEMM it is (wave
/// quantization and a lower efficiency included), and each slice reads the whole weight again.
/// `g` must be a GEMM (class gemm, batch 1).
KernelSpec gemm_row_slice(const KernelSpec& g, int parts);

/// What torchtitan's op-level selective activation checkpointing re-runs of a dense layer before
/// its backward (torchtitan llama3 parallelize.py, selective_ac_option 'op'): every op outside its
/// save list (norms, rotary, activations, residual adds, casts) and every second matmul of the
/// layer, counted wq, wk, wv, wo, w1, w3, w2 (Llama) or wq, wk, wv, wo, fc1, fc2 (GPT): wk, wo and
/// w3 (GPT: fc2). The attention kernel is in the save list. Our fused QKV and gate-up GEMMs are cut
/// to those columns. Forward kernels of `lk`, in order; names end in "_recompute".
std::vector<KernelSpec> every_other_matmul_recompute(const ModelSpec& m, const LayerKernels& lk);

/// Input embedding lookup (forward) and its gradient (backward) on the first stage.
std::vector<KernelSpec> embedding_fwd(const ModelSpec& m, const ShardShape& s);
std::vector<KernelSpec> embedding_bwd(const ModelSpec& m, const ShardShape& s);
/// Final norm, output projection (vocab split over tp), softmax cross-entropy on the last stage.
std::vector<KernelSpec> head_fwd(const ModelSpec& m, const ShardShape& s);
std::vector<KernelSpec> head_bwd(const ModelSpec& m, const ShardShape& s);
/// The per-step FP8 copies of `params` linear-layer weights held in BF16: one cast_transpose each
/// (read 2 B, write the FP8 weight and its transpose, 2 B), as Transformer Engine makes them on a
/// step's first micro-batch and keeps for the rest (is_first_microbatch). Empty unless `precision`
/// is fp8.
std::vector<KernelSpec> fp8_weight_casts(double params, core::Precision precision);
/// Bytes per parameter the optimizer keeps and moves: the master weights (4 for an FP32 copy, 2 for
/// the 16-bit remainders that with the BF16 weight make up an FP32 value, as Apex's
/// DistributedFusedAdam stores them under NeMo; 0 with none), each of Adam's two moments, and the
/// main gradient the optimizer reads (and DP reduces).
struct OptimizerState {
  double master = 4;
  double moment = 4;
  double gradient = 4;
  bool remainder = false;  // master holds remainders: the optimizer also reads the 16-bit weight
};
/// Adam update over `params` parameters held by this rank, memory-bound: per parameter read fp32
/// master, m, v and fp32 grad, write master, m, v, and write the 16-bit weight unless `precision`
/// is fp32/tf32 (30 B/param in bf16).
KernelSpec optimizer_step(double params, core::Precision precision, const OptimizerState& state = {});

enum class Recompute : unsigned char { none, selective, full };
/// "none", "selective", "full": the YAML value, for plan summaries and reports.
const char* recompute_name(Recompute r);
/// The Recompute whose recompute_name() is `name`, or nullopt.
std::optional<Recompute> recompute_from_name(std::string_view name);

/// Activation bytes one layer keeps per micro-batch between its forward and backward on one rank
/// (Korthikanti et al. 2022: s*b*h*(34 + 5*a*s/h) without TP; /t with TP+SP; with TP but no SP
/// s*b*h*(10 + 24/t + 5*a*s/(h*t)); selective drops the 5as/h attention part; full keeps only the
/// layer input, 2sbh / (t if SP)). s is the local s/cp. Bytes for 16-bit activations; x2 for fp32.
/// For an MoE layer (`moe_layer`) the MLP's ffn-wide terms (16 s*b*h of a 4h MLP) scale with the
/// routed and shared expert width a token passes through, (top_k*load + shared)*expert_ffn/(4h),
/// and the permuted token copies add 2*top_k*s*b*h.
core::Bytes activation_bytes_per_layer(const ModelSpec& m, const ShardShape& s, Recompute r, bool moe_layer = false);

/// Model FLOPs per token of one training step (forward + backward, no recomputation), by the PaLM
/// convention: 6*N + 12*layers*hidden*seq_len, N = layers*layer_params() + vocab*hidden (every
/// matmul weight incl. the output head; not the embedding lookup). The attention term counts the
/// full score matrix, as PaLM does, so it is larger than the causal kernels above. Used for MFU.
double model_flops_per_token(const ModelSpec& m, std::int64_t seq_len);

}  // namespace inflect::workload
