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

LayerKernels transformer_layer(const ModelSpec& m, const ShardShape& s);

/// Input embedding lookup (forward) and its gradient (backward) on the first stage.
std::vector<KernelSpec> embedding_fwd(const ModelSpec& m, const ShardShape& s);
std::vector<KernelSpec> embedding_bwd(const ModelSpec& m, const ShardShape& s);
/// Final norm, output projection (vocab split over tp), softmax cross-entropy on the last stage.
std::vector<KernelSpec> head_fwd(const ModelSpec& m, const ShardShape& s);
std::vector<KernelSpec> head_bwd(const ModelSpec& m, const ShardShape& s);
/// Adam update over `params` parameters held by this rank (fp32 master, two moments, grads).
KernelSpec optimizer_step(double params, core::Precision precision);

enum class Recompute : unsigned char { none, selective, full };

/// Activation bytes one layer keeps per micro-batch between its forward and backward on one rank
/// (Korthikanti et al. 2022: s*b*h*(34 + 5*a*s/h) without TP; /t with TP+SP; selective drops the
/// 5as/h attention part; full keeps only the layer input, 2sbh / (t if SP)).
core::Bytes activation_bytes_per_layer(const ModelSpec& m, const ShardShape& s, Recompute r);

/// Model FLOPs of one training step (forward + backward, no recomputation) for `tokens` tokens:
/// the sum of the kernels above over all layers, unsharded. Used for MFU.
double model_flops_per_token(const ModelSpec& m, std::int64_t seq_len);

}  // namespace inflect::workload
