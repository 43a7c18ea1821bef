#include "workload/chakra_nodes.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <google/protobuf/util/json_util.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "et_def.pb.h"
#include "inflect/core/error.hpp"

namespace inflect::workload::chakra {
namespace {

using Attr = ChakraProtoMsg::AttributeProto;

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& message) {
  throw core::Error(core::ErrorKind::input, fmt::format("{}: {}: {}", path, where, message));
}

// An integer attribute in any of protobuf's integer kinds (the feeder reads int64, ASTRA-sim's
// generators write int64 or uint64, the converter int32 for tags).
std::optional<std::int64_t> integer(const Attr& a) {
  switch (a.value_case()) {
    case Attr::kInt32Val: return a.int32_val();
    case Attr::kInt64Val: return a.int64_val();
    case Attr::kUint32Val: return a.uint32_val();
    case Attr::kUint64Val:
      if (a.uint64_val() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
      return static_cast<std::int64_t>(a.uint64_val());
    case Attr::kSint32Val: return a.sint32_val();
    case Attr::kSint64Val: return a.sint64_val();
    case Attr::kFixed32Val: return a.fixed32_val();
    case Attr::kFixed64Val:
      if (a.fixed64_val() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
      return static_cast<std::int64_t>(a.fixed64_val());
    case Attr::kSfixed32Val: return a.sfixed32_val();
    case Attr::kSfixed64Val: return a.sfixed64_val();
    default: return std::nullopt;
  }
}

class AttrReader {
 public:
  AttrReader(const std::string& path, std::string where) : path_(path), where_(std::move(where)) {}

  std::int64_t int_of(const Attr& a) const {
    if (auto v = integer(a)) return *v;
    fail(path_, where_, fmt::format("attribute '{}' must be an integer (int32/int64/uint32/uint64 value), got {}", a.name(),
                                    kind(a)));
  }
  bool bool_of(const Attr& a) const {
    if (a.value_case() == Attr::kBoolVal) return a.bool_val();
    if (auto v = integer(a); v && (*v == 0 || *v == 1)) return *v == 1;
    fail(path_, where_, fmt::format("attribute '{}' must be a bool, got {}", a.name(), kind(a)));
  }
  std::string string_of(const Attr& a) const {
    if (a.value_case() == Attr::kStringVal) return a.string_val();
    fail(path_, where_, fmt::format("attribute '{}' must be a string, got {}", a.name(), kind(a)));
  }

 private:
  static std::string kind(const Attr& a) {
    const auto* field = Attr::descriptor()->FindFieldByNumber(static_cast<int>(a.value_case()));
    return field ? field->name() : "no value";
  }
  const std::string& path_;
  std::string where_;
};

Node convert(const ChakraProtoMsg::Node& m, const std::string& path, std::size_t position) {
  Node n;
  n.id = m.id();
  n.name = m.name();
  n.type = static_cast<int>(m.type());
  n.ctrl_deps.assign(m.ctrl_deps().begin(), m.ctrl_deps().end());
  n.data_deps.assign(m.data_deps().begin(), m.data_deps().end());
  n.start_us = m.start_time_micros();
  n.duration_us = m.duration_micros();
  if (m.has_inputs()) {
    n.input_values = m.inputs().values();
    n.input_shapes = m.inputs().shapes();
    n.input_types = m.inputs().types();
  }
  const AttrReader r(path, fmt::format("node {} (id {}, '{}')", position, n.id, n.name));
  for (const Attr& a : m.attr()) {
    const std::string& k = a.name();
    if (k == "is_cpu_op") n.is_cpu_op = r.bool_of(a);
    else if (k == "num_ops") n.num_ops = r.int_of(a);
    else if (k == "tensor_size") n.tensor_size = r.int_of(a);
    else if (k == "comm_type") n.comm_type = r.int_of(a);
    else if (k == "comm_size") n.comm_size = r.int_of(a);
    else if (k == "comm_src") n.comm_src = r.int_of(a);
    else if (k == "comm_dst") n.comm_dst = r.int_of(a);
    else if (k == "comm_tag") n.comm_tag = r.int_of(a);
    else if (k == "pg_name") n.pg_name = r.string_of(a);
    else if (k == "inflect_kernel") n.inflect_kernel = r.string_of(a);
    else if (k == "inflect_collective") n.inflect_collective = r.string_of(a);
    else if (k == "inflect_stream") n.inflect_stream = r.string_of(a);
    else if (k == "inflect_phase") n.inflect_phase = r.int_of(a);
    else if (k == "inflect_layer") n.inflect_layer = r.int_of(a);
    else if (k == "inflect_micro_batch") n.inflect_micro_batch = r.int_of(a);
    else n.other_attrs.push_back(k);
  }
  return n;
}

void read_metadata(const ChakraProtoMsg::GlobalMetadata& m, File& f) {
  f.version = m.version();
  const AttrReader r(f.path, "global metadata");
  for (const Attr& a : m.attr()) {
    const std::string& k = a.name();
    if (k == "inflect_total_ranks") f.inflect_total_ranks = r.int_of(a);
    else if (k == "inflect_rank") f.inflect_rank = r.int_of(a);
    else if (k == "inflect_graph") f.inflect_graph = r.string_of(a);
    else f.other_attrs.push_back(k);
  }
}

void read_protobuf(const std::string& text, File& f) {
  google::protobuf::io::ArrayInputStream raw(text.data(), static_cast<int>(text.size()));
  google::protobuf::io::CodedInputStream in(&raw);
  ChakraProtoMsg::GlobalMetadata meta;
  bool clean_eof = false;
  if (!google::protobuf::util::ParseDelimitedFromCodedStream(&meta, &in, &clean_eof))
    fail(f.path, "global metadata", clean_eof ? "empty file; a Chakra trace starts with its GlobalMetadata message"
                                              : "not a Chakra execution trace (its first message is not a length-delimited "
                                                "GlobalMetadata), or it is truncated");
  read_metadata(meta, f);
  ChakraProtoMsg::Node node;
  for (std::size_t i = 0;; ++i) {
    const auto at = in.CurrentPosition();
    node.Clear();  // ParseDelimitedFromCodedStream merges into the message: reuse it cleared
    if (!google::protobuf::util::ParseDelimitedFromCodedStream(&node, &in, &clean_eof)) {
      if (clean_eof) break;
      fail(f.path, fmt::format("node {} (at byte {})", i, at), "truncated or corrupt: not a whole length-delimited Node message");
    }
    f.nodes.push_back(convert(node, f.path, i));
  }
}

void read_json(const std::string& text, File& f) {
  // chakra_jsonizer writes MessageToJson of the GlobalMetadata and then of each Node, one object
  // after another: split with nlohmann (one value per read), map each with protobuf's own JSON
  // parser (it takes both the camelCase and the proto field names).
  std::istringstream in(text);
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  for (std::size_t i = 0;; ++i) {
    in >> std::ws;
    if (in.peek() == std::char_traits<char>::eof()) break;
    nlohmann::json j;
    try {
      in >> j;
    } catch (const nlohmann::json::exception& e) {
      fail(f.path, i == 0 ? "global metadata" : fmt::format("node {}", i - 1), fmt::format("not valid JSON: {}", e.what()));
    }
    if (i == 0 && j.is_object() && j.contains("workload_graph"))
      fail(f.path, "top level",
           "this is the Chakra feeder's test JSON (`workload_graph`); inflect reads the protobuf .et files and their "
           "chakra_jsonizer JSON");
    const std::string one = j.dump();
    if (i == 0) {
      ChakraProtoMsg::GlobalMetadata meta;
      if (auto st = google::protobuf::util::JsonStringToMessage(one, &meta, options); !st.ok())
        fail(f.path, "global metadata", fmt::format("not a Chakra GlobalMetadata: {}", st.ToString()));
      read_metadata(meta, f);
      continue;
    }
    ChakraProtoMsg::Node node;
    if (auto st = google::protobuf::util::JsonStringToMessage(one, &node, options); !st.ok())
      fail(f.path, fmt::format("node {}", i - 1), fmt::format("not a Chakra Node: {}", st.ToString()));
    f.nodes.push_back(convert(node, f.path, i - 1));
  }
  if (f.nodes.empty() && f.version.empty() && f.other_attrs.empty() && !f.inflect_graph)
    fail(f.path, "top level", "empty: a Chakra trace starts with its GlobalMetadata");
}

}  // namespace

bool known_version(const std::string& version) {
  if (version.empty()) return true;
  const auto dot = version.find('.');
  const std::string major = version.substr(0, dot);
  return dot != std::string::npos && (major == "0" || major == "1");
}

File read_file(const std::string& path, const std::string& text) {
  File f;
  f.path = path;
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    fail(path, "file", fmt::format("{} bytes; at most 2 GiB per rank file (protobuf's limit on one stream)", text.size()));
  const bool json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (json) read_json(text, f);
  else read_protobuf(text, f);
  if (!known_version(f.version))
    fail(path, "global metadata",
         fmt::format("Chakra version '{}' is not one inflect reads (0.x and 1.x: 0.0.4, 1.0.0, or none)", f.version));
  return f;
}

}  // namespace inflect::workload::chakra
