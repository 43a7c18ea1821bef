// Chakra execution traces into the execution graph (docs/traces.md, "Chakra").
//
// Each rank file's nodes become that rank's ops:
//   COMP_NODE        a kernel on the "compute" stream (a CPU op, is_cpu_op, on "host"): its recorded
//                    duration_micros, or with --retime its num_ops and tensor_size timed by the device
//                    model; a node inflect exported carries its kernel exactly (inflect_kernel) and is
//                    always timed by the model.
//   MEM_LOAD/STORE   tensor_size bytes on the "memory" stream, recorded (re-timed as HBM traffic).
//   COMM_COLL_NODE   a collective of comm_type on the process group pg_name (all ranks when none;
//                    BROADCAST and REDUCE rooted at its first rank: Chakra names no root),
//                    simulated on the fabric; comm_size is Chakra's (the converter's and ASTRA-sim's)
//                    per-rank input, so an all-gather's whole buffer is comm_size x group size.
//   COMM_SEND/RECV   a send_recv on the pair (comm_src -> comm_dst), on "send" / "recv" streams.
//   METADATA_NODE    `## process_group:init ##` gives the process groups; any metadata node and
//   INVALID_NODE     do no work: a dependency on one passes through to its own dependencies.
// data_deps are the execution order (what chakra_converter writes it to, and all Chakra's feeder
// reads): an op waits for them, and one on a node absent from the file is an error. ctrl_deps are
// the calling op in a converted trace (a CPU op can even list the kernel it launched) and the
// stream's previous op in inflect's export: read, checked and counted, not waited for.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "inflect/core/error.hpp"
#include "inflect/workload/graph_json.hpp"
#include "inflect/workload/trace_builder.hpp"
#include "workload/chakra_files.hpp"
#include "workload/chakra_nodes.hpp"
#include "workload/graph_bounds.hpp"
#include "workload/importers.hpp"
#include "workload/torch_types.hpp"

namespace inflect::workload {
namespace {

namespace fs = std::filesystem;
using chakra::Node;
using chakra::RankFile;

[[noreturn]] void fail(const std::string& message) { throw core::Error(core::ErrorKind::input, message); }

// The process groups of `## process_group:init ##`: its input value is the Python repr of a list
// holding one string, the JSON of torch.distributed's pg_config_info ("['[{\"pg_name\": \"0\", ...}]']"),
// as ASTRA-sim's Workload::issue_pytorch_pg_metadata reads it.
struct ProcessGroup {
  std::vector<RankId> ranks;  // empty = every rank
  std::vector<std::vector<RankId>> mirrors;
};

// In the node's order (inflect's export numbers its groups in it).
std::vector<std::pair<std::string, ProcessGroup>> read_process_groups(const Node& n, const std::string& file) {
  std::string v = n.input_values;
  const auto first = v.find_first_not_of(" \t\n");
  if (first != std::string::npos && v[first] == '[') {
    const auto q = v.find_first_not_of(" \t\n", first + 1);
    const auto last = v.find_last_not_of(" \t\n");
    if (q != std::string::npos && (v[q] == '\'' || v[q] == '"') && last > q + 1 && v[last] == ']') {
      const auto endq = v.find_last_not_of(" \t\n", last - 1);
      if (endq != std::string::npos && v[endq] == v[q]) v = v.substr(q + 1, endq - q - 1);
    }
  }
  std::vector<std::pair<std::string, ProcessGroup>> out;
  try {
    const nlohmann::json j = nlohmann::json::parse(v);
    auto add = [&](const nlohmann::json& g) {
      ProcessGroup pg;
      for (const auto& r : g.at("ranks")) pg.ranks.push_back(r.get<RankId>());
      if (g.contains("mirrors"))
        for (const auto& m : g.at("mirrors")) pg.mirrors.push_back(m.get<std::vector<RankId>>());
      const auto& name = g.at("pg_name");
      out.emplace_back(name.is_string() ? name.get<std::string>() : name.dump(), std::move(pg));
    };
    if (j.is_array())
      for (const auto& g : j) add(g);
    else if (j.is_object())
      for (const auto& [k, g] : j.items()) add(g);
    else
      throw std::runtime_error("expected a list of process groups");
  } catch (const std::exception& e) {
    fail(fmt::format("{}: node id {} '{}': cannot read its process groups (torch.distributed pg_config_info JSON with "
                     "pg_name and ranks): {}",
                     file, n.id, n.name, e.what()));
  }
  return out;
}

// What `after` counted beyond `before` (same order).
NodeTally difference(const NodeTally& after, const NodeTally& before) {
  NodeTally d;
  for (const auto& [what, n] : after.counts) {
    std::int64_t had = 0;
    for (const auto& [w, m] : before.counts)
      if (w == what) had = m;
    if (n > had) d.add(what, n - had);
  }
  return d;
}

bool is_no_op(const Node& n) { return n.type == chakra::metadata_node || n.type == chakra::invalid_node; }

const char* comm_type_name(std::int64_t t) {
  static const char* const names[] = {"ALL_REDUCE", "REDUCE",     "ALL_GATHER",     "GATHER",
                                      "SCATTER",    "BROADCAST",  "ALL_TO_ALL",     "REDUCE_SCATTER",
                                      "REDUCE_SCATTER_BLOCK", "BARRIER"};
  return t >= 0 && t < 10 ? names[t] : "unknown";
}

bool name_has(const std::string& name, std::initializer_list<const char*> parts) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* p : parts)
    if (lower.find(p) != std::string::npos) return true;
  return false;
}

