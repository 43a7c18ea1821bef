#pragma once
// One experiment, resolved: the cluster (topology + device + node count), the workload (a model
// or a recorded execution graph), the training settings and the parallelism plan. io loads it
// from YAML; analysis::simulate runs it. Nothing here has a silent default that changes results:
// defaults are the documented ones of the option table in io (docs/experiment.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inflect/core/precision.hpp"
#include "inflect/hw/device.hpp"
#include "inflect/net/topology_spec.hpp"
#include "inflect/plan/framework.hpp"
#include "inflect/workload/layer_costs.hpp"
#include "inflect/workload/model.hpp"
#include "inflect/workload/trace_import.hpp"

namespace inflect::plan {

/// Devices that are not thermally identical (cluster.thermal): a seeded random spread of every
/// device's thermal resistance, and named hot devices. Any of it makes devices differ, so the
/// symmetric fidelity falls back to full (analysis::simulate).
struct ThermalVariation {
  double spread = 0;       // each device's resistance x (1 + spread * u), u uniform in [-1, 1]
  std::uint64_t seed = 0;  // picks u per device (splitmix64 of seed and device id)
  struct Hot {
    int device = -1;      // a global device id, or
    int local_rank = -1;  // this device of every node
    double resistance_scale = 1;
  };
  std::vector<Hot> hot;
  /// Nodes whose inlet air or coolant differs from the cluster's (a rack by a hot aisle).
  struct NodeInlet {
    int node = 0;
    double inlet_c = 25;
  };
  std::vector<NodeInlet> node_inlets;
  bool any() const { return spread > 0 || !hot.empty() || !node_inlets.empty(); }
  /// The inlet temperature of `node`: its own when listed, else `cluster_inlet_c`.
  double inlet_c(int node, double cluster_inlet_c) const {
    for (const auto& n : node_inlets)
      if (n.node == node) return n.inlet_c;
    return cluster_inlet_c;
  }
  /// The factor on `device`'s thermal resistance (1 when none applies).
  double resistance_scale(int device, int devices_per_node) const;
};

/// Devices that do not run at one speed (cluster.variability; docs/variability.md): each device's
/// kernel times scaled by exp(gpu_speed_spread * z), z standard normal drawn from (seed, device);
/// named slow devices; per-kernel jitter. Every figure is 0 (off) unless the experiment sets it:
/// docs/variability.md gives the published spreads and the recommended value.
struct SpeedVariability {
  double gpu_speed_spread = 0;  // standard deviation of ln(a device's time factor)
  double kernel_jitter = 0;     // standard deviation of ln(one kernel's time factor)
  std::uint64_t seed = 1;       // picks z per device (and per kernel)
  struct Slow {
    int device = -1;      // a global device id, or
    int local_rank = -1;  // this device of every node
    double time_factor = 1;
  };
  std::vector<Slow> slow;
  bool any() const { return gpu_speed_spread > 0 || kernel_jitter > 0 || !slow.empty(); }
};

struct ClusterSpec {
  net::TopologySpec topology;
  hw::DeviceSpec device;
  int nodes = 1;
  /// cluster.power_cap_w; unset = the device's board power.
  std::optional<double> power_cap_w;
  /// cluster.inlet_c; unset = the topology's cooling.inlet_c.
  std::optional<double> inlet_c;
  ThermalVariation thermal;
  SpeedVariability variability;
  double power_cap() const { return power_cap_w ? *power_cap_w : device.board_power.value(); }
  double inlet() const { return inlet_c ? *inlet_c : topology.cooling.inlet_c; }
  int devices() const { return nodes * topology.devices_per_node; }
};

struct WorkloadSpec {
  std::optional<workload::ModelSpec> model;  // a transformer to compile, or
  std::string trace_file;                    // a recorded workload to replay (a file or a directory)
  workload::TraceFormat trace_format = workload::TraceFormat::graph_json;
  bool retime = false;  // time a trace's compute from its FLOPs and bytes on the device (`--retime`)
};

/// What the outer all-reduce of DiLoCo carries per parameter (training.diloco.compression;
/// plan/diloco.hpp gives the bytes and their sources).
enum class OuterCompression : unsigned char { none, fp16, bf16, int8, topk };

/// Low-communication training (training.diloco; docs/low-communication.md): DiLoCo's workers each
/// train on their own for sync_every inner steps, reducing gradients only among their own ranks,
/// then all-reduce the parameter change (the pseudo-gradient) across workers, whole (fragments 1)
/// or, as Streaming DiLoCo, one of `fragments` parts at a time overlapped with an inner step.
struct DilocoSpec {
  int sync_every = 1;   // H: inner steps per outer synchronisation
  int workers = 2;      // K: the data-parallel ranks split into K contiguous workers of dp/K
  OuterCompression compression = OuterCompression::none;
  double topk_fraction = 0;  // with topk: the fraction of the pseudo-gradient's elements sent
  int fragments = 1;         // F: 1 = one blocking sync per H steps; F > 1 = streaming
  /// M: how many times the tokens of synchronous training DiLoCo needs for the same loss, as the
  /// user gives it (not modelled: inflect times steps, it does not predict loss).
  double token_multiplier = 1;
  bool token_multiplier_given = false;
};

struct TrainingSpec {
  std::int64_t seq_len = 0;
  std::int64_t global_batch = 0;  // sequences per step
  std::int64_t micro_batch = 1;   // sequences per micro-batch per data-parallel rank
  core::Precision precision = core::Precision::bf16;
  /// With precision fp8: what runs in FP8 beyond the linear layers (training.fp8).
  workload::Fp8Recipe fp8;
  /// training.framework: whose defaults the framework-governed keys take (plan/framework.hpp).
  Framework framework = Framework::none;
  /// training.optimizer: bytes per parameter of the optimizer's state and the main gradients.
  workload::OptimizerState optimizer;
  /// Consecutive steps simulated for the thermal state (training.steps).
  int steps = 1;
  /// The attention implementation asked for (training.attention), as written: "default" = the
  /// device's default fused kernel, "unfused" = Megatron-LM's separate kernels (workload layer),
  /// anything else a named implementation, whose curves the loader selects into cluster.device
  /// (hw::DeviceSpec::with_attention); the device's `attention` then names the one in effect.
  std::string attention = "default";
  /// training.diloco: DiLoCo-style training instead of a synchronous step (none: synchronous).
  std::optional<DilocoSpec> diloco;
};

/// How context parallelism exchanges K and V (ParallelPlan::cp_comm).
enum class CpComm : unsigned char { p2p, all_gather };

/// What selective recompute re-runs (ParallelPlan::selective_recompute).
enum class SelectiveRecompute : unsigned char { attention, every_other_matmul };

/// Pipeline schedules (plan/schedule.hpp describes each).
enum class Schedule : unsigned char { one_f_one_b, gpipe, interleaved, zero_bubble, dualpipe, dualpipev, custom };
using workload::Recompute;

/// Placement dimensions, innermost first (the default TP, then PP, then DP: TP peers share a node).
enum class Dim : unsigned char { tp, cp, pp, dp };

struct ParallelPlan {
  int tp = 1;
  int pp = 1;
  int dp = 0;  // 0 = derive: devices / (tp * pp * cp)
  int cp = 1;
  /// Expert parallelism, folded inside data parallelism as Megatron-Core does: each group of ep
  /// consecutive data-parallel ranks splits the routed experts; must divide dp and the experts.
  int ep = 1;
  bool sequence_parallel = false;
  /// Transformer Engine's TP communication overlap (Megatron's --tp-comm-overlap): each SP
  /// all-gather is pipelined in tp chunks with the GEMM that consumes it, each forward
  /// reduce-scatter with the GEMM that produces it; in backward the input gradient's
  /// reduce-scatter runs beside the weight-gradient GEMM. Needs sequence_parallel.
  bool tp_comm_overlap = false;
  Schedule schedule = Schedule::one_f_one_b;
  int virtual_stages = 1;  // model chunks per pipeline rank for the interleaved schedule
  /// parallel.pipeline_lookahead: forwards every stage but the last runs ahead of 1F1B's warm-up,
  /// so that sends over a slow boundary (a WAN) are in flight while it computes (1f1b only).
  int pipeline_lookahead = 0;
  /// An uneven split of the layers over pipeline ranks (one-chunk schedules); empty = even.
  std::vector<int> layers_per_stage;
  /// schedule = custom: the steps of each pipeline rank in order, as the user wrote them
  /// (`parallel.custom_schedule`; plan/schedule.hpp parses and checks them). One chunk per rank.
  std::vector<std::string> custom_schedule;
  /// Sharded data parallelism: 0 = plain DP (all-reduce of gradients); 1 = optimizer states
  /// sharded (Megatron's distributed optimizer: reduce-scatter gradients, all-gather parameters
  /// after the step); 2 = gradients sharded too (reduce-scatter every micro-batch, DeepSpeed);
  /// 3 = parameters sharded too (all-gathered per layer before use, one layer ahead; FSDP).
  int zero = 0;
  /// FSDP spelled as torch does (zero = 3); reshard_after_forward = false keeps the gathered
  /// parameters from forward to backward (FSDP's SHARD_GRAD_OP: no second gather).
  bool fsdp = false;
  bool reshard_after_forward = true;
  /// Hybrid sharding: shard within groups of this many data-parallel ranks and replicate across
  /// them (an all-reduce of the sharded gradients between replicas); 0 = shard over all of dp*cp.
  int shard_group = 0;
  Recompute recompute = Recompute::none;
  std::vector<Dim> order = {Dim::tp, Dim::cp, Dim::pp, Dim::dp};
  /// Gradient bucket size for DP reduction overlapped with backward (Megatron's default is 40M
  /// parameters = 80 MB in bf16 grads); 0 = one bucket per pipeline stage at the end.
  core::Bytes grad_bucket_bytes = core::Bytes(80e6);
  bool overlap_grad_reduce = true;
  /// Run the shared experts while the routed tokens are dispatched (and their backward while the
  /// combine gradient returns), as Megatron-Core's moe_shared_expert_overlap; off by default there.
  bool moe_shared_expert_overlap = false;
  /// Megatron-LM's scatter/gather optimisation of pipeline sends (on by default there, 2021-22):
  /// without sequence parallelism each TP rank sends 1/tp of the activation and the receivers
  /// all-gather it over the node's fabric.
  bool pp_scatter_gather = false;
  /// Megatron-Core's --overlap-param-gather: with ZeRO 1/2 the parameter all-gather after the
  /// optimizer runs per layer under the next step's first forward, each layer waiting for its own.
  bool overlap_param_gather = false;
  /// What selective recompute re-runs: Megatron's attention core, or torchtitan's op-level policy
  /// (every other matmul of the layer and its element-wise kernels; the attention kernel saved).
  SelectiveRecompute selective_recompute = SelectiveRecompute::attention;
  /// Count the embedding and the output head as one layer each when splitting layers over the
  /// pipeline stages (Megatron-DeepSpeed's PipelineModule partitioned by 'type:transformer|embedding').
  bool embedding_in_pipeline_split = false;
  /// How CP ranks exchange K and V: a ring of point-to-point sends, each overlapping one block of
  /// the attention (Megatron-Core / Transformer Engine's default cp_comm_type p2p), or one
  /// all-gather before the attention and a reduce-scatter of their gradients after its backward,
  /// on the critical path (Llama 3's CP, section 3.3.2; torchtitan's allgather rotation).
  CpComm cp_comm = CpComm::p2p;
};

struct Experiment {
  std::string name;
  std::string file;  // the YAML it came from, for messages
  ClusterSpec cluster;
  WorkloadSpec workload;
  TrainingSpec training;
  ParallelPlan parallel;
};

}  // namespace inflect::plan
