// Chakra execution traces: inflect's export read back gives the same graph (byte for byte as graph
// JSON), the shipped traces import with the node counts they hold, and broken or hostile traces
// are input errors that name the file and the node.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <filesystem>
#include <string>

#include "et_def.pb.h"
#include "inflect/core/error.hpp"
#include "inflect/workload/chakra_export.hpp"
#include "inflect/workload/graph_json.hpp"
#include "inflect/workload/trace_import.hpp"
#include "temp_dir.hpp"

using namespace inflect::workload;
using inflect::core::Error;
using inflect::core::ErrorKind;
namespace fs = std::filesystem;

namespace {

// Two ranks doing what the compiler's graphs do, and what traces bring: a GEMM, a fused block,
// a recorded kernel on the host stream, an all-reduce with a fused all-gather after it, a send
// from rank 0 to rank 1, a broadcast; deps across streams.
ExecutionGraph two_rank_graph() {
  ExecutionGraph g;
  g.name = "two ranks";
  g.set_ranks(2, {0, 1}, {1, 1});
  const std::uint8_t compute = g.stream("compute"), comm = g.stream("comm"), host = g.stream("host"), p2p = g.stream("pp");
  Kernel gemm;
  gemm.name = "qkv_proj";
  gemm.cost = inflect::core::gemm_cost(2048, 3072, 1024, inflect::core::Precision::bf16);
  const std::uint32_t kg = g.add_kernel(gemm);
  Kernel block;
  block.name = "block";
  block.cost.flops = inflect::core::Flops(3e9);
  block.cost.bytes = inflect::core::Bytes(1.0 / 3.0);
  block.parts = {inflect::core::gemm_cost(64, 64, 64, inflect::core::Precision::fp8), block.cost};
  const std::uint32_t kb = g.add_kernel(block);
  Kernel launch;
  launch.name = "aten::mm (host)";
  launch.recorded = inflect::core::Time::ps(12'345'678);
  const std::uint32_t kh = g.add_kernel(launch);
  const GroupId both = g.add_group(Group{{0, 1}, {}});
  const GroupId pair = g.add_group(Group{{0, 1}, {}});  // equal members: kept apart by index
  Collective ar;
  ar.name = "grad_ar+ag";
  ar.kind = CollectiveKind::all_reduce;
  ar.group = both;
  ar.bytes = inflect::core::Bytes(50331648);
  ar.then = {CollectivePart{CollectiveKind::all_gather, inflect::core::Bytes(1e6 / 3.0), "ag"}};
  const std::uint32_t car = g.add_collective(ar);
  Collective send;
  send.name = "pp_send";
  send.kind = CollectiveKind::send_recv;
  send.dim = ParallelDim::pp;
  send.group = pair;
  send.bytes = inflect::core::Bytes(4194304);
  const std::uint32_t cs = g.add_collective(send);
  Collective bc;
  bc.name = "bcast";
  bc.kind = CollectiveKind::broadcast;
  bc.group = both;
  bc.bytes = inflect::core::Bytes(1024);
  const std::uint32_t cb = g.add_collective(bc);
  for (RankId r : {0, 1}) {
    const OpId base = static_cast<OpId>(g.ops().size());
    g.add_op(r, host, OpType::compute, kh, Phase::forward, -1, 0, {});
    const OpId h[] = {base};
    g.add_op(r, compute, OpType::compute, kg, Phase::forward, 3, 7, h);
    const OpId a[] = {static_cast<OpId>(base + 1)};
    g.add_op(r, comm, OpType::collective, car, Phase::backward, 3, 7, a);
    g.add_op(r, p2p, OpType::collective, cs, Phase::forward, 31, 65535, a);
    const OpId two[] = {static_cast<OpId>(base + 3), static_cast<OpId>(base + 1)};
    g.add_op(r, compute, OpType::compute, kb, Phase::optimizer, -1, 0, two);
    g.add_op(r, comm, OpType::collective, cb, Phase::optimizer, -1, 0, {});
  }
  g.facts().tokens_per_step = 4096;
  g.facts().micro_batches = 8;
  return g;
}

// Writes the export to dir (NAME.RANK.et) and dir/json (NAME.RANK.json).
void write_export(const ExecutionGraph& g, const fs::path& dir) {
  fs::create_directories(dir / "json");
  export_chakra(g, nullptr, [&](const ChakraRankTrace& t) {
    inflect::test::write_file(dir / fmt::format("g.{}.et", t.rank), t.et);
    inflect::test::write_file(dir / "json" / fmt::format("g.{}.json", t.rank), t.json);
  });
}

ImportedTrace import(const fs::path& p, bool retime = false) {
  TraceImportOptions o;
  o.retime = retime;
  return import_trace(TraceFormat::chakra, p.string(), o);
}

std::string error_of(const fs::path& p) {
  try {
    (void)import(p);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    return inflect::core::format_error(e);
  }
  FAIL("accepted a broken trace: " << p);
  return {};
}

// A Chakra file written with protobuf's own API, as Chakra's protolib writes them.
std::string et_file(const std::string& version, const std::vector<ChakraProtoMsg::Node>& nodes) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::CodedOutputStream s(&raw);
    ChakraProtoMsg::GlobalMetadata meta;
    meta.set_version(version);
    google::protobuf::util::SerializeDelimitedToCodedStream(meta, &s);
    for (const auto& n : nodes) google::protobuf::util::SerializeDelimitedToCodedStream(n, &s);
  }
  return out;
}

