#pragma once
// The compiler: model + plan -> execution graph (the IR the engine runs) and memory estimate.
// (How the code is split into parts: docs/architecture.md, "The compiler (plan)".)
//
// Each simulated rank runs its pipeline stage's steps in the schedule's order (plan/schedule.hpp:
// forward, backward, or zero-bubble's split input- and weight-gradient steps; DualPipe's
// overlapped forward-and-backward pairs woven op by op), and each step becomes ops on the rank's
// streams, Megatron-style:
//   TP   around each block (attention, MLP) an all-reduce after its output projection, or with
//        sequence parallelism an all-gather before and a reduce-scatter after it, in forward and
//        backward; with tp_comm_overlap, Transformer Engine's overlap of those with the GEMMs.
//   CP   ring attention: the attention core in cp steps while the KV chunks move around the ring.
//   EP   MoE layers: token dispatch and combine as all-to-alls over the EP group around the
//        rank's experts (the shared experts optionally beside the dispatch).
//   PP   activations and gradients as send/recv with the ranks holding the neighbouring chunks,
//        on streams per kind and direction.
//   recompute: full repeats the layer's forward before its backward, selective the attention core.
//   DP   gradient buckets launched as they fill, behind the rest of the last micro-batch's
//        backward: all-reduce, or with ZeRO >= 1 reduce-scatter (ZeRO-2/3: every micro-batch's,
//        ZeRO-3 per layer); routed experts over the expert-data-parallel group; hybrid sharding
//        then all-reduces across replicas; without overlap_grad_reduce one reduction after the
//        schedule. Then DualPipe's two copies' gradients summed, the optimizer step, and with
//        ZeRO-1/2 the parameter all-gather. With training.diloco every data-parallel group lies
//        inside a worker, and a sync step adds the outer sync (DilocoStep, below). ZeRO-3 gathers each layer's parameters before it runs,
//        one layer ahead (again before its backward when resharded after forward).
// Kernels between two communication points are fused into one op, and collectives back to back
// on one group into one (same timing; CompileOptions).
// Fidelity: symmetric emits each stage's first rank, standing for the stage's tp*cp*dp ranks;
// full has every rank, those whose ops copy another's stored as replicas of it (by default a
// stage's later ranks replay its first rank's requests instead of being emitted).
// The memory estimate is plan/memory.hpp's; check_plan rejects what the plan cannot run.
#include <string>

#include "inflect/plan/experiment.hpp"
#include "inflect/plan/fidelity.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::plan {

/// Which step of a DiLoCo period (training.diloco) to build; ignored without it.
///   inner  the worker's step: gradients reduced inside the worker only;
///   sync   the inner step and an outer sync: with fragments 1, after the inner optimizer the
///          pseudo-gradient, its all-reduce across the workers and the outer optimizer, blocking
///          the step's end; with fragments F > 1, one fragment's all-reduce on its own stream
///          (`diloco_outer`) from the step's start, overlapped with its compute, and the
///          fragment's outer update after the inner optimizer (which it delays until the
///          all-reduce is done).
enum class DilocoStep : unsigned char { inner, sync };

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
  DilocoStep diloco_step = DilocoStep::inner;
};

struct CompiledPlan {
  workload::ExecutionGraph graph;
  MemoryEstimate memory;
  int dp = 1;
  int micro_batches = 1;  // tokens and model FLOPs per step: graph.facts()
  std::string summary;  // "tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1 m=192"
};

/// Derives dp from the device count when the plan leaves it 0.
int derive_dp(const Experiment& e);
/// Checks that `e` has a model and that plan::validate finds no problem with its plan; throws
/// core::Error(input) naming the first problem's key, its message and those of the others.
void check_plan(const Experiment& e);
CompiledPlan compile(const Experiment& e, const CompileOptions& options = {});

}  // namespace inflect::plan
