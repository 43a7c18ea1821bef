#pragma once
// The execution graph: the IR between frontends (the plan compiler, trace import) and the engine.
//
// Per-rank ops with dependencies. Each rank has named streams (like CUDA streams): a stream runs
// its ops one at a time in the order they were added; an op also waits for its explicit deps
// (ops on any stream of the same rank). A compute op points at a Kernel (FLOPs, bytes, shape); a
// collective op points at a Collective (kind, group, bytes). The k-th collective op a rank issues
// on a group matches the k-th of every other member, as NCCL matches calls on a communicator.
//
// Ops are small (20 bytes) and kernels/collectives are deduplicated tables, so a 16k-rank graph
// fits in memory. The graph is move-only; OpId handles are plain indices.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "inflect/core/huge_pages.hpp"
#include "inflect/core/kernel_cost.hpp"
#include "inflect/core/units.hpp"

namespace inflect::workload {

using RankId = std::int32_t;
using OpId = std::uint32_t;
using GroupId = std::uint32_t;

enum class OpType : std::uint8_t { compute, collective };
enum class Phase : std::uint8_t { forward, backward, recompute, optimizer };
/// send_recv: a group of two, members[0] sends `bytes` to members[1].
enum class CollectiveKind : std::uint8_t { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv };
enum class ParallelDim : std::uint8_t { dp, tp, pp, cp, ep };
inline constexpr int kParallelDims = 5;

const char* to_string(Phase p);
const char* to_string(CollectiveKind k);
const char* to_string(ParallelDim d);

/// A kernel, or a fused block of kernels that run back to back on one stream (the compiler fuses
/// a transformer block's kernels between two communication points, which changes no timing and
/// keeps huge graphs small). When `parts` is non-empty, the op's duration is the sum of the parts'
/// durations and `cost` holds their summed FLOPs and bytes.
struct Kernel {
  std::string name;
  core::KernelCost cost;
  std::vector<core::KernelCost> parts;
};

/// bytes follow nccl-tests' conventions so figures compare with its output: all_reduce = the
/// buffer each rank reduces; reduce_scatter and all_gather = the whole (gathered) buffer S;
/// all_to_all = each rank's whole send buffer; send_recv = the message.
struct Collective {
  CollectiveKind kind = CollectiveKind::all_reduce;
  ParallelDim dim = ParallelDim::dp;
  GroupId group = 0;
  core::Bytes bytes;
  std::string name;
};

/// A process group. `mirrors` lists, for symmetric fidelity only, the groups of the ranks that the
/// simulated members stand for: they run the same collective at the same time on other links.
struct Group {
  std::vector<RankId> members;
  std::vector<std::vector<RankId>> mirrors;
};

struct Op {
  RankId rank = 0;
  std::uint32_t payload = 0;    // index into kernels() or collectives()
  std::uint32_t dep_begin = 0;  // deps are deps_[dep_begin, next op's dep_begin)
  std::int16_t layer = -1;      // transformer layer (global index), -1 if none
  std::uint16_t micro_batch = 0;
  std::uint8_t stream = 0;
  OpType type = OpType::compute;
  Phase phase = Phase::forward;
};

/// The op and dependency arrays reach hundreds of megabytes on 16k-rank graphs: huge pages cut
/// the page faults of filling them and the TLB misses of reading them (core/huge_pages.hpp).
using OpVector = std::vector<Op, core::HugePageAllocator<Op>>;
using OpIdVector = std::vector<OpId, core::HugePageAllocator<OpId>>;

class ExecutionGraph {
 public:
  ExecutionGraph() = default;
  ExecutionGraph(ExecutionGraph&&) = default;
  ExecutionGraph& operator=(ExecutionGraph&&) = default;
  ExecutionGraph(const ExecutionGraph&) = delete;
  ExecutionGraph& operator=(const ExecutionGraph&) = delete;

  /// Total ranks of the job (devices), and the ranks that have ops in this graph. In full fidelity
  /// every rank is simulated; in symmetric fidelity one rank per class, `represents[i]` counting
  /// the ranks simulated_ranks[i] stands for.
  void set_ranks(int total, std::vector<RankId> simulated, std::vector<std::uint32_t> represents);
  int total_ranks() const { return total_ranks_; }
  const std::vector<RankId>& simulated_ranks() const { return simulated_; }
  const std::vector<std::uint32_t>& represents() const { return represents_; }

  std::uint8_t stream(const std::string& stream_name);  // id of a stream name, added on first use
  const std::vector<std::string>& stream_names() const { return streams_; }

  std::uint32_t add_kernel(Kernel k);
  std::uint32_t add_collective(Collective c);
  GroupId add_group(Group g);
  /// Appends an op; deps must be earlier ops of the same rank. Returns its id.
  OpId add_op(RankId rank, std::uint8_t stream, OpType type, std::uint32_t payload, Phase phase,
              std::int16_t layer, std::uint16_t micro_batch, std::span<const OpId> deps);

  /// Pre-allocates room for `ops` ops and `deps` dependencies (a compiler that knows the size
  /// avoids regrowing arrays of tens of millions of entries).
  void reserve(std::size_t ops, std::size_t deps) {
    ops_.reserve(ops);
    deps_.reserve(deps);
  }
  const OpVector& ops() const { return ops_; }
  std::span<const OpId> deps(OpId id) const;
  const OpIdVector& dep_storage() const { return deps_; }
  const std::vector<Kernel>& kernels() const { return kernels_; }
  const std::vector<Collective>& collectives() const { return collectives_; }
  const std::vector<Group>& groups() const { return groups_; }

  /// Free-form figures a frontend records for the report (e.g. "model_flops_per_step",
  /// "tokens_per_step", "memory_peak_bytes").
  std::map<std::string, double>& meta() { return meta_; }
  const std::map<std::string, double>& meta() const { return meta_; }
  std::string name;

  /// Checks ids, dep order and group membership; throws core::Error(input) naming the op.
  void validate() const;

 private:
  int total_ranks_ = 0;
  std::vector<RankId> simulated_;
  std::vector<std::uint32_t> represents_;
  std::vector<std::string> streams_;
  std::vector<Kernel> kernels_;
  std::vector<Collective> collectives_;
  std::vector<Group> groups_;
  OpVector ops_;
  OpIdVector deps_;
  std::map<std::string, double> meta_;
};

}  // namespace inflect::workload