ChakraProtoMsg::Node comp(std::uint64_t id, std::uint64_t dur, std::vector<std::uint64_t> deps = {}) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name(fmt::format("k{}", id));
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(dur);
  for (auto d : deps) n.add_data_deps(d);
  auto* a = n.add_attr();
  a->set_name("is_cpu_op");
  a->set_bool_val(false);
  return n;
}

// The graph with every op's kernel or collective written in place: what the engine runs, whatever
// order the tables hold their entries in (an import builds them in first-use order).
std::string resolved(const ExecutionGraph& g) {
  std::string out = fmt::format("{} {} {}\n", g.name, g.total_ranks(), fmt::join(g.stream_names(), ","));
  const ExecutionGraph e = g.expanded();
  for (std::size_t i = 0; i < e.ops().size(); ++i) {
    const Op& op = e.ops()[i];
    out += fmt::format("{} {} {} {} {} {} [{}] ", op.rank, op.stream, static_cast<int>(op.phase), op.layer, op.micro_batch,
                       op.type == OpType::compute ? kernel_to_json(e.kernels()[op.payload]) : collective_to_json(e.collectives()[op.payload]),
                       fmt::join(e.deps(static_cast<OpId>(i)), ","));
    if (op.type == OpType::collective) out += fmt::format("{}", fmt::join(e.groups()[e.collectives()[op.payload].group].members, ","));
    out += "\n";
  }
  return out;
}

fs::path source(const std::string& rel) { return fs::path(INFLECT_SOURCE_DIR) / rel; }

}  // namespace

TEST_CASE("chakra: inflect's export reads back as the same graph, from .et and from JSON") {
  const ExecutionGraph g = two_rank_graph();
  g.validate();
  inflect::test::TempDir dir("chakra-roundtrip");
  write_export(g, dir.path);
  const std::string want = resolved(g);
  for (const fs::path& p : {dir.path, dir.path / "json"}) {
    CAPTURE(p);
    const ImportedTrace t = import(p);
    // the same ops, each the same kernel or collective on the same group, the same deps, streams,
    // groups and facts; the kernel table in first-use order (the host kernel comes first here)
    CHECK(resolved(t.graph) == want);
    CHECK(t.graph.groups().size() == g.groups().size());
    CHECK(t.graph.facts().micro_batches == g.facts().micro_batches);
    CHECK(t.graph.facts().tokens_per_step == g.facts().tokens_per_step);
    // and reading what was read gives the very same graph JSON
    inflect::test::TempDir again(fmt::format("chakra-roundtrip-{}", p.filename().string()));
    write_export(t.graph, again.path);
    CHECK(graph_to_json(import(again.path).graph) == graph_to_json(t.graph));
    CHECK(t.summary.rank_files == 2);
    CHECK(t.summary.ranks == 2);
    // 6 ops per rank, plus each file's process-group node
    CHECK(t.summary.nodes == 14);
  }
  // export -> import -> export writes the same bytes (nothing is lost or reordered)
  inflect::test::TempDir again("chakra-roundtrip-2");
  write_export(import(dir.path).graph, again.path);
  CHECK(inflect::test::read_file(again.path / "g.1.et") == inflect::test::read_file(dir.path / "g.1.et"));
  CHECK(inflect::test::read_file(again.path / "json" / "g.0.json") == inflect::test::read_file(dir.path / "json" / "g.0.json"));
}

