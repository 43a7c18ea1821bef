#pragma once
// Chakra execution-trace files read into plain nodes (private to the workload layer): the
// protobuf `.et` form (a GlobalMetadata message, then Node messages, each preceded by its length
// as a varint, as Chakra's protolib writes them) and the JSON form chakra_jsonizer writes (the same
// messages in protobuf's JSON mapping, one object after another). Both are parsed with
// libprotobuf and the schema compiled from third_party/chakra/et_def.proto.
//
// Known attributes are read into typed fields, checking their value kind; an attribute this
// reader does not know is kept by name (the importer reports it, naming the first node that has
// it) rather than skipped in silence.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace inflect::workload::chakra {

/// Chakra's NodeType values (et_def.proto).
enum NodeType : int {
  invalid_node = 0,
  metadata_node = 1,
  mem_load_node = 2,
  mem_store_node = 3,
  comp_node = 4,
  comm_send_node = 5,
  comm_recv_node = 6,
  comm_coll_node = 7,
};
/// Chakra's CollectiveCommType values.
enum CommType : int {
  all_reduce = 0,
  reduce = 1,
  all_gather = 2,
  gather = 3,
  scatter = 4,
  broadcast = 5,
  all_to_all = 6,
  reduce_scatter = 7,
  reduce_scatter_block = 8,
  barrier = 9,
};

struct Node {
  std::uint64_t id = 0;
  std::string name;
  int type = invalid_node;
  std::vector<std::uint64_t> ctrl_deps, data_deps;
  std::uint64_t start_us = 0, duration_us = 0;
  std::string input_values, input_shapes, input_types;  // IOInfo strings (metadata, shapes for retiming)
  // Attributes the Chakra feeder and ASTRA-sim read.
  std::optional<bool> is_cpu_op;
  std::optional<std::int64_t> num_ops, tensor_size, comm_type, comm_size, comm_src, comm_dst, comm_tag;
  std::optional<std::string> pg_name;
  // Written by `inflect export --format chakra` (chakra_export.cpp): the op exactly as inflect had it.
  std::optional<std::string> inflect_kernel, inflect_collective, inflect_stream;
  std::optional<std::int64_t> inflect_phase, inflect_layer, inflect_micro_batch;
  /// Attributes this reader does not use, by name.
  std::vector<std::string> other_attrs;
};

struct File {
  std::string path;
  std::string version;  // GlobalMetadata.version ("" in traces chakra_converter writes)
  // GlobalMetadata attributes inflect's export writes (absent in other traces).
  std::optional<std::int64_t> inflect_total_ranks, inflect_rank;
  std::optional<std::string> inflect_graph;  // {name, simulated_ranks, represents, streams, meta} as JSON
  std::vector<std::string> other_attrs;     // GlobalMetadata attributes not used
  std::vector<Node> nodes;
};

/// Reads one file: `.json` as chakra_jsonizer output, anything else as protobuf. `text` is the
/// file's content. Errors (core::Error input) name the file, the node (its position and id) and
/// the attribute.
File read_file(const std::string& path, const std::string& text);

/// Whether `version` is one this reader understands: empty (chakra_converter writes the version
/// as an attribute, `schema`), or a 0.x or 1.x version ("0.0.4", "1.0.0"; Chakra's own tools).
bool known_version(const std::string& version);

}  // namespace inflect::workload::chakra
