#pragma once
// DiLoCo's plan-side model (training.diloco; docs/low-communication.md): which ranks form a
// worker, and what an outer synchronisation sends and computes. The compiler builds the inner
// step and the sync step from these; analysis/diloco amortises their simulated times.
//
// Workers: the dp data-parallel ranks are split into K contiguous workers of dp/K ranks (each
// with all of its cp ranks), so that with the default placement a worker fills whole nodes (and,
// with sites, whole sites). An inner step reduces gradients only inside its worker: every
// data-parallel group (the gradient reduction, ZeRO's sharding, hybrid sharding's shard groups
// and replicas, EP's expert-data-parallel group) is the synchronous plan's group with dp/K in
// place of dp. The outer all-reduce then runs on the K ranks that hold the same part of the
// parameters, one in each worker (`outer group`: same tp, cp, pp and place in its worker).
//
// Sources: Douillard et al. 2023, "DiLoCo: Distributed Low-Communication Training of Language
// Models" (arXiv 2311.08455; inner AdamW for H steps, outer Nesterov SGD on the averaged
// parameter change); Jaghouar et al. 2024, "INTELLECT-1 Technical Report" (arXiv 2412.01152; int8
// outer all-reduce); Douillard et al. 2025, "Streaming DiLoCo with overlapping communication"
// (arXiv 2501.18512; fragments).
#include <optional>
#include <string_view>

#include "inflect/plan/experiment.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/workload/exec_graph.hpp"
#include "inflect/workload/layer_costs.hpp"

namespace inflect::plan {

/// K, the DiLoCo workers; 1 without training.diloco.
int diloco_workers(const Experiment& e);
/// Data-parallel ranks per worker: dp / K (dp without training.diloco).
int worker_dp(const Experiment& e, int dp);

/// "none", "fp16", "bf16", "int8", "topk": the YAML value.
const char* compression_name(OuterCompression c);
/// The compression whose compression_name() is `name`, or nullopt.
std::optional<OuterCompression> compression_from_name(std::string_view name);

/// Bytes of the lookup table prime's int8 all-reduce sends with each chunk of the ring: 256 fp32
/// values, the mean of the pseudo-gradient's elements in each of the 256 quantization bins
/// (PrimeIntellect-ai/prime at 5cc57a0f, src/zeroband/C/csrc/collectives.cpp, ring_allreduce:
/// `recv_lookup_buffer ... torch::empty({256}, ...)` of the float chunk's options; compression.cpp,
/// uniform_8bit_quantize with n_bins = 256 over +-6 sigma).
inline constexpr double kInt8TableBytes = 256 * 4;
/// Chunks per rank of that ring: the tensor is cut into world_size * BUFFER_COUNT chunks, each sent
/// with its own table (collectives.cpp: `constexpr int BUFFER_COUNT = 2`).
inline constexpr double kInt8ChunksPerRank = 2;
/// Bytes of a top-k entry: the fp32 value of the pseudo-gradient and an int32 index into the
/// rank's part of the parameters (which exceeds 2^16 elements for any model worth syncing).
inline constexpr double kTopkEntryBytes = 4 + 4;

/// One rank's outer collective for one sync of `params` parameters (a fragment's share of the
/// parameters the rank holds) among the K workers.
struct OuterCollective {
  workload::CollectiveKind kind = workload::CollectiveKind::all_reduce;
  /// In nccl-tests' convention, as the graph's collectives: the all-reduce's buffer, or for top-k
  /// the all-gather's output (K ranks' entries).
  double bytes = 0;
  /// What the rank contributes: the all-reduce's buffer, or its own top-k entries.
  double payload = 0;
  /// What the rank sends to ranks of other workers, bandwidth-optimally (a ring): 2(K-1)/K of an
  /// all-reduce's buffer, (K-1)/K of an all-gather's output.
  double sent = 0;
};
/// The pseudo-gradient of `params` parameters as `d.compression` sends it:
///   none       fp32, 4 B/param (the outer optimizer's own precision), all-reduce;
///   fp16, bf16 2 B/param, all-reduce;
///   int8       1 B/param plus kInt8TableBytes per chunk, kInt8ChunksPerRank * K chunks, all-reduce
///              (prime's ring; its payload reproduces exactly what that ring sends per rank);
///   topk       ceil(topk_fraction * params) entries of kTopkEntryBytes, all-gathered: the ranks'
///              entries sit at different indices, so they cannot be summed on the way as an
///              all-reduce's chunks are; each rank gathers all K sets and sums them itself.
OuterCollective outer_collective(const DilocoSpec& d, double params);

/// The parameters of stage `st` that one rank's optimizer updates: its ZeRO shard (with ZeRO >= 1
/// the dense part over the shard group, routed experts over the expert-data-parallel group, both
/// inside the rank's worker), else all it holds. What DiLoCo's outer step syncs.
double optimizer_shard_params(const Experiment& e, int dp, const StageMemory& st);
/// One rank's share of stage `st`'s parameters when the worker's dp*cp ranks (dp*cp/ep for routed
/// experts) split them evenly: what it reduces across workers in a hierarchical all-reduce.
double worker_share_params(const Experiment& e, int dp, const StageMemory& st);

/// What each rank of synchronous data parallelism over the same ranks sends across worker
/// boundaries per step, bandwidth-optimally: its worker share of the gradients, `share_bytes`,
/// all-reduced across the K workers in a hierarchical all-reduce (reduce-scatter inside the
/// worker, all-reduce of the shares across the workers, all-gather inside): 2(K-1)/K *
/// share_bytes. ZeRO's parameter gathers are not counted (a lower bound on DP's traffic).
double dp_sent_across_workers(double share_bytes, int workers);

/// The pseudo-gradient of `params` fp32 parameters: read the master weights and the outer copy
/// (the parameters at the last sync), write their difference: 12 B/param, memory-bound.
workload::KernelSpec pseudo_gradient_kernel(double params);
/// The outer optimizer (Nesterov momentum SGD, DiLoCo's) on `params` parameters: read the averaged
/// pseudo-gradient, the momentum and the outer copy, write the momentum and the outer copy, and
/// copy the result into the inner model's master weights and (unless training in fp32) its 16-bit
/// weights: 24 (+2) B/param, memory-bound.
workload::KernelSpec outer_update_kernel(double params, core::Precision precision);
/// Bytes per parameter of DiLoCo's outer state in device memory: the outer copy and the momentum,
/// fp32 (sharded like the optimizer's states).
inline constexpr double kOuterStateBytes = 8;

}  // namespace inflect::plan