// A graph JSON whose two ranks' ops interleave in the file (graph_from_json accepts it; a trace
// workload's graph reaches the exporter as read), and the same graph with each rank's ops together.
std::string small_graph_json(const std::string& ops) {
  return R"({"format":"inflect-exec-graph","version":1,
"name":"interleaved","total_ranks":2,"simulated_ranks":[0,1],"represents":[1,1],"streams":["compute","comm"],"meta":{},
"groups":[[[0,1],[]]],
"kernels":[["a","memory","bf16",0.0,1024.0,0,0,0,1],["b","memory","bf16",0.0,4096.0,0,0,0,1]],
"collectives":[["ar","all_reduce","dp",0,1048576.0]],
"ops":[)" + ops + "]}\n";
}

TEST_CASE("chakra: a graph whose ranks' ops interleave exports and reads back as the same graph") {
  // ops: [rank, stream, type, payload, phase, layer, micro_batch, deps...]. Rank 0: a, ar (after
  // a), b (after ar and a); rank 1: b, ar (after b), a (after ar). The ranks differ (a before b,
  // b before a), so neither is stored as the other's replica.
  const ExecutionGraph interleaved = graph_from_json(small_graph_json(R"(
[0,0,0,0,0,0,0],
[1,0,0,1,0,0,0],
[1,1,1,0,1,0,0,1],
[0,1,1,0,1,0,0,0],
[0,0,0,1,1,0,0,3,0],
[1,0,0,0,1,0,0,2])"),
                                                     "interleaved.json");
  const ExecutionGraph together = graph_from_json(small_graph_json(R"(
[0,0,0,0,0,0,0],
[0,1,1,0,1,0,0,0],
[0,0,0,1,1,0,0,1,0],
[1,0,0,1,0,0,0],
[1,1,1,0,1,0,0,3],
[1,0,0,0,1,0,0,4])"),
                                                  "together.json");
  REQUIRE(resolved(interleaved) != resolved(together));  // the file order differs ...
  inflect::test::TempDir dir("chakra-interleaved");
  write_export(interleaved, dir.path);
  // ... but each rank issues the same ops with the same deps: the trace holds that graph (an
  // import lists each rank's ops together).
  for (const fs::path& p : {dir.path, dir.path / "json"}) {
    CAPTURE(p);
    const ImportedTrace t = import(p);
    CHECK(resolved(t.graph) == resolved(together));
    CHECK(t.summary.nodes == 8);  // 3 ops per rank, plus each file's process-group node
  }
  // and the export is the one the graph with the ranks' ops together writes, byte for byte
  inflect::test::TempDir same("chakra-together");
  write_export(together, same.path);
  for (const char* f : {"g.0.et", "g.1.et", "json/g.0.json", "json/g.1.json"})
    CHECK(inflect::test::read_file(dir.path / f) == inflect::test::read_file(same.path / f));
}

TEST_CASE("chakra: ASTRA-sim's all-reduce microbenchmark is eight ranks of one 1 MiB all-reduce") {
  // examples/workload/microbenchmarks/all_reduce/8npus_1MB: each file one COMM_COLL_NODE,
  // comm_type ALL_REDUCE, comm_size 1 MiB (1048576), no pg_name: the world group.
  const ImportedTrace t = import(source("workloads/traces/chakra/astra-sim-all_reduce-8npus-1MB"));
  CHECK(t.summary.rank_files == 8);
  CHECK(t.summary.ranks == 8);
  CHECK(t.graph.op_count() == 8);
  REQUIRE(t.graph.collectives().size() == 1);
  CHECK(t.graph.collectives()[0].kind == CollectiveKind::all_reduce);
  CHECK(t.graph.collectives()[0].bytes.value() == 1048576.0);
  CHECK(t.graph.groups()[t.graph.collectives()[0].group].members.size() == 8);
  // every rank runs the same op on the same group: one stored rank, seven replicas
  CHECK(t.graph.replicas().size() == 7);
}

