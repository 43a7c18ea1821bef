#include "inflect/workload/chakra_export.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "et_def.pb.h"
#include "inflect/core/error.hpp"
#include "inflect/workload/graph_json.hpp"
#include "inflect/workload/rank_classes.hpp"

namespace inflect::workload {
namespace {

using Attr = ChakraProtoMsg::AttributeProto;
using PbNode = ChakraProtoMsg::Node;

// Chakra's CollectiveCommType for each kind (et_def.proto).
int comm_type(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return ChakraProtoMsg::ALL_REDUCE;
    case CollectiveKind::reduce_scatter: return ChakraProtoMsg::REDUCE_SCATTER;
    case CollectiveKind::all_gather: return ChakraProtoMsg::ALL_GATHER;
    case CollectiveKind::all_to_all: return ChakraProtoMsg::ALL_TO_ALL;
    case CollectiveKind::broadcast: return ChakraProtoMsg::BROADCAST;
    case CollectiveKind::reduce: return ChakraProtoMsg::REDUCE;
    case CollectiveKind::send_recv: break;
  }
  return ChakraProtoMsg::ALL_REDUCE;
}

void add_int(PbNode& n, const char* name, std::int64_t v) {
  Attr* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}
void add_uint(PbNode& n, const char* name, std::uint64_t v) {
  Attr* a = n.add_attr();
  a->set_name(name);
  a->set_uint64_val(v);
}
void add_string(PbNode& n, const char* name, const std::string& v) {
  Attr* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}
void add_bool(PbNode& n, const char* name, bool v) {
  Attr* a = n.add_attr();
  a->set_name(name);
  a->set_bool_val(v);
}

// A non-negative figure as Chakra's integer attributes hold it (they are counts of FLOPs and bytes).
std::uint64_t whole(double v) { return v <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(std::min(v, 1.8e19))); }

class RankWriter {
 public:
  explicit RankWriter(bool json) : json_on_(json), raw_(&et_), out_(std::make_unique<google::protobuf::io::CodedOutputStream>(&raw_)) {}

  template <class M>
  void write(const M& m) {
    google::protobuf::util::SerializeDelimitedToCodedStream(m, out_.get());
    if (!json_on_) return;
    std::string j;
    google::protobuf::util::JsonPrintOptions o;
    (void)google::protobuf::util::MessageToJsonString(m, &j, o);
    json_ += j;
    json_ += '\n';
  }
  ChakraRankTrace finish(RankId r) {
    out_.reset();  // flushes into et_
    return ChakraRankTrace{r, std::move(et_), std::move(json_)};
  }

 private:
  bool json_on_;
  std::string et_, json_;
  google::protobuf::io::StringOutputStream raw_;
  std::unique_ptr<google::protobuf::io::CodedOutputStream> out_;
};

std::string graph_description(const ExecutionGraph& g) {
  nlohmann::ordered_json j;
  j["name"] = g.name;
  j["simulated_ranks"] = g.simulated_ranks();
  j["represents"] = g.represents();
  j["streams"] = g.stream_names();
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
  const GraphFacts& f = g.facts();
  if (f.memory_peak) meta["memory_peak_bytes"] = f.memory_peak->value();
  if (f.micro_batches) meta["micro_batches"] = *f.micro_batches;
  if (f.model_flops_per_step) meta["model_flops_per_step"] = f.model_flops_per_step->value();
  if (f.tokens_per_step) meta["tokens_per_step"] = *f.tokens_per_step;
  j["meta"] = std::move(meta);
  return j.dump();
}

// The `## process_group:init ##` node's input: the Python repr of a list holding the JSON of
// torch.distributed's pg_config_info, as PyTorch's execution trace records it and ASTRA-sim
// reads it; pg_name is the group's index. `mirrors` (inflect's symmetric fidelity) rides along.
std::string process_groups(const ExecutionGraph& g, bool own) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < g.groups().size(); ++i) {
    const Group& gr = g.groups()[i];
    nlohmann::ordered_json e;
    e["pg_name"] = std::to_string(i);
    e["pg_desc"] = fmt::format("inflect group {}", i);
    e["backend_config"] = "cuda:nccl";
    e["ranks"] = gr.members;
    e["group_size"] = gr.members.size();
    e["group_count"] = g.groups().size();
    if (own && !gr.mirrors.empty()) e["mirrors"] = gr.mirrors;
    list.push_back(std::move(e));
  }
  return "['" + list.dump() + "']";
}

}  // namespace

