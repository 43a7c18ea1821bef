#pragma once
// FLOPs, bytes and GEMM shapes of each kernel of a transformer layer as one rank runs it, given
// how the layer is sharded. The plan compiler strings these kernels into the execution graph and
// places communication at the block boundaries (see LayerKernels).
#include <cstdint>
#include <string>
#include <vector>

#include "inflect/core/precision.hpp"
#include "inflect/core/units.hpp"
#include "inflect/core/kernel_cost.hpp"
#include "inflect/workload/model.hpp"

namespace inflect::workload {

/// How one rank holds a layer: tensor-parallel degree, Megatron sequence parallelism, context
/// parallel degree, and the local batch (sequences) and sequence length it processes.
struct ShardShape {
  int tp = 1;
  bool sequence_parallel = false;
  int cp = 1;
  std::int64_t micro_batch = 1;  // sequences per micro-batch
  std::int64_t seq_len = 0;      // full sequence length (before CP split)
  core::Precision precision = core::Precision::bf16;
};

/// One kernel: a name for traces ("qkv_proj", "attn_core", ...) and its cost.
struct KernelSpec {
  std::string name;
  core::KernelCost cost;
  /// A weight-gradient GEMM: zero-bubble schedules defer these to a later W step.
  bool weight_gradient = false;
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
};

/// The kernels of one layer as one rank runs them: T = micro_batch*seq_len/cp local tokens; GEMMs
/// with m = T and the TP-split n or k; causal flash attention (half the non-causal 4*b*s^2*h/tp,
/// /cp); norms and dropouts on T/tp tokens with SP. Backward: dgrad + wgrad per GEMM, flash
/// attention 2.5x forward FLOPs. Deterministic; FLOPs in FLOP, bytes of HBM traffic.
LayerKernels transformer_layer(const ModelSpec& m, const ShardShape& s);

/// Input embedding lookup (forward) and its gradient (backward) on the first stage.
std::vector<KernelSpec> embedding_fwd(const ModelSpec& m, const ShardShape& s);
std::vector<KernelSpec> embedding_bwd(const ModelSpec& m, const ShardShape& s);
/// Final norm, output projection (vocab split over tp), softmax cross-entropy on the last stage.
std::vector<KernelSpec> head_fwd(const ModelSpec& m, const ShardShape& s);
std::vector<KernelSpec> head_bwd(const ModelSpec& m, const ShardShape& s);
/// Adam update over `params` parameters held by this rank, memory-bound: per parameter read fp32
/// master, m, v and fp32 grad, write master, m, v, and write the 16-bit weight unless `precision`
/// is fp32/tf32 (30 B/param in bf16).
KernelSpec optimizer_step(double params, core::Precision precision);

enum class Recompute : unsigned char { none, selective, full };

/// Activation bytes one layer keeps per micro-batch between its forward and backward on one rank
/// (Korthikanti et al. 2022: s*b*h*(34 + 5*a*s/h) without TP; /t with TP+SP; with TP but no SP
/// s*b*h*(10 + 24/t + 5*a*s/(h*t)); selective drops the 5as/h attention part; full keeps only the
/// layer input, 2sbh / (t if SP)). s is the local s/cp. Bytes for 16-bit activations; x2 for fp32.
core::Bytes activation_bytes_per_layer(const ModelSpec& m, const ShardShape& s, Recompute r);

/// Model FLOPs per token of one training step (forward + backward, no recomputation), by the PaLM
/// convention: 6*N + 12*layers*hidden*seq_len, N = layers*layer_params() + vocab*hidden (every
/// matmul weight incl. the output head; not the embedding lookup). The attention term counts the
/// full score matrix, as PaLM does, so it is larger than the causal kernels above. Used for MFU.
double model_flops_per_token(const ModelSpec& m, std::int64_t seq_len);

}  // namespace inflect::workload