TEST_CASE("chakra: the all-to-all microbenchmark's comm_size is each rank's send buffer") {
  const ImportedTrace t = import(source("workloads/traces/chakra/astra-sim-all_to_all-8npus-1MB"));
  REQUIRE(t.graph.collectives().size() == 1);
  CHECK(t.graph.collectives()[0].kind == CollectiveKind::all_to_all);
  CHECK(t.graph.collectives()[0].bytes.value() == 1048576.0);
}

TEST_CASE("chakra: Chakra's feeder test trace, counted node by node") {
  // Counted in the file with protobuf's Python API (et_def_pb2, the types and is_cpu_op of its
  // 3,664 nodes): 2,434 CPU COMP nodes, 1,209 GPU COMP nodes, 14 CPU COMM_COLL nodes (the host
  // side, c10d::broadcast_ and allreduce_), 7 GPU COMM_COLL nodes: 2 BROADCAST, 5 ALL_REDUCE;
  // 3,664 control dependencies, 1,277 of them on nodes not in the file.
  const ImportedTrace t = import(source("workloads/traces/chakra/chakra-feeder-test-rank0"));
  const auto count = [](const NodeTally& n, const std::string& what) {
    for (const auto& [k, v] : n.counts)
      if (k == what) return v;
    return std::int64_t{0};
  };
  CHECK(t.summary.nodes == 3664);
  CHECK(count(t.summary.compute, "recorded: host op (is_cpu_op)") == 2434);
  CHECK(count(t.summary.compute, "recorded duration") == 1209);
  CHECK(count(t.summary.compute, "recorded: host side of a collective (is_cpu_op)") == 14);
  CHECK(count(t.summary.communication, "BROADCAST: simulated on the fabric") == 2);
  CHECK(count(t.summary.communication, "ALL_REDUCE: simulated on the fabric") == 5);
  CHECK(t.summary.other.total() == 3664);  // its control dependencies, none waited for
  CHECK(t.graph.op_count() == 3664);
  // --retime: the trace has no num_ops or tensor_size; two kernels are GEMMs called by aten::mm
  // and aten::addmm with their input shapes (the classifier of a ResNet: aten::mm(0), id 3215,
  // shapes [[32, 1000], [1000, 2048]], Tensor(float): sgemm_32x32x32_NN_vec), the other 1,207 keep
  // their recorded durations, and the summary says why.
  const ImportedTrace r = import(source("workloads/traces/chakra/chakra-feeder-test-rank0"), true);
  CHECK(count(r.summary.compute, "recorded: no num_ops or tensor_size, and no GEMM shapes on its calling op, to re-time") == 1207);
  CHECK(count(r.summary.compute, "re-timed: a GEMM from its calling op's input shapes (aten::mm, addmm, bmm, baddbmm, matmul, "
                                 "linear)") == 2);
  bool found = false;
  for (const Kernel& k : r.graph.kernels())
    if (k.name == "sgemm_32x32x32_NN_vec" && !k.recorded && k.cost.m == 32 && k.cost.n == 2048 && k.cost.k == 1000) {
      found = true;
      CHECK(k.cost.cls == inflect::core::KernelClass::gemm);
      CHECK(k.cost.precision == inflect::core::Precision::fp32);
      CHECK(k.cost.flops.value() == 2.0 * 32 * 2048 * 1000);  // 131,072,000
    }
  CHECK(found);
}

