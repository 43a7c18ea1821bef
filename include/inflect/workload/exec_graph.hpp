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
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "inflect/core/huge_pages.hpp"
#include "inflect/core/kernel_cost.hpp"
#include "inflect/core/time.hpp"
#include "inflect/core/units.hpp"
#include "inflect/workload/ids.hpp"
#include "inflect/workload/rank_classes.hpp"

namespace inflect::workload {

enum class OpType : std::uint8_t { compute, collective };
enum class Phase : std::uint8_t { forward, backward, recompute, optimizer };
/// send_recv: a group of two, members[0] sends `bytes` to members[1]. broadcast and reduce are
/// rooted at the group's members[0] (ncclBroadcast / ncclReduce's root): it sends `bytes` to every
/// member, or receives the reduction of every member's `bytes`.
enum class CollectiveKind : std::uint8_t { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv, broadcast, reduce };
enum class ParallelDim : std::uint8_t { dp, tp, pp, cp, ep };
inline constexpr int kParallelDims = 5;

const char* to_string(Phase p);
const char* to_string(CollectiveKind k);
const char* to_string(ParallelDim d);

/// A kernel, or a fused block of kernels that run back to back on one stream (the compiler fuses
/// a transformer block's kernels between two communication points, which changes no timing and
/// keeps huge graphs small). When `parts` is non-empty, the op's duration is the sum of the parts'
/// durations and `cost` holds their summed FLOPs and bytes.
///
/// `recorded` is a duration measured in a trace (an imported Chakra or PyTorch profiler trace
/// keeps it unless asked to re-time, workload/trace_import.hpp): the engine runs the kernel for
/// exactly that long on any device, and `cost` (often unknown, then zero) serves only the power
/// model. A host-side gap between two launches is such a kernel too, on the trace's host stream.
struct Kernel {
  std::string name;
  core::KernelCost cost;
  std::vector<core::KernelCost> parts;
  std::optional<core::Time> recorded{};
};

/// bytes follow nccl-tests' conventions so figures compare with its output: all_reduce = the
/// buffer each rank reduces; reduce_scatter and all_gather = the whole (gathered) buffer S;
/// all_to_all = each rank's whole send buffer; send_recv = the message; broadcast and reduce = the
/// buffer (the root's, sent whole to every member; every member's, reduced whole to the root).
/// A collective that follows another on the same group and dimension, back to back (see
/// Collective::then).
struct CollectivePart {
  CollectiveKind kind = CollectiveKind::all_reduce;
  core::Bytes bytes;
  std::string name;
  bool operator==(const CollectivePart&) const = default;
};

struct Collective {
  CollectiveKind kind = CollectiveKind::all_reduce;
  ParallelDim dim = ParallelDim::dp;
  GroupId group = 0;
  core::Bytes bytes;
  std::string name;
  /// Collectives issued right after this one on the same group, each starting when the one before
  /// ends and nothing else waiting for those in between (a sequence-parallel block's
  /// reduce-scatter and the next block's all-gather): one op runs them in order, as the compiler
  /// fuses the kernels between two communication points (Kernel::parts). `name` then joins all
  /// the names with '+'. Empty for a single collective.
  std::vector<CollectivePart> then{};
};

/// Whether two collectives move the same data on a group: kind, size and what follows them (they
/// lower to the same transfers, and NCCL-style matching takes one for the other).
inline bool same_traffic(const Collective& a, const Collective& b) {
  return a.kind == b.kind && a.bytes == b.bytes && a.then == b.then;
}

/// Whether two collectives make the same call up to their groups: the same traffic, dimension and
/// name.
inline bool same_call(const Collective& a, const Collective& b) { return same_traffic(a, b) && a.dim == b.dim && a.name == b.name; }

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

/// A rank whose ops are a copy of a kept rank's on its own process groups (see end_rank).
struct Replica {
  RankId rank = 0;
  std::uint32_t kept = 0;    // index into kept_ranks()
  std::uint32_t offset = 0;  // its ops are OpIds kept_ops + offset ... (see ExecutionGraph::op)
  OpId expanded_first = 0;   // its first op's id in ExecutionGraph::expanded()
  /// The i-th distinct collective the kept rank calls (in first-use order) is colls[i] here: the
  /// same kind, dim, bytes and name on this rank's group.
  std::vector<std::uint32_t> colls;
};

/// A rank whose ops are stored: [first, first + count) in ops(), with its distinct collectives in
/// first-use order.
struct KeptRank {
  RankId rank = 0;
  OpId first = 0;
  std::uint32_t count = 0;
  std::vector<std::uint32_t> colls;
  OpId expanded_first = 0;  // its first op's id in ExecutionGraph::expanded()
};

/// The op and dependency arrays reach hundreds of megabytes on 16k-rank graphs: huge pages cut
/// the page faults of filling them and the TLB misses of reading them (core/huge_pages.hpp).
using OpVector = std::vector<Op, core::HugePageAllocator<Op>>;
using OpIdVector = std::vector<OpId, core::HugePageAllocator<OpId>>;

/// Figures of the whole step that the report needs and the ops do not give. The compiler knows
/// them all; a replayed trace may lack any (its JSON `meta`, docs/execution-graph.md). A missing
/// one is unknown: the report says null for it and for what is made from it, never 0.
struct GraphFacts {
  std::optional<double> tokens_per_step;            // global_batch * seq_len
  std::optional<core::Flops> model_flops_per_step;  // forward + backward, no recomputation (MFU's numerator)
  std::optional<core::Bytes> memory_peak;           // the largest rank's peak memory
  std::optional<std::int64_t> micro_batches;        // per step and data-parallel rank
};

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
              std::int16_t layer, std::uint16_t micro_batch, std::span<const OpId> deps) {
    // Inline, and the fields written in place (an Op built aside and copied in stalls on store
    // forwarding): full-fidelity compiles call it tens of millions of times.
    Op& op = ops_.emplace_back();
    op.rank = rank;
    op.payload = payload;
    op.dep_begin = static_cast<std::uint32_t>(deps_.size());
    op.layer = layer;
    op.micro_batch = micro_batch;
    op.stream = stream;
    op.type = type;
    op.phase = phase;
    deps_.insert(deps_.end(), deps.begin(), deps.end());
    return static_cast<OpId>(ops_.size() - 1);
  }

  /// Declares that the ops added since the previous end_rank (or since the start) are all of rank
  /// `r`'s. When they are a copy of a kept rank's (workload/rank_classes.hpp has the rule: the
  /// same ops up to process groups that correspond one-to-one) they are dropped and `r` is
  /// recorded as a replica of it; otherwise `r` is kept. Why: in full fidelity most ranks are such
  /// copies (the data-parallel replicas and tensor-parallel peers of a stage), so a 21M-op graph
  /// of 1,024 ranks is stored as its 16 distinct ranks, and the engine runs them from those
  /// templates. Returns whether `r` became a replica.
  bool end_rank(RankId r);
  /// Adds rank `r` as a replica of kept rank `kept` (an index into kept_ranks()) without its ops:
  /// `colls[i]` is r's counterpart of the kept rank's i-th collective (KeptRank::colls). For a
  /// frontend that knows a rank copies another (the compiler's stage replay); the collective half
  /// of end_rank's rule (RankComparer::collectives_mismatch: the same calls on groups that
  /// correspond one-to-one, r a member of each) throws core::Error(input) naming the first
  /// collective that fails. No ops may be pending.
  void add_replica(RankId r, std::uint32_t kept, std::vector<std::uint32_t> colls);
  /// Ops of every rank, replicas included. Kept ops are ids [0, ops().size()), replicas' ops
  /// follow, replica by replica (op() and op_deps() serve both).
  std::size_t op_count() const { return ops_.size() + replica_ops_; }
  Op op(OpId id) const;
  /// Dependencies of any op (op_deps(kept op) == deps(it)).
  std::vector<OpId> op_deps(OpId id) const;
  const std::vector<Replica>& replicas() const { return replicas_; }
  const std::vector<KeptRank>& kept_ranks() const { return kept_; }
  /// The id op `id` has in expanded().
  OpId expanded_id(OpId id) const;
  /// The same graph with every replica written out as ops, in the order the ranks were added
  /// (what the frontend would have built without end_rank): for export and for tests.
  ExecutionGraph expanded() const;

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

  /// What the frontend knows of the whole step, for the report.
  GraphFacts& facts() { return facts_; }
  const GraphFacts& facts() const { return facts_; }
  std::string name;

  /// Checks ids, dep order and group membership (of kept ops; replicas are checked by end_rank);
  /// throws core::Error(input) naming the op.
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
  GraphFacts facts_;
  // Ranks declared by end_rank; each knows where it starts in expanded(), whose order is theirs.
  std::vector<KeptRank> kept_;
  std::vector<Replica> replicas_;
  std::size_t replica_ops_ = 0;
  std::size_t rank_mark_ = 0;  // ops before this belong to ranks already ended
  std::map<std::uint32_t, std::vector<std::uint32_t>> kept_by_count_;
  RankComparer comparer_;  // end_rank's and add_replica's, with its scratch
  std::uint32_t replica_slot_of(const Replica& rep, std::uint32_t kept_payload) const;
  /// Records `r` as a replica of kept rank `kept` whose ops end at ops().size().
  void push_replica(RankId r, std::uint32_t kept, std::vector<std::uint32_t> colls);
  /// Ops the ranks ended before kept op `kept_id` (stored or replicated) amount to in expanded().
  std::size_t expanded_total_before(std::size_t kept_id) const { return kept_id + replica_ops_; }
};

}  // namespace inflect::workload
