#pragma once
// What a Kineto GPU activity becomes (kineto_ops.cpp): a short kernel name, a collective from the
// metadata PyTorch records on NCCL kernels, a GEMM's cost from its launching op's shapes. Private
// to the workload layer.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inflect/core/kernel_cost.hpp"
#include "inflect/workload/exec_graph.hpp"
#include "inflect/workload/trace_builder.hpp"
#include "workload/kineto_trace.hpp"

namespace inflect::workload::kineto {

/// A kernel's name without its return type, template arguments and parameters:
/// "void at::native::reduce_kernel<512, 1, ...>(...)" -> "at::native::reduce_kernel",
/// "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)" ->
/// "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"; a CUTLASS "cutlass::Kernel<X>(...)" -> "X". Keeps
/// the graph's kernel table small.
std::string short_kernel_name(std::string_view name);

/// An NCCL (or RCCL) device kernel: "ncclKernel_..." (NCCL < 2.19) or "ncclDevKernel_...".
bool is_nccl_kernel(std::string_view short_name);

/// The algorithm and protocol an NCCL kernel's name carries ("RING/LL"), or "" when it names none
/// (ncclDevKernel_SendRecv, NCCL 2.19+'s generic kernels).
std::string nccl_algorithm(std::string_view short_name);

/// A collective call as the graph holds it, with what the import says about it.
struct CollectiveCall {
  Collective collective;           // group registered in the builder
  std::vector<RankId> members;     // the group's ranks
  std::int64_t seq = -1;           // "Seq", -1 when not recorded
  std::string tally;               // summary.communication's key
  std::string dim_note;            // summary.other's key: how the parallel dimension was assigned
};

/// The collective an NCCL kernel `k` of rank `rank` runs, from metadata `m` (the kernel's or its
/// record_param_comms op's). Errors name the event: an unknown collective or dtype, a group that
/// does not hold the rank or reaches past the job, no ranks, a size past the bounds, a gather or
/// scatter (NCCL has none). Broadcast and reduce are rooted at the group's first rank, as
/// CollectiveKind's are: PyTorch records no root.
CollectiveCall collective_call(const Trace& t, const Event& k, const CollectiveMeta& m, RankId rank, int world,
                               TraceGraphBuilder& b);

/// The ParallelDim a process group's description names (Megatron-LM's group_desc
/// "TENSOR_MODEL_PARALLEL_GROUP", ...; DeviceMesh's "mesh_tp", ...), or nullopt.
std::optional<ParallelDim> dim_from_description(std::string_view desc);

/// A GEMM's cost from its op's shapes (aten::mm, addmm, bmm, baddbmm, matmul, linear), or
/// nullopt with `why_not` set. Precision from "Input type", else `fallback`.
std::optional<core::KernelCost> gemm_from_shapes(const Trace& t, const Event& op, core::Precision fallback,
                                                 std::string& why_not);

/// Whether `op_name` is a fused attention entry point whose shapes kineto_trace.cpp keeps.
bool is_attention_op(std::string_view op_name);

/// A fused attention kernel's cost from its op's shapes (aten::_scaled_dot_product_flash_attention
/// and its backward: query [b, h, s_q, d], key [b, h_kv, s_k, d], is_causal from "Concrete
/// Inputs"), or nullopt with `why_not` set.
std::optional<core::KernelCost> attention_from_shapes(const Trace& t, const Event& op, core::Precision fallback,
                                                      std::string& why_not);

}  // namespace inflect::workload::kineto
