#include "workload/kineto_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "inflect/core/error.hpp"
#include "inflect/workload/layer_costs.hpp"
#include "workload/graph_bounds.hpp"
#include "workload/torch_types.hpp"

namespace inflect::workload::kineto {
namespace {

[[noreturn]] void fail(const Trace& t, const Event& e, const std::string& what) {
  throw core::Error(core::ErrorKind::input, fmt::format("{}: {}", t.where(e), what));
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

using bounds::kMaxKernelFlops;  // graph_bounds.hpp

}  // namespace

std::string short_kernel_name(std::string_view n) {
  if (n.rfind("void ", 0) == 0) n.remove_prefix(5);
  std::size_t end = n.size();
  for (std::size_t i = 0; i < n.size(); ++i)
    if (n[i] == '<' || n[i] == '(') {
      end = i;
      break;
    }
  std::string_view s = n.substr(0, end);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) s = n.substr(0, std::min<std::size_t>(n.size(), 64));
  // CUTLASS's generic entry points (cutlass::Kernel, cutlass::Kernel2, cutlass_cudnn_infer::Kernel)
  // carry the kernel in their first template argument: "cutlass_80_tensorop_s1688gemm_256x64_...".
  if (end < n.size() && n[end] == '<' && (s.ends_with("::Kernel") || s.ends_with("::Kernel2"))) {
    std::string_view arg = n.substr(end + 1);
    const std::size_t stop = arg.find_first_of("<>,( ");
    arg = arg.substr(0, stop);
    if (!arg.empty()) s = arg;
  }
  return std::string(s.substr(0, 200));
}

bool is_nccl_kernel(std::string_view s) { return s.rfind("ncclKernel_", 0) == 0 || s.rfind("ncclDevKernel_", 0) == 0; }

std::string nccl_algorithm(std::string_view s) {
  // Tokens of the name: ncclDevKernel_AllReduce_Sum_bf16_RING_LL, ncclKernel_AllReduce_RING_LL_Sum_float
  // (NCCL src/device/generate.py and the older src/collectives/device/common.h name them so).
  static const std::string_view kAlgos[] = {"RING", "TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS_TREE", "NVLS", "PAT"};
  static const std::string_view kProtos[] = {"LL128", "LL", "SIMPLE"};
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find('_', i), s.size());
    tokens.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  std::string algo, proto;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    for (auto a : kAlgos) {
      // COLLNET_DIRECT and NVLS_TREE span two tokens
      const auto under = a.find('_');
      if (under == std::string_view::npos ? tokens[k] == a
                                          : (k + 1 < tokens.size() && tokens[k] == a.substr(0, under) &&
                                             tokens[k + 1] == a.substr(under + 1))) {
        if (algo.empty()) algo = std::string(a);
        break;
      }
    }
    for (auto p : kProtos)
      if (tokens[k] == p && proto.empty()) proto = std::string(p);
  }
  if (algo.empty() && proto.empty()) return {};
  return algo + "/" + proto;
}

std::optional<ParallelDim> dim_from_description(std::string_view desc) {
  const std::string d = lower(desc);
  // Megatron-LM's parallel_state names (group_desc=...), checked most specific first: the expert
  // model-parallel group is ep, the expert data-parallel group dp; DeviceMesh names its groups
  // "mesh_<dim name>".
  if (has(d, "expert_model_parallel") || d == "mesh_ep") return ParallelDim::ep;
  if (has(d, "tensor_model_parallel") || has(d, "tensor_and") || d == "mesh_tp") return ParallelDim::tp;
  if (has(d, "pipeline_model_parallel") || d == "mesh_pp") return ParallelDim::pp;
  if (d.rfind("context_parallel", 0) == 0 || d == "mesh_cp") return ParallelDim::cp;
  if (has(d, "data_parallel") || d == "mesh_dp" || d == "mesh_dp_shard" || d == "mesh_dp_replicate") return ParallelDim::dp;
  return std::nullopt;
}

