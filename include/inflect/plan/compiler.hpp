#pragma once
// The compiler: model + plan -> execution graph (the IR the engine runs) and memory estimate.
//
// Megatron-style semantics: TP collectives after each block's output projection (all-reduce, or
// with sequence parallelism an all-gather before and a reduce-scatter after each block, in forward
// and backward); PP activations and gradients as send/recv between neighbouring stages on their
// own streams, in the order of the pipeline schedule; recomputation before each layer's backward;
// DP gradient buckets (all-reduce, or reduce-scatter with ZeRO-1) launched on the "dp" stream as
// soon as the last micro-batch's backward has produced a bucket, overlapped with the rest of the
// backward; the optimizer step after the last bucket; with ZeRO-1 the parameter all-gather after
// it. Kernels between two communication points are fused into one op (timing unchanged).
#include <string>

#include "inflect/plan/experiment.hpp"
#include "inflect/plan/fidelity.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::plan {

struct CompileOptions {
  Fidelity fidelity = Fidelity::symmetric;
  /// One op per block between communication points (true) or one op per kernel (false).
  bool fuse_blocks = true;
  /// With fuse_blocks: also one op per run of collectives back to back on one group
  /// (workload::Collective::then; same timing). False keeps one op per collective.
  bool fuse_collectives = true;
  /// Full fidelity: emit each pipeline stage's first rank and add the stage's other ranks as
  /// replicas of it by replaying its process-group requests from their coordinates (true), or
  /// emit every rank and let ExecutionGraph::end_rank compare (false). Same graph either way (a
  /// test compares them); false is the reference the replay is checked against.
  bool replay_stage_ranks = true;
};

struct CompiledPlan {
  workload::ExecutionGraph graph;
  MemoryEstimate memory;
  int dp = 1;
  int micro_batches = 1;
  double tokens_per_step = 0;
  double model_flops_per_step = 0;
  std::string summary;  // "tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1 m=192"
};

/// Derives dp from the device count when the plan leaves it 0.
int derive_dp(const Experiment& e);
/// Checks that `e` has a model and that plan::validate finds no problem with its plan; throws
/// core::Error(input) naming the first problem's key, its message and those of the others.
void check_plan(const Experiment& e);
CompiledPlan compile(const Experiment& e, const CompileOptions& options = {});

}  // namespace inflect::plan
