#pragma once
// The compiler: model + plan -> execution graph (the IR the engine runs) and memory estimate.
//
// Megatron-style semantics, rank by rank (docs/plans.md; how the code is split:
// docs/architecture.md, "The compiler (plan)"): TP collectives around each block (all-reduce, or
// with sequence parallelism an all-gather before and a reduce-scatter after, in forward and
// backward; with tp_comm_overlap Transformer Engine's ring exchange and pipelined
// reduce-scatter); context parallelism as ring attention; MoE layers with EP all-to-all dispatch
// and combine; PP sends and receives in the order of the pipeline schedule (1F1B, GPipe,
// interleaved, zero-bubble, DualPipe/DualPipeV, custom), on their own streams; full or selective
// recomputation; DP gradient buckets on the "dp" stream as they fill, overlapped with the
// backward (all-reduce, reduce-scatter with ZeRO >= 1, expert gradients over the
// expert-data-parallel group, hybrid sharding's replica all-reduce); ZeRO-3/FSDP's per-layer
// parameter gathers one layer ahead; after the last DP op DualPipe's two copies summed, the
// optimizer, and with ZeRO-1/2 the parameter all-gather. Kernels between two communication
// points are fused into one op, and so are collectives back to back on one group (timing
// unchanged). Full fidelity adds the ranks that copy their stage's first rank as replicas.
#include <string>

#include "inflect/plan/experiment.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::plan {

enum class Fidelity : unsigned char { full, symmetric };

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
/// Checks the plan against the model and cluster; throws core::Error(input) naming the key.
void check_plan(const Experiment& e);
CompiledPlan compile(const Experiment& e, const CompileOptions& options = {});

}  // namespace inflect::plan