CollectiveCall collective_call(const Trace& t, const Event& k, const CollectiveMeta& m, RankId rank, int world,
                               TraceGraphBuilder& b) {
  CollectiveCall call;
  Collective& c = call.collective;
  const std::string name = lower(m.collective);
  // PyTorch's record_param_comms names (ProcessGroupNCCL.cpp): allreduce, allreduce_coalesced,
  // all_gather, _allgather_base, all_gather_into_tensor_coalesced, reduce_scatter,
  // _reduce_scatter_base, reduce_scatter_tensor_coalesced, alltoall, alltoall_base, send, recv,
  // broadcast, _broadcast_oop, reduce, _reduce_oop, gather, scatter, barrier (an all-reduce of
  // one element).
  bool p2p = false;
  if (has(name, "allreduce") || has(name, "all_reduce") || name == "barrier") c.kind = CollectiveKind::all_reduce;
  else if (has(name, "allgather") || has(name, "all_gather")) c.kind = CollectiveKind::all_gather;
  else if (has(name, "reduce_scatter") || has(name, "reducescatter")) c.kind = CollectiveKind::reduce_scatter;
  else if (has(name, "alltoall") || has(name, "all_to_all")) c.kind = CollectiveKind::all_to_all;
  else if (name == "send" || name == "recv") c.kind = CollectiveKind::send_recv, p2p = true;
  else if (has(name, "broadcast")) c.kind = CollectiveKind::broadcast;
  else if (name == "reduce" || name == "_reduce_oop") c.kind = CollectiveKind::reduce;
  else if (has(name, "gather") || has(name, "scatter"))
    fail(t, k, fmt::format("collective '{}' is not one inflect models (NCCL has no gather or scatter: PyTorch runs them as "
                           "sends and receives)",
                           m.collective));
  else
    fail(t, k, m.collective.empty() ? std::string("an NCCL kernel whose metadata has no 'Collective name'")
                                    : fmt::format("unknown collective '{}'", m.collective));
  const auto elem = dtype_bytes(m.dtype);
  if (!elem) fail(t, k, fmt::format("collective of unknown dtype '{}' (c10 ScalarType names: Float, BFloat16, Half, ...)", m.dtype));
  // The process group's global ranks: the list, or start + i * stride when PyTorch truncated it.
  std::vector<std::int64_t> ranks;
  if (!m.ranks_truncated && !m.group_ranks.empty()) {
    ranks = m.group_ranks;
  } else if (m.rank_start >= 0 && m.rank_stride >= 1 && m.group_size >= 1) {
    if (m.group_size > world) fail(t, k, fmt::format("'Group size' {} is past the job's {} ranks (world_size)", m.group_size, world));
    for (std::int64_t i = 0; i < m.group_size; ++i) ranks.push_back(m.rank_start + i * m.rank_stride);
  } else if (auto pg = std::find_if(t.groups.begin(), t.groups.end(),
                                    [&](const ProcessGroupConfig& g) { return !m.pg_name.empty() && g.name == m.pg_name; });
             pg != t.groups.end() && !pg->ranks.empty()) {
    ranks = pg->ranks;  // distributedInfo.pg_config lists the group's ranks in full
  } else {
    fail(t, k, "collective without its process group's ranks ('Process Group Ranks', or 'Global rank start', "
               "'Global rank stride' and 'Group size', or its 'Process Group Name' in distributedInfo.pg_config)");
  }
  if (m.group_size >= 1 && static_cast<std::size_t>(m.group_size) != ranks.size())
    fail(t, k, fmt::format("'Process Group Ranks' lists {} ranks but 'Group size' is {}", ranks.size(), m.group_size));
  std::vector<RankId> group;
  for (std::int64_t g : ranks) {
    if (g >= world) fail(t, k, fmt::format("process group holds rank {}, past the job's {} ranks (world_size)", g, world));
    group.push_back(static_cast<RankId>(g));
  }
  {
    auto sorted = group;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) fail(t, k, "process group lists a rank twice");
  }
  const auto in = static_cast<double>(m.in_nelems), out = static_cast<double>(m.out_nelems);
  double elems = 0;
  if (p2p) {
    // The peer, a rank of the group (PyTorch's send(dst)/recv(src) take group ranks).
    const bool send = name == "send";
    const std::int64_t peer = send ? m.dst : m.src;
    if (peer < 0) fail(t, k, fmt::format("{} without its peer ('{}')", m.collective, send ? "Dst Rank" : "Src Rank"));
    if (static_cast<std::size_t>(peer) >= group.size())
      fail(t, k, fmt::format("{} to group rank {} of a group of {}", m.collective, peer, group.size()));
    const RankId p = group[static_cast<std::size_t>(peer)];
    if (p == rank) fail(t, k, fmt::format("{} with itself (rank {})", m.collective, rank));
    call.members = send ? std::vector<RankId>{rank, p} : std::vector<RankId>{p, rank};
    elems = send ? (m.in_nelems >= 0 ? in : out) : (m.out_nelems >= 0 ? out : in);
  } else {
    if (std::find(group.begin(), group.end(), rank) == group.end())
      fail(t, k, fmt::format("collective on process group [{}], which does not hold this rank ({})", fmt::join(group, ", "), rank));
    call.members = group;
    // nccl-tests' sizes (exec_graph.hpp): all_gather the whole gathered buffer, the others the
    // buffer each rank sends (broadcast and reduce: the buffer).
    elems = c.kind == CollectiveKind::all_gather ? out : in;
  }
  if (elems < 0) fail(t, k, fmt::format("collective without '{}'", c.kind == CollectiveKind::all_gather ? "Out msg nelems" : "In msg nelems"));
  const double bytes = elems * *elem;
  if (bytes > kMaxBytes) fail(t, k, fmt::format("a message of {:g} bytes, past the bound of {:g} (1 PB)", bytes, kMaxBytes));
  c.bytes = core::Bytes(bytes);
  c.group = b.group(call.members);
  c.name = t.short_name(k);
  call.seq = m.seq;
  const auto dim = dim_from_description(m.pg_desc);
  c.dim = dim.value_or(ParallelDim::dp);
  call.dim_note = dim ? fmt::format("collectives' dimension {}: from the process group description '{}'", to_string(*dim), m.pg_desc)
                      : fmt::format("collectives' dimension dp: by default (the process group description '{}' names none)",
                                    m.pg_desc);
  const std::string algo = nccl_algorithm(c.name);
  call.tally = algo.empty() ? std::string(to_string(c.kind))
                            : fmt::format("{} (NCCL ran {}; the fabric model picks its own algorithm)", to_string(c.kind), algo);
  return call;
}

