#pragma once
// One PyTorch profiler (Kineto) Chrome-trace file as the importer keeps it: the distributedInfo
// block and each complete ('X') event reduced to the fields the replay reads, parsed in one pass
// without keeping the JSON document (a rank's file reaches hundreds of MB; kineto_trace.cpp).
// Private to the workload layer; kineto_import.cpp and kineto_rank.cpp build the graph from it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "inflect/workload/trace_import.hpp"
#include "workload/graph_bounds.hpp"

namespace inflect::workload::kineto {

/// The categories the importer tells apart (Kineto's `cat`, libkineto ActivityType names).
enum class Cat : std::uint8_t {
  kernel,
  gpu_memcpy,
  gpu_memset,
  cuda_runtime,
  cuda_driver,
  cuda_sync,
  cpu_op,
  user_annotation,
  other,  // counted by its category name and ignored
};

/// Kineto's cuda_sync kinds (libkineto CuptiActivity: "Stream Sync", "Event Sync", "Context Sync",
/// "Stream Wait Event").
enum class SyncKind : std::uint8_t { none, stream, event, context, stream_wait_event };

/// The collective metadata PyTorch records on an NCCL kernel or its record_param_comms op
/// (libkineto/include/MetadataFieldCatalog.h, CollectiveMetadataFields).
struct CollectiveMeta {
  std::string collective;  // "Collective name": allreduce, _allgather_base, send ...
  std::string dtype;
  std::int64_t in_nelems = -1, out_nelems = -1;
  std::vector<std::int64_t> group_ranks;  // "Process Group Ranks", when not truncated
  bool ranks_truncated = false;
  std::int64_t rank_start = -1, rank_stride = -1, group_size = -1;
  std::string pg_name, pg_desc;
  std::int64_t seq = -1, src = -1, dst = -1;
};

/// A GEMM or attention op's shapes ("Input Dims", "Input type", "Concrete Inputs", recorded with
/// record_shapes=True).
struct OpShapes {
  std::vector<std::vector<std::int64_t>> dims;
  std::vector<std::string> types;
  std::vector<std::string> concrete;
};

inline constexpr std::uint32_t kNone = 0xffffffffu;

/// A complete event, times in integer nanoseconds (Kineto writes microseconds with three decimals).
struct Event {
  std::int64_t ts = 0, dur = 0;
  std::int64_t correlation = -1, external_id = -1;
  std::int64_t stream = -1, device = -1, tid = -1;
  std::int64_t wait_stream = -1, wait_record_correlation = -1;  // cuda_sync
  std::int64_t bytes = -1;                                      // gpu_memcpy / gpu_memset
  std::uint32_t index = 0;                                      // position in traceEvents
  std::uint32_t name = 0;                                       // into Trace::names
  std::uint32_t collective = kNone;                             // into Trace::collectives
  std::uint32_t shapes = kNone;                                 // into Trace::shapes
  Cat cat = Cat::other;
  SyncKind sync = SyncKind::none;
  bool is_async = false;  // "Is asynchronized op" (a collective)
};

struct ProcessGroupConfig {
  std::string name, desc;
  std::vector<std::int64_t> ranks;
};

struct Trace {
  std::string file;
  std::optional<int> rank;
  int world_size = 0;  // 0: not recorded
  std::vector<ProcessGroupConfig> groups;
  std::vector<Event> events;  // complete events in file order
  std::vector<std::string> names;
  std::vector<std::string> short_names;  // short_kernel_name of each name (kineto_ops.hpp), made once as it is interned
  std::vector<CollectiveMeta> collectives;
  std::vector<OpShapes> shapes;
  std::int64_t events_read = 0;  // every entry of traceEvents
  /// Events dropped while parsing (not complete events, or of a category the replay does not
  /// read), each with what became of them.
  NodeTally ignored;
  const std::string& name(const Event& e) const { return names[e.name]; }
  const std::string& short_name(const Event& e) const { return short_names[e.name]; }
  /// "FILE: event 17 'aten::mm'" for errors.
  std::string where(const Event& e) const;
};

/// Bounds on what a trace may say (graph_bounds.hpp): a complete event lasts at most a day.
inline constexpr std::int64_t kMaxDurationNs = bounds::kMaxRecordedSeconds * 1'000'000'000;
/// Timestamps are microseconds since the epoch or since boot: 9e15 us is the year 2255, and
/// keeps nanoseconds within int64.
inline constexpr double kMaxTimestampUs = 9e15;
using bounds::kMaxBytes;

/// Parses one trace held in `text`; `file` names it in errors (core::Error input: not JSON, no
/// traceEvents, an event without ph/ts/dur, a negative or out-of-bounds figure).
Trace parse_trace(std::string_view text, const std::string& file);

/// Parses the trace file at `path`, gzip-compressed or not (zlib reads both), streaming it: the
/// file is never held whole.
Trace parse_trace_file(const std::string& path);

/// Bytes per element of a c10 ScalarType name as Kineto writes it ("Float", "BFloat16", ...), or
/// nullopt when unknown.
std::optional<double> dtype_bytes(std::string_view dtype);

}  // namespace inflect::workload::kineto