void export_chakra(const ExecutionGraph& graph, const std::vector<core::Time>* durations,
                   const std::function<void(const ChakraRankTrace&)>& sink, const ChakraExportOptions& options) {
  const bool own = options.inflect_attributes;
  const ExecutionGraph& g = graph;
  const std::string description = graph_description(g);
  const std::string groups = process_groups(g, own);
  std::vector<std::string> kernel_json, collective_json;
  for (const auto& k : g.kernels()) kernel_json.push_back(kernel_to_json(k));
  for (const auto& c : g.collectives()) collective_json.push_back(collective_to_json(c));
  const auto host = [&] {
    for (std::size_t i = 0; i < g.stream_names().size(); ++i)
      if (g.stream_names()[i] == "host") return static_cast<int>(i);
    return -1;
  }();

  // Each rank's ops in issue order: contiguous in a compiled graph, interleaved in a hand-written
  // or imported one (graph_from_json keeps the file's order); a replica's are served by op() and
  // op_deps() from its kept rank's, so the graph is not written out first. A rank may have none.
  const RankOps rank_ops(g);
  for (std::uint32_t ri = 0; ri < rank_ops.ranks(); ++ri) {
    const RankId r = g.simulated_ranks()[ri];
    const std::uint32_t count = rank_ops.count(ri);
    const bool replica = rank_ops.is_replica(ri);
    RankWriter w(options.json);
    ChakraProtoMsg::GlobalMetadata meta;
    meta.set_version("1.0.0");
    if (own) {
    for (auto [name, value] : {std::pair<const char*, std::int64_t>{"inflect_total_ranks", g.total_ranks()}, {"inflect_rank", r}}) {
      Attr* a = meta.add_attr();
      a->set_name(name);
      a->set_int64_val(value);
    }
    Attr* a = meta.add_attr();
    a->set_name("inflect_graph");
    a->set_string_val(description);
    }
    w.write(meta);

    PbNode pg;
    pg.set_id(count);  // after the ops, whose ids are their positions in the rank
    pg.set_name("## process_group:init ##");
    pg.set_type(ChakraProtoMsg::METADATA_NODE);
    pg.mutable_inputs()->set_values(groups);
    pg.mutable_inputs()->set_types("['String']");
    add_bool(pg, "is_cpu_op", true);
    w.write(pg);

    std::vector<std::int64_t> last_on_stream(g.stream_names().size(), -1);
    PbNode n;
    for (std::uint32_t j = 0; j < count; ++j) {
      const OpId id = rank_ops.id(ri, j);
      const Op op = g.op(id);
      n.Clear();
      n.set_id(j);  // an op's Chakra id is its position in its rank, and so are its deps'
      if (replica) {
        for (OpId d : g.op_deps(id)) n.add_data_deps(d - rank_ops.id(ri, 0));  // a replica's ops are consecutive ids
      } else {
        for (OpId d : g.deps(id)) n.add_data_deps(rank_ops.position(ri, d));
      }
      // Stream order as Chakra's control dependency: the stream's previous op (inflect's import
      // checks it against the stream; other readers take ctrl_deps as a caller, and skip it).
      if (own && last_on_stream[op.stream] >= 0) n.add_ctrl_deps(static_cast<std::uint64_t>(last_on_stream[op.stream]));
      last_on_stream[op.stream] = static_cast<std::int64_t>(j);
      if (op.type == OpType::compute) {
        const Kernel& k = g.kernels()[op.payload];
        n.set_name(k.name);
        n.set_type(ChakraProtoMsg::COMP_NODE);
        const core::Time t = durations ? (*durations)[op.payload] : k.recorded.value_or(core::Time::zero());
        n.set_duration_micros(whole(t.seconds() * 1e6));
        add_bool(n, "is_cpu_op", static_cast<int>(op.stream) == host);
        add_uint(n, "num_ops", whole(k.cost.flops.value()));
        add_uint(n, "tensor_size", whole(k.cost.bytes.value()));
        if (own) add_string(n, "inflect_kernel", kernel_json[op.payload]);
      } else {
        const Collective& c = g.collectives()[op.payload];
        const Group& gr = g.groups()[c.group];
        n.set_name(c.name);
        add_bool(n, "is_cpu_op", false);
        if (c.kind == CollectiveKind::send_recv) {
          const bool sends = gr.members[0] == r;
          n.set_type(sends ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
          add_int(n, "comm_src", gr.members[0]);
          add_int(n, "comm_dst", gr.members[1]);
          add_int(n, "comm_size", static_cast<std::int64_t>(whole(c.bytes.value())));
        } else {
          n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
          add_int(n, "comm_type", comm_type(c.kind));
          // Chakra's comm_size is each rank's input: an all-gather's is its shard.
          const double size = c.kind == CollectiveKind::all_gather ? c.bytes.value() / static_cast<double>(gr.members.size())
                                                                   : c.bytes.value();
          add_int(n, "comm_size", static_cast<std::int64_t>(whole(size)));
          add_string(n, "pg_name", std::to_string(c.group));
        }
        if (own) add_string(n, "inflect_collective", collective_json[op.payload]);
      }
      if (own) {
        add_string(n, "inflect_stream", g.stream_names()[op.stream]);
        add_int(n, "inflect_phase", static_cast<int>(op.phase));
        add_int(n, "inflect_layer", op.layer);
        add_int(n, "inflect_micro_batch", op.micro_batch);
      }
      w.write(n);
    }
    sink(w.finish(r));
  }
}

}  // namespace inflect::workload