std::optional<core::KernelCost> gemm_from_shapes(const Trace& t, const Event& op, core::Precision fallback,
                                                 std::string& why_not) {
  const OpShapes& s = t.shapes[op.shapes];
  const std::string& n = t.name(op);
  auto dims = [&](std::size_t i) -> const std::vector<std::int64_t>& {
    static const std::vector<std::int64_t> kNoDims;
    return i < s.dims.size() ? s.dims[i] : kNoDims;
  };
  auto product = [](const std::vector<std::int64_t>& v, std::size_t count) {
    double p = 1;
    for (std::size_t i = 0; i < count; ++i) p *= static_cast<double>(v[i]);
    return p;
  };
  double m = 0, nn = 0, k = 0, batch = 1, k2 = -1;
  std::size_t a = 0;
  if (n == "aten::mm" || n == "aten::addmm") {
    a = n == "aten::mm" ? 0 : 1;
    const auto &A = dims(a), &B = dims(a + 1);
    if (A.size() != 2 || B.size() != 2) return why_not = "recorded: the GEMM op's Input Dims are not two matrices", std::nullopt;
    m = static_cast<double>(A[0]), k = static_cast<double>(A[1]), k2 = static_cast<double>(B[0]), nn = static_cast<double>(B[1]);
  } else if (n == "aten::bmm" || n == "aten::baddbmm") {
    a = n == "aten::bmm" ? 0 : 1;
    const auto &A = dims(a), &B = dims(a + 1);
    if (A.size() != 3 || B.size() != 3 || A[0] != B[0])
      return why_not = "recorded: the batched GEMM op's Input Dims are not two batches of matrices", std::nullopt;
    batch = static_cast<double>(A[0]), m = static_cast<double>(A[1]), k = static_cast<double>(A[2]);
    k2 = static_cast<double>(B[1]), nn = static_cast<double>(B[2]);
  } else if (n == "aten::matmul" || n == "aten::linear") {
    // matmul(A[..., m, k], B[k, n]); linear(A[..., k], W[n, k]): the leading dims fold into m.
    const auto &A = dims(0), &B = dims(1);
    if (A.empty() || B.size() != 2) return why_not = "recorded: the op's Input Dims are not a GEMM with a 2-D weight", std::nullopt;
    m = product(A, A.size() - 1), k = static_cast<double>(A.back());
    if (n == "aten::linear") k2 = static_cast<double>(B[1]), nn = static_cast<double>(B[0]);
    else k2 = static_cast<double>(B[0]), nn = static_cast<double>(B[1]);
  } else {
    return why_not = "recorded: not a GEMM op", std::nullopt;
  }
  if (k != k2) return why_not = "recorded: the GEMM op's Input Dims do not agree on k", std::nullopt;
  if (m <= 0 || nn <= 0 || k <= 0) return why_not = "recorded: an empty GEMM", std::nullopt;
  core::Precision p = fallback;
  if (a < s.types.size() && !s.types[a].empty()) {
    const std::string& ty = s.types[a];
    const auto known = precision_of_torch_type(ty);
    if (!known) return why_not = fmt::format("recorded: a GEMM of type '{}', which the device model does not time", ty), std::nullopt;
    p = *known;
  }
  if (2 * m * nn * k * batch > kMaxKernelFlops)
    fail(t, op, fmt::format("a GEMM of {:g} FLOPs (m={:g} n={:g} k={:g} batch={:g}), past the bound of {:g} (40x a Llama 3 405B "
                            "step's FLOPs per GPU)",
                            2 * m * nn * k * batch, m, nn, k, batch, kMaxKernelFlops));
  core::KernelCost c = core::gemm_cost(m, nn, k, p);
  c.batch = static_cast<std::int64_t>(batch);
  c.flops = core::Flops(c.flops.value() * batch);
  c.bytes = core::Bytes(c.bytes.value() * batch);
  return c;
}