// A compute node's precision from its input types (the converter writes PyTorch's, e.g.
// "['Tensor(c10::BFloat16)', ...]"): the narrowest of its tensors' types, fp8 before bf16 before
// fp16 before fp32 (an fp8 GEMM's scales and bias are wider than its operands), or nullopt.
std::optional<core::Precision> precision_of(const std::string& types) {
  static constexpr core::Precision kNarrowFirst[] = {core::Precision::fp8, core::Precision::bf16, core::Precision::fp16,
                                                     core::Precision::fp32};
  std::size_t best = std::size(kNarrowFirst);
  const std::string_view all(types);
  for (std::size_t at = all.find("Tensor("); at != std::string_view::npos; at = all.find("Tensor(", at + 1)) {
    const std::size_t begin = at + 7, end = all.find(')', begin);
    if (end == std::string_view::npos) break;
    const auto p = precision_of_torch_type(all.substr(begin, end - begin));
    if (!p) continue;
    const auto rank = std::find(std::begin(kNarrowFirst), std::end(kNarrowFirst), *p) - std::begin(kNarrowFirst);
    best = std::min(best, static_cast<std::size_t>(rank));
  }
  if (best == std::size(kNarrowFirst)) return std::nullopt;
  return kNarrowFirst[best];
}

// A GPU kernel's GEMM from the op that called it (its control parent in a converted trace: the
// CPU op whose input shapes the execution trace records), or nullopt. Shapes as PyTorch's ET
// writes them, "[[m, k], [k, n]]": aten::mm A[m,k] B[k,n]; addmm and baddbmm a bias first;
// bmm [b,m,k] [b,k,n]; matmul's leading dims of A are a batch (folded into m when B is 2-D);
// linear x[..., k] W[n, k]. Precision from the first input's type.
std::optional<core::KernelCost> gemm_of_caller(const Node& caller, core::Precision fallback) {
  const std::string op = caller.name.substr(0, caller.name.find('('));
  static const char* const gemms[] = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear"};
  if (std::find_if(std::begin(gemms), std::end(gemms), [&](const char* g) { return op == g; }) == std::end(gemms)) return std::nullopt;
  std::vector<std::vector<std::int64_t>> shapes;
  try {
    const auto j = nlohmann::json::parse(caller.input_shapes);
    for (const auto& e : j) {
      std::vector<std::int64_t> dims;
      if (e.is_array())
        for (const auto& d : e)
          if (d.is_number_integer()) dims.push_back(d.get<std::int64_t>());
      shapes.push_back(std::move(dims));
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const bool bias_first = op == "aten::addmm" || op == "aten::baddbmm";
  const std::size_t a_at = bias_first ? 1 : 0;
  if (shapes.size() < a_at + 2) return std::nullopt;
  const auto& a = shapes[a_at];
  const auto& b = shapes[a_at + 1];
  std::int64_t batch = 1, m = 0, k = 0, n = 0;
  if (op == "aten::linear") {
    if (a.empty() || b.size() != 2) return std::nullopt;
    k = a.back();
    m = 1;
    for (std::size_t i = 0; i + 1 < a.size(); ++i) m *= a[i];
    n = b[0];
    if (b[1] != k) return std::nullopt;
  } else {
    if (a.size() < 2 || b.size() < 2) return std::nullopt;
    m = a[a.size() - 2];
    k = a.back();
    n = b.back();
    if (b[b.size() - 2] != k) return std::nullopt;
    for (std::size_t i = 0; i + 2 < a.size(); ++i) batch *= a[i];
    if (b.size() == 2) {  // a 2-D B: the batch is more rows of A
      m *= batch;
      batch = 1;
    }
  }
  constexpr std::int64_t kMaxDim = 1LL << 31;
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0 || m > kMaxDim || n > kMaxDim || k > kMaxDim || batch > kMaxDim) return std::nullopt;
  core::KernelCost c = core::gemm_cost(static_cast<double>(m), static_cast<double>(n), static_cast<double>(k),
                                       precision_of(caller.input_types).value_or(fallback));
  c.batch = batch;
  c.flops = core::Flops(c.flops.value() * static_cast<double>(batch));
  c.bytes = core::Bytes(c.bytes.value() * static_cast<double>(batch));
  if (c.flops.value() > bounds::kMaxKernelFlops) return std::nullopt;
  return c;
}

using bounds::kMaxBytes;  // graph_bounds.hpp, as every reader
constexpr std::uint64_t kMaxDurationUs = bounds::kMaxRecordedSeconds * 1'000'000ULL;  // a day

struct Context {
  const TraceImportOptions& options;
  TraceImportSummary& summary;
  TraceGraphBuilder& builder;
  const std::map<std::string, GroupId>& groups;  // pg_name -> group, as the files define them
  GroupId world = 0;
  int total_ranks = 0;
  // first node an unknown attribute was met on, for the summary
  std::map<std::string, std::pair<std::int64_t, std::string>> unknown_attrs;
};

// One rank's nodes into a RankTrace.
RankTrace rank_trace(const chakra::File& f, RankId rank, Context& cx) {
  const std::size_t n = f.nodes.size();
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (!index.emplace(f.nodes[i].id, static_cast<std::uint32_t>(i)).second)
      fail(fmt::format("{}: node {} ('{}'): id {} is used by an earlier node too", f.path, i, f.nodes[i].name, f.nodes[i].id));
  auto where = [&](std::size_t i) { return fmt::format("{}: node {} (id {}, '{}')", f.path, i, f.nodes[i].id, f.nodes[i].name); };

  // A dependency on a no-op node passes through to that node's own dependencies (memoised).
  std::vector<std::vector<std::uint32_t>> through(n);
  std::vector<char> resolved(n, 0);
  std::function<const std::vector<std::uint32_t>&(std::uint32_t, int)> pass = [&](std::uint32_t i, int depth) -> const std::vector<std::uint32_t>& {
    if (resolved[i] == 1) return through[i];
    if (resolved[i] == 2 || depth > 10000) fail(where(i) + ": its dependencies come back to it through metadata or invalid nodes");
    resolved[i] = 2;
    std::vector<std::uint32_t> out;
    for (const auto* deps : {&f.nodes[i].data_deps})
      for (std::uint64_t d : *deps) {
        auto it = index.find(d);
        if (it == index.end()) continue;
        if (is_no_op(f.nodes[it->second])) {
          const auto& up = pass(it->second, depth + 1);
          out.insert(out.end(), up.begin(), up.end());
        } else {
          out.push_back(it->second);
        }
      }
    through[i] = std::move(out);
    resolved[i] = 1;
    return through[i];
  };

  // Ops get positions in node order, no-op nodes none.
  std::vector<std::uint32_t> position(n, UINT32_MAX);
  std::uint32_t ops = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (!is_no_op(f.nodes[i])) position[i] = ops++;

  RankTrace t;
  t.reserve(ops);
  {
    // an op's label, for errors only: its node (the labeler reads `f`, which outlives add_rank)
    std::vector<std::uint32_t> node_of(ops);
    for (std::size_t i = 0; i < n; ++i)
      if (position[i] != UINT32_MAX) node_of[position[i]] = static_cast<std::uint32_t>(i);
    t.set_labeler([&f, node_of = std::move(node_of)](std::size_t op) {
      const std::size_t i = node_of[op];
      return fmt::format("{}: node {} (id {}, '{}')", f.path, i, f.nodes[i].id, f.nodes[i].name);
    });
  }
  std::vector<std::uint32_t> deps;
  std::map<std::string, int> comm_streams;  // pg -> this rank's k-th ("comm k")
  std::vector<std::int64_t> last_on_stream(256, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& nd = f.nodes[i];
    for (const auto& a : nd.other_attrs) {
      // What chakra_converter and ASTRA-sim's generators add for their own bookkeeping is known and
      // not needed to replay (docs/traces.md); anything else is reported by its first node.
      static const std::set<std::string> bookkeeping = {"rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid",
                                                        "op_schema", "stream", "involved_dim", "comm_priority"};
      if (bookkeeping.count(a)) continue;
      auto [it, fresh] = cx.unknown_attrs.try_emplace(a, 0, fmt::format("node {} (id {}, '{}')", i, nd.id, nd.name));
      ++it->second.first;
    }
    if (nd.type == chakra::metadata_node) {
      cx.summary.other.add(nd.name == "## process_group:init ##" ? "process-group metadata: the groups" : "metadata node: no work");
      continue;
    }
    if (nd.type == chakra::invalid_node) {
      cx.summary.other.add("INVALID_NODE: no work (dependencies pass through)");
      continue;
    }
    if (nd.duration_us > kMaxDurationUs)
      fail(fmt::format("{}: duration_micros {} is out of range (at most a day)", where(i), nd.duration_us));
    TraceOp op;
    const core::Time recorded = core::Time::ps(static_cast<core::Time::rep>(nd.duration_us) * 1'000'000);
    Kernel k;
    k.name = nd.name;
    const bool on_cpu = nd.is_cpu_op.value_or(false);
    std::string stream;
    switch (nd.type) {
      case chakra::comp_node:
      case chakra::mem_load_node:
      case chakra::mem_store_node: {
        const bool memory = nd.type != chakra::comp_node;
        stream = on_cpu ? "host" : memory ? "memory" : "compute";
        if (nd.inflect_kernel) {
          k = kernel_from_json(*nd.inflect_kernel, where(i) + ": inflect_kernel");
          cx.summary.compute.add(k.recorded ? "recorded duration (inflect export)" : "timed by the model (inflect export)");
        } else if (on_cpu) {
          k.recorded = recorded;
          cx.summary.compute.add("recorded: host op (is_cpu_op)");
        } else {
          const double flops = static_cast<double>(nd.num_ops.value_or(0));
          const double bytes = static_cast<double>(nd.tensor_size.value_or(0));
          if (flops < 0 || flops > bounds::kMaxKernelFlops) fail(fmt::format("{}: num_ops {} is out of range [0, 1e20]", where(i), flops));
          if (bytes < 0 || bytes > kMaxBytes) fail(fmt::format("{}: tensor_size {} is out of range [0, 1e15]", where(i), bytes));
          k.cost.flops = core::Flops(memory ? 0 : flops);
          k.cost.bytes = core::Bytes(bytes);
          k.cost.precision = precision_of(nd.input_types).value_or(cx.options.precision);
          k.cost.cls = memory || flops == 0                                           ? core::KernelClass::memory
                       : name_has(nd.name, {"flash", "fmha", "attention", "sdpa"})     ? core::KernelClass::attention
                       : name_has(nd.name, {"gemm", "aten::mm", "aten::bmm", "aten::addmm", "aten::matmul", "aten::linear",
                                            "cutlass", "xmma", "nvjet", "cublas"}) ? core::KernelClass::gemm
                                                                                      : core::KernelClass::memory;
          std::optional<core::KernelCost> from_caller;
          if (cx.options.retime && flops == 0 && bytes == 0 && !memory)
            for (std::uint64_t d : nd.ctrl_deps)
              if (auto it = index.find(d); it != index.end() && (from_caller = gemm_of_caller(f.nodes[it->second], cx.options.precision)))
                break;
          if (cx.options.retime && (flops > 0 || bytes > 0)) {
            cx.summary.compute.add(memory ? "re-timed: tensor_size as HBM traffic (no remote memory tier is modeled)"
                                          : "re-timed from num_ops and tensor_size");
          } else if (from_caller) {
            k.cost = *from_caller;
            cx.summary.compute.add("re-timed: a GEMM from its calling op's input shapes (aten::mm, addmm, bmm, baddbmm, "
                                   "matmul, linear)");
          } else {
            k.recorded = recorded;
            cx.summary.compute.add(!cx.options.retime ? "recorded duration"
                                                      : "recorded: no num_ops or tensor_size, and no GEMM shapes on its "
                                                        "calling op, to re-time");
          }
        }
        op.payload = cx.builder.kernel(k);
        break;
      }
      case chakra::comm_coll_node:
      case chakra::comm_send_node:
      case chakra::comm_recv_node: {
        if (on_cpu) {
          // The host-side call (c10d::broadcast_ and the like); the GPU node is the collective.
          k.recorded = recorded;
          op.payload = cx.builder.kernel(k);
          stream = "host";
          cx.summary.compute.add("recorded: host side of a collective (is_cpu_op)");
          break;
        }
        op.type = OpType::collective;
        Collective c;
        c.name = nd.name;
        if (nd.inflect_collective) {
          c = collective_from_json(*nd.inflect_collective, where(i) + ": inflect_collective", cx.builder.graph().groups().size());
        } else if (nd.type == chakra::comm_coll_node) {
          if (!nd.comm_type) fail(where(i) + ": a COMM_COLL_NODE needs comm_type");
          if (!nd.comm_size) fail(where(i) + ": a COMM_COLL_NODE needs comm_size");
          GroupId g = cx.world;
          if (nd.pg_name) {
            auto it = cx.groups.find(*nd.pg_name);
            if (it == cx.groups.end())
              fail(fmt::format("{}: pg_name '{}' is not a process group of the trace's `## process_group:init ##` node",
                               where(i), *nd.pg_name));
            g = it->second;
          }
          c.group = g;
          const double size = static_cast<double>(*nd.comm_size);
          const auto members = static_cast<double>(cx.builder.graph().groups()[g].members.size());
          switch (*nd.comm_type) {
            case chakra::all_reduce: c.kind = CollectiveKind::all_reduce; c.bytes = core::Bytes(size); break;
            case chakra::all_gather: c.kind = CollectiveKind::all_gather; c.bytes = core::Bytes(size * members); break;
            case chakra::reduce_scatter:
            case chakra::reduce_scatter_block: c.kind = CollectiveKind::reduce_scatter; c.bytes = core::Bytes(size); break;
            case chakra::all_to_all: c.kind = CollectiveKind::all_to_all; c.bytes = core::Bytes(size); break;
            // Rooted at the group's first rank: Chakra records no root (nor does ASTRA-sim use one).
            case chakra::broadcast: c.kind = CollectiveKind::broadcast; c.bytes = core::Bytes(size); break;
            case chakra::reduce: c.kind = CollectiveKind::reduce; c.bytes = core::Bytes(size); break;
            case chakra::barrier:
              // NCCL has no barrier: torch.distributed.barrier is an all-reduce of one element.
              c.kind = CollectiveKind::all_reduce;
              c.bytes = core::Bytes(size);
              break;
            default:
              fail(fmt::format("{}: comm_type {} ({}) is not modeled: inflect's collectives are ALL_REDUCE, REDUCE, "
                               "ALL_GATHER, BROADCAST, REDUCE_SCATTER(_BLOCK), ALL_TO_ALL and BARRIER (NCCL runs GATHER "
                               "and SCATTER as sends and receives)",
                               where(i), *nd.comm_type, comm_type_name(*nd.comm_type)));
          }
          if (size < 0 || c.bytes.value() > kMaxBytes) fail(fmt::format("{}: comm_size {} is out of range", where(i), size));
          cx.summary.communication.add(fmt::format("{}: simulated on the fabric", comm_type_name(*nd.comm_type)));
        } else {
          const bool send = nd.type == chakra::comm_send_node;
          const auto peer = send ? nd.comm_dst : nd.comm_src;
          if (!peer) fail(fmt::format("{}: a {} needs {}", where(i), send ? "COMM_SEND_NODE" : "COMM_RECV_NODE", send ? "comm_dst" : "comm_src"));
          if (*peer < 0 || *peer >= cx.total_ranks || *peer == rank)
            fail(fmt::format("{}: peer rank {} is not another rank of the job's {}", where(i), *peer, cx.total_ranks));
          if (!nd.comm_size) fail(where(i) + ": a send or receive needs comm_size");
          const auto p = static_cast<RankId>(*peer);
          c.kind = CollectiveKind::send_recv;
          c.group = cx.builder.group(send ? std::vector<RankId>{rank, p} : std::vector<RankId>{p, rank});
          c.bytes = core::Bytes(static_cast<double>(*nd.comm_size));
          if (c.bytes.value() < 0 || c.bytes.value() > kMaxBytes) fail(fmt::format("{}: comm_size is out of range", where(i)));
          cx.summary.communication.add("send/recv: simulated on the fabric");
        }
        if (nd.inflect_collective) cx.summary.communication.add(fmt::format("{} (inflect export): simulated on the fabric", to_string(c.kind)));
        else c.dim = ParallelDim::dp;
        op.payload = cx.builder.collective(c);
        if (nd.type == chakra::comm_send_node) stream = "send";
        else if (nd.type == chakra::comm_recv_node) stream = "recv";
        else {
          // One stream per process group, as PyTorch gives each NCCL communicator its own.
          const std::string key = nd.pg_name.value_or("");
          auto [it, fresh] = comm_streams.try_emplace(key, static_cast<int>(comm_streams.size()));
          stream = fmt::format("comm {}", it->second);
        }
        break;
      }
      default:
        fail(fmt::format("{}: node type {} is not a Chakra node type inflect knows (0-7 of et_def.proto; the storage "
                         "nodes of mlcommons/chakra#216 are not modeled)",
                         where(i), nd.type));
    }
    if (nd.inflect_stream) stream = *nd.inflect_stream;
    op.stream = cx.builder.stream(stream, where(i));
    if (nd.inflect_phase) {
      if (*nd.inflect_phase < 0 || *nd.inflect_phase > 3) fail(where(i) + ": inflect_phase must be 0-3");
      op.phase = static_cast<Phase>(*nd.inflect_phase);
    }
    if (nd.inflect_layer) {
      if (*nd.inflect_layer < -1 || *nd.inflect_layer > 32767) fail(where(i) + ": inflect_layer must be -1..32767");
      op.layer = static_cast<std::int16_t>(*nd.inflect_layer);
    }
    if (nd.inflect_micro_batch) {
      if (*nd.inflect_micro_batch < 0 || *nd.inflect_micro_batch > 65535) fail(where(i) + ": inflect_micro_batch must be 0-65535");
      op.micro_batch = static_cast<std::uint16_t>(*nd.inflect_micro_batch);
    }
    deps.clear();
    auto add_dep = [&](std::uint32_t j) {
      if (std::find(deps.begin(), deps.end(), position[j]) == deps.end()) deps.push_back(position[j]);
    };
    for (std::uint64_t d : nd.data_deps) {
      auto it = index.find(d);
      if (it == index.end()) fail(fmt::format("{}: data dependency on node id {}, which is not in the file", where(i), d));
      if (is_no_op(f.nodes[it->second]))
        for (std::uint32_t j : pass(it->second, 0)) add_dep(j);
      else
        add_dep(it->second);
    }
    // Control dependencies: in a converted trace the caller of the op (chakra_converter's own
    // docstring: "data dependency ... represent[s] the actual execution order"; Chakra's feeder
    // reads data_deps only), which can even point from a CPU op to the kernel it launched; in
    // inflect's export the stream's previous op, which the stream orders anyway. Neither is a
    // wait: counted, checked for a target, and left to the streams.
    for (std::uint64_t d : nd.ctrl_deps) {
      if (nd.inflect_stream) {
        auto it = index.find(d);
        if (it == index.end() || static_cast<std::int64_t>(position[it->second]) != last_on_stream[op.stream])
          fail(fmt::format("{}: inflect_stream's control dependency must be the stream's previous op; node id {} is not",
                           where(i), d));
        continue;
      }
      cx.summary.other.add(index.count(d) ? "control dependency (the calling op): not an execution order, not waited for"
                                          : "control dependency on a node not in the file (the converter drops the root "
                                            "and span nodes): not waited for");
    }
    last_on_stream[op.stream] = position[i];
    t.add(op, deps);
  }
  return t;
}

// `inflect_graph`, inflect export's description of the whole graph.
struct InflectGraph {
  std::string name;
  std::vector<RankId> simulated;
  std::vector<std::uint32_t> represents;
  std::vector<std::string> streams;
  GraphFacts facts;
};

InflectGraph read_inflect_graph(const std::string& text, const std::string& file) {
  InflectGraph g;
  try {
    const auto j = nlohmann::json::parse(text);
    g.name = j.at("name").get<std::string>();
    g.simulated = j.at("simulated_ranks").get<std::vector<RankId>>();
    g.represents = j.at("represents").get<std::vector<std::uint32_t>>();
    g.streams = j.at("streams").get<std::vector<std::string>>();
    const auto& m = j.at("meta");
    if (m.contains("tokens_per_step")) g.facts.tokens_per_step = m["tokens_per_step"].get<double>();
    if (m.contains("model_flops_per_step")) g.facts.model_flops_per_step = core::Flops(m["model_flops_per_step"].get<double>());
    if (m.contains("memory_peak_bytes")) g.facts.memory_peak = core::Bytes(m["memory_peak_bytes"].get<double>());
    if (m.contains("micro_batches")) g.facts.micro_batches = m["micro_batches"].get<std::int64_t>();
  } catch (const std::exception& e) {
    fail(fmt::format("{}: global metadata: inflect_graph is not what inflect export writes: {}", file, e.what()));
  }
  if (g.represents.size() != g.simulated.size()) fail(fmt::format("{}: inflect_graph: represents and simulated_ranks differ in length", file));
  return g;
}

}  // namespace


