#pragma once
// Per-rank peak memory of a plan: weights, gradients, optimizer states, activations (by schedule
// and recomputation) and communication buffers, against the device's HBM.
//
// Conventions (Megatron-LM with bf16/fp16 mixed precision, documented in docs/memory.md):
//   weights      = params_on_rank * bytes(precision)
//   gradients    = params_on_rank * grad_bytes_per_param (fp32 main grads for bf16, as Megatron sets
//                  accumulate_allreduce_grads_in_fp32 for bf16; fp16 grads for fp16)
//   optimizer    = params_on_rank * 12      (Adam: fp32 master copy + two fp32 moments),
//                  divided over the data-parallel(*cp) group with ZeRO-1 (distributed optimizer)
//   activations  = layers_on_stage * activation_bytes_per_layer * in-flight micro-batches,
//                  plus the logits of the last stage (fp32, b*s*V/tp) and the embedding output
//   buffers      = one gradient bucket + the pipeline send/recv buffers
#include <string>
#include <vector>

#include "inflect/core/units.hpp"
#include "inflect/plan/experiment.hpp"

namespace inflect::plan {

struct StageMemory {
  int stage = 0;
  double params = 0;  // parameters held by one rank of the stage
  core::Bytes weights, gradients, optimizer, activations, buffers;
  core::Bytes total() const { return weights + gradients + optimizer + activations + buffers; }
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;
  int peak_stage = 0;
  core::Bytes peak;
  core::Bytes capacity;
  bool fits() const { return peak <= capacity; }
};

/// How one rank holds each layer under the experiment's plan.
workload::ShardShape shard_shape(const Experiment& e);
/// Bytes per parameter of the gradients that are accumulated and reduced across data parallelism.
double grad_bytes_per_param(core::Precision p);
/// Layers held by each pipeline stage (even split; the caller has checked divisibility).
std::vector<int> layers_per_stage(const workload::ModelSpec& m, int pp);
MemoryEstimate estimate_memory(const Experiment& e, int dp);

}  // namespace inflect::plan