bool is_attention_op(std::string_view n) { return n.rfind("aten::_scaled_dot_product_", 0) == 0; }

std::optional<core::KernelCost> attention_from_shapes(const Trace& t, const Event& op, core::Precision fallback,
                                                      std::string& why_not) {
  const OpShapes& s = t.shapes[op.shapes];
  const std::string& n = t.name(op);
  // Argument positions of the schemas (aten/src/ATen/native/native_functions.yaml):
  // _scaled_dot_product_flash_attention(query, key, value, dropout_p, is_causal, ...);
  // _scaled_dot_product_flash_attention_backward(grad_out, query, key, value, out, logsumexp,
  //   cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...).
  std::size_t q = 0, causal = 0;
  bool backward = false;
  if (n == "aten::_scaled_dot_product_flash_attention") q = 0, causal = 4;
  else if (n == "aten::_scaled_dot_product_flash_attention_backward") q = 1, causal = 11, backward = true;
  else return why_not = "recorded: an attention op other than flash (efficient, cuDNN) is not re-timed yet", std::nullopt;
  if (q + 1 >= s.dims.size() || s.dims[q].size() != 4 || s.dims[q + 1].size() != 4)
    return why_not = "recorded: the attention op's Input Dims are not [batch, heads, sequence, head dim] tensors", std::nullopt;
  if (causal >= s.concrete.size() || (s.concrete[causal] != "True" && s.concrete[causal] != "False"))
    return why_not = "recorded: the attention op's is_causal is not in its Concrete Inputs", std::nullopt;
  const auto &Q = s.dims[q], &K = s.dims[q + 1];
  if (Q[0] != K[0] || Q[3] != K[3] || K[1] == 0 || Q[1] % K[1] != 0)
    return why_not = "recorded: the attention op's query and key shapes do not agree", std::nullopt;
  core::Precision p = fallback;
  if (q < s.types.size() && !s.types[q].empty()) {
    const auto known = precision_of_torch_type(s.types[q]);
    if (!known)
      return why_not = fmt::format("recorded: attention of type '{}', which the device model does not time", s.types[q]), std::nullopt;
    p = *known;
  }
  const double b = static_cast<double>(Q[0]), h = static_cast<double>(Q[1]), sq = static_cast<double>(Q[2]);
  const double hk = static_cast<double>(K[1]), sk = static_cast<double>(K[2]), d = static_cast<double>(Q[3]);
  // The transformer layer's flash attention cost (layer_costs.hpp), on the op's own shapes.
  const FlashAttentionShape shape{b, sq, sk, h * d, hk * d, s.concrete[causal] == "True"};
  const core::KernelCost c = flash_attention_cost(shape, p, core::bytes_per_element(p), backward);
  const double flops = c.flops.value(), bytes = c.bytes.value();
  if (flops > kMaxKernelFlops || bytes > kMaxBytes)
    fail(t, op, fmt::format("attention of {:g} FLOPs and {:g} bytes, past the bounds ({:g} FLOPs, {:g} bytes)", flops, bytes,
                            kMaxKernelFlops, kMaxBytes));
  return c;
}

}  // namespace inflect::workload::kineto