namespace {

ImportedTrace import_files(const std::string& path, const std::vector<RankFile>& files,
                           const std::function<std::string(const RankFile&)>& bytes_of, const TraceImportOptions& options) {
  ImportedTrace out;
  TraceImportSummary& s = out.summary;
  s.format = TraceFormat::chakra;
  s.path = path;
  s.rank_files = static_cast<int>(files.size());

  // Files are read, parsed and converted one at a time (a job's nodes are never all in memory);
  // a file identical to an earlier one is parsed once: when nothing in it depends on the rank
  // (sends and receives name their peer), the later rank is stored as a copy of the earlier one,
  // its nodes counted as the first one's were.
  struct Seen {
    RankId rank = 0;
    bool copyable = false;
    std::int64_t nodes = 0;
    TraceImportSummary tallies;
    std::optional<double> span;
  };
  std::unordered_map<std::string, Seen> by_content;  // (size, hash) -> first rank with it
  TraceGraphBuilder builder;
  std::map<std::string, GroupId> groups;
  std::map<std::string, ProcessGroup> pgs;
  Context cx{options, s, builder, groups, 0, 0, {}};
  std::optional<InflectGraph> ig;
  int total = 0;
  std::vector<RankId> all;
  std::optional<double> step;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto rank = static_cast<RankId>(files[i].rank);
    const std::string bytes = bytes_of(files[i]);
    const std::string key = fmt::format("{}:{}", bytes.size(), std::hash<std::string>{}(bytes));
    if (auto it = by_content.find(key); it != by_content.end() && it->second.copyable && builder.add_copy(rank, it->second.rank)) {
      const Seen& seen = it->second;
      s.nodes += seen.nodes;
      for (const auto& [what, n] : seen.tallies.compute.counts) s.compute.add(what, n);
      for (const auto& [what, n] : seen.tallies.communication.counts) s.communication.add(what, n);
      for (const auto& [what, n] : seen.tallies.other.counts) s.other.add(what, n);
      if (seen.span) step = std::max(step.value_or(0), *seen.span);
      continue;
    }
    const chakra::File f = chakra::read_file(files[i].path, bytes);
    s.nodes += static_cast<std::int64_t>(f.nodes.size());
    if (i == 0) {
      // inflect's own export says what graph it was; any other trace is its files.
      if (f.inflect_graph) ig = read_inflect_graph(*f.inflect_graph, f.path);
      for (const auto& rf : files) total = std::max(total, rf.rank + 1);
      if (f.inflect_total_ranks) total = static_cast<int>(*f.inflect_total_ranks);
      if (total > 1'048'576) fail(fmt::format("{}: {} ranks; at most 1,048,576", path, total));
      all.resize(static_cast<std::size_t>(total));
      for (int r = 0; r < total; ++r) all[static_cast<std::size_t>(r)] = static_cast<RankId>(r);
      if (ig) {
        for (const auto& st : ig->streams) (void)builder.stream(st, f.path);
      } else {
        std::vector<int> missing;
        std::size_t at = 0;
        for (int r = 0; r < total; ++r) {
          if (at < files.size() && files[at].rank == r) ++at;
          else missing.push_back(r);
        }
        if (!missing.empty())
          fail(fmt::format("{}: the job has {} ranks but no file for rank{} {}; a Chakra trace has one file per rank", path,
                           total, missing.size() == 1 ? "" : "s", fmt::join(missing, ", ")));
        cx.world = builder.group(all);
      }
      cx.total_ranks = total;
    }
    // Process groups: each file's `## process_group:init ##` (files must agree on a name).
    for (const auto& n : f.nodes)
      if (n.type == chakra::metadata_node && n.name == "## process_group:init ##")
        for (auto& [name, pg] : read_process_groups(n, f.path)) {
          for (RankId r : pg.ranks)
            if (static_cast<int>(r) >= total)
              fail(fmt::format("{}: process group '{}' names rank {}, but the trace has {} ranks", f.path, name, r, total));
          auto [it, fresh] = pgs.try_emplace(name, pg);
          if (!fresh && it->second.ranks != pg.ranks)
            fail(fmt::format("{}: process group '{}' has different ranks in different files", f.path, name));
          if (!fresh) continue;
          if (ig) {
            // inflect numbers its groups: pg_name is the group's index, and indices must survive.
            if (name != std::to_string(groups.size()))
              fail(fmt::format("{}: inflect export's process groups must be numbered 0..n-1 in order", f.path));
            groups[name] = builder.new_group(pg.ranks, pg.mirrors);
          } else {
            groups[name] = builder.group(pg.ranks.empty() ? all : pg.ranks);
          }
        }
    const TraceImportSummary before = s;
    const RankTrace t = rank_trace(f, rank, cx);
    builder.add_rank(rank, t, f.path);
    // The rank's recorded span, where its nodes carry start times.
    std::uint64_t lo = UINT64_MAX, hi = 0;
    bool copyable = !ig;
    for (const auto& n : f.nodes) {
      if (n.type == chakra::comm_send_node || n.type == chakra::comm_recv_node) copyable = false;
      if (n.start_us > 0 && !is_no_op(n)) {
        lo = std::min(lo, n.start_us);
        hi = std::max(hi, n.start_us + n.duration_us);
      }
    }
    std::optional<double> span;
    if (hi > lo) span = static_cast<double>(hi - lo) * 1e-6;
    if (span) step = std::max(step.value_or(0), *span);
    if (!by_content.count(key)) {
      Seen seen{rank, copyable, static_cast<std::int64_t>(f.nodes.size()), {}, span};
      seen.tallies.compute = difference(s.compute, before.compute);
      seen.tallies.communication = difference(s.communication, before.communication);
      seen.tallies.other = difference(s.other, before.other);
      by_content.emplace(key, std::move(seen));
    }
  }
  s.distinct_files = static_cast<int>(by_content.size());
  if (step) s.recorded_step = core::Seconds(*step);
  for (const auto& [name, first_at] : cx.unknown_attrs)
    s.other.add(fmt::format("nodes with attribute '{}' (first: {}): attribute not used", name, first_at.second), first_at.first);
  s.ranks = total;
  if (ig) {
    builder.facts() = ig->facts;
    out.graph = builder.finish(total, ig->simulated, ig->represents, ig->name);
  } else {
    out.graph = builder.finish(total, fs::path(path).filename().string());
  }
  return out;
}

}  // namespace

ImportedTrace import_chakra(const std::string& path, const TraceImportOptions& options) {
  return import_files(path, chakra::list_rank_files(path), [](const RankFile& f) { return read_trace_file(f.path); }, options);
}

ImportedTrace import_chakra_text(const std::string& name, const std::string& text, const TraceImportOptions& options) {
  auto f = chakra::rank_file(name);
  return import_files(name, {f ? *f : RankFile{name, name, "", 0}}, [&](const RankFile&) { return text; }, options);
}

}  // namespace inflect::workload