TEST_CASE("chakra: comm_size is each rank's input: an all-gather's buffer is comm_size times the group") {
  // Two ranks, each: an ALL_GATHER of comm_size 1024 on process group "7" of ranks {0, 1}, then a
  // REDUCE_SCATTER of 4096; rank 0 sends 512 bytes to rank 1. inflect's sizes are nccl-tests':
  // the all-gather moves the gathered 2 x 1024 = 2048 bytes, the reduce-scatter its 4096-byte
  // input, the send its 512.
  inflect::test::TempDir dir("chakra-sizes");
  for (int r = 0; r < 2; ++r) {
    ChakraProtoMsg::Node pg;
    pg.set_id(100);
    pg.set_name("## process_group:init ##");
    pg.set_type(ChakraProtoMsg::METADATA_NODE);
    pg.mutable_inputs()->set_values(R"(['[{"pg_name": "7", "ranks": [0, 1], "group_size": 2}]'])");
    auto coll = [&](std::uint64_t id, int type, std::int64_t size, std::vector<std::uint64_t> deps) {
      auto n = comp(id, 1, std::move(deps));
      n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      for (auto [name, v] : {std::pair<const char*, std::int64_t>{"comm_type", type}, {"comm_size", size}}) {
        auto* a = n.add_attr();
        a->set_name(name);
        a->set_int64_val(v);
      }
      auto* g = n.add_attr();
      g->set_name("pg_name");
      g->set_string_val("7");
      return n;
    };
    auto p2p = comp(3, 1, {2});
    p2p.set_type(r == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
    for (auto [name, v] : {std::pair<const char*, std::int64_t>{"comm_src", 0}, {"comm_dst", 1}, {"comm_size", 512}}) {
      auto* a = p2p.add_attr();
      a->set_name(name);
      a->set_int32_val(static_cast<std::int32_t>(v));
    }
    inflect::test::write_file(dir.path / fmt::format("t.{}.et", r),
                              et_file("1.0.0", {pg, coll(1, ChakraProtoMsg::ALL_GATHER, 1024, {}),
                                                coll(2, ChakraProtoMsg::REDUCE_SCATTER, 4096, {1}), p2p}));
  }
  const ImportedTrace t = import(dir.path);
  REQUIRE(t.graph.collectives().size() == 3);
  CHECK(t.graph.collectives()[0].kind == CollectiveKind::all_gather);
  CHECK(t.graph.collectives()[0].bytes.value() == 2048.0);
  CHECK(t.graph.collectives()[1].kind == CollectiveKind::reduce_scatter);
  CHECK(t.graph.collectives()[1].bytes.value() == 4096.0);
  CHECK(t.graph.collectives()[2].kind == CollectiveKind::send_recv);
  CHECK(t.graph.collectives()[2].bytes.value() == 512.0);
  CHECK(t.graph.groups()[t.graph.collectives()[2].group].members == std::vector<RankId>{0, 1});
  // the process group's node is no op: 3 ops per rank
  CHECK(t.graph.op_count() == 6);
}

TEST_CASE("chakra: --retime times a node from num_ops and tensor_size, and only such a node") {
  inflect::test::TempDir dir("chakra-retime");
  auto k0 = comp(0, 500);
  auto k1 = comp(1, 700, {0});
  auto* ops = k1.add_attr();
  ops->set_name("num_ops");
  ops->set_int64_val(2'000'000'000);
  auto* bytes = k1.add_attr();
  bytes->set_name("tensor_size");
  bytes->set_uint64_val(4'000'000);
  inflect::test::write_file(dir.path / "t.0.et", et_file("1.0.0", {k0, k1}));
  const ImportedTrace kept = import(dir.path);
  REQUIRE(kept.graph.kernels().size() == 2);
  CHECK(kept.graph.kernels()[1].recorded == inflect::core::Time::ps(700'000'000));
  const ImportedTrace re = import(dir.path, true);
  CHECK(re.graph.kernels()[0].recorded == inflect::core::Time::ps(500'000'000));
  CHECK_FALSE(re.graph.kernels()[1].recorded);
  CHECK(re.graph.kernels()[1].cost.flops.value() == 2e9);
  CHECK(re.graph.kernels()[1].cost.bytes.value() == 4e6);
}

TEST_CASE("chakra: broken and hostile traces are input errors naming the file and the node") {
  inflect::test::TempDir dir("chakra-errors");
  auto write = [&](const std::string& name, const std::string& bytes) {
    const fs::path p = dir.path / name;
    fs::create_directories(p);
    inflect::test::write_file(p / "t.0.et", bytes);
    return p;
  };
  // a cycle in the data dependencies: k0 waits for k1 which waits for k0
  CHECK(error_of(write("cycle", et_file("1.0.0", {comp(0, 1, {1}), comp(1, 1, {0})})))
            .find("the dependencies form a cycle") != std::string::npos);
  // a data dependency on a node the file does not have
  CHECK(error_of(write("dangling", et_file("1.0.0", {comp(0, 1, {42})}))).find("data dependency on node id 42") != std::string::npos);
  // an unknown version, and a node type of the storage extension this schema does not have
  CHECK(error_of(write("version", et_file("2.0.0", {comp(0, 1)}))).find("Chakra version '2.0.0'") != std::string::npos);
  auto storage = comp(0, 1);
  storage.set_type(static_cast<ChakraProtoMsg::NodeType>(8));
  CHECK(error_of(write("storage", et_file("1.0.0", {storage}))).find("node type 8") != std::string::npos);
  // a truncated file: the last node cut in half
  const std::string whole = et_file("1.0.0", {comp(0, 1), comp(1, 1, {0})});
  CHECK(error_of(write("truncated", whole.substr(0, whole.size() - 3))).find("truncated or corrupt") != std::string::npos);
  // not a Chakra file at all
  CHECK(error_of(write("garbage", std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11))).find("t.0.et") != std::string::npos);
  // durations and sizes that overflow
  CHECK(error_of(write("long", et_file("1.0.0", {comp(0, 100'000'000'000'000ULL)}))).find("duration_micros") != std::string::npos);
  auto huge = comp(0, 1);
  huge.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  for (auto [name, v] : {std::pair<const char*, std::int64_t>{"comm_type", 0}, {"comm_size", INT64_MAX}}) {
    auto* a = huge.add_attr();
    a->set_name(name);
    a->set_int64_val(v);
  }
  CHECK(error_of(write("huge", et_file("1.0.0", {huge}))).find("comm_size") != std::string::npos);
  // a collective without comm_size, and one inflect does not model
  auto bare = comp(0, 1);
  bare.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  auto* ct = bare.add_attr();
  ct->set_name("comm_type");
  ct->set_int64_val(ChakraProtoMsg::GATHER);
  CHECK(error_of(write("bare", et_file("1.0.0", {bare}))).find("needs comm_size") != std::string::npos);
  auto* cs = bare.add_attr();
  cs->set_name("comm_size");
  cs->set_int64_val(64);
  CHECK(error_of(write("gather", et_file("1.0.0", {bare}))).find("GATHER") != std::string::npos);
  // an attribute of the wrong kind names the node and the attribute
  auto typed = comp(0, 1);
  auto* bad = typed.add_attr();
  bad->set_name("num_ops");
  bad->set_string_val("many");
  CHECK(error_of(write("typed", et_file("1.0.0", {typed}))).find("attribute 'num_ops' must be an integer") != std::string::npos);
  // more streams than an op's byte holds: 256 nodes on 256 streams named by inflect_stream (an
  // input error naming the node that brings the 256th, not an internal one)
  std::vector<ChakraProtoMsg::Node> spread;
  for (std::uint64_t i = 0; i < 256; ++i) {
    auto n = comp(i, 1);
    auto* st = n.add_attr();
    st->set_name("inflect_stream");
    st->set_string_val(fmt::format("s{}", i));
    spread.push_back(n);
  }
  CHECK(error_of(write("streams", et_file("1.0.0", spread))).find("node 255 (id 255, 'k255'): stream 's255' would be the 256th") !=
        std::string::npos);
  // a missing rank: files for ranks 0 and 2 of a 3-rank job
  const fs::path gap = dir.path / "gap";
  fs::create_directories(gap);
  inflect::test::write_file(gap / "t.0.et", et_file("1.0.0", {comp(0, 1)}));
  inflect::test::write_file(gap / "t.2.et", et_file("1.0.0", {comp(0, 1)}));
  CHECK(error_of(gap).find("no file for rank 1") != std::string::npos);
}
