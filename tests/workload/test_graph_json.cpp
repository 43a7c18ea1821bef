#include <doctest/doctest.h>

#include <string>

#include "inflect/core/error.hpp"
#include "inflect/workload/exec_graph.hpp"
#include "inflect/workload/graph_json.hpp"

using namespace inflect::workload;
using inflect::core::Error;
using inflect::core::ErrorKind;

namespace {

// Two ranks, each: a GEMM (fwd), then an all-reduce over both (bwd) that waits on it, then an
// attention kernel on the same stream. One group with a mirror, odd doubles and an escaped name.
ExecutionGraph small_graph() {
  ExecutionGraph g;
  g.name = "tiny \"graph\"";
  g.set_ranks(4, {0, 1}, {2, 2});
  std::uint8_t compute = g.stream("compute");
  std::uint8_t comm = g.stream("comm");
  Kernel gemm;
  gemm.name = "qkv_proj";
  gemm.cost.cls = inflect::core::KernelClass::gemm;
  gemm.cost.flops = inflect::core::Flops(2.0 * 2048 * 3072 * 1024);
  gemm.cost.bytes = inflect::core::Bytes(0.1);
  gemm.cost.m = 2048;
  gemm.cost.n = 3072;
  gemm.cost.k = 1024;
  std::uint32_t kg = g.add_kernel(gemm);
  Kernel attn;
  attn.name = "attn_core";
  attn.cost.cls = inflect::core::KernelClass::attention;
  attn.cost.precision = inflect::core::Precision::fp8;
  attn.cost.flops = inflect::core::Flops(1.0 / 3.0);
  attn.cost.bytes = inflect::core::Bytes(1e15 / 3.0);  // within the 1 PB bound, all 17 digits
  std::uint32_t ka = g.add_kernel(attn);
  GroupId grp = g.add_group(Group{{0, 1}, {{2, 3}}});
  Collective ar;
  ar.kind = CollectiveKind::all_reduce;
  ar.dim = ParallelDim::tp;
  ar.group = grp;
  ar.bytes = inflect::core::Bytes(50331648);
  ar.name = "tp_ar";
  std::uint32_t c = g.add_collective(ar);
  for (RankId r : {0, 1}) {
    OpId a = g.add_op(r, compute, OpType::compute, kg, Phase::forward, 0, 3, {});
    OpId deps[] = {a};
    OpId b = g.add_op(r, comm, OpType::collective, c, Phase::backward, 0, 3, deps);
    OpId deps2[] = {a, b};
    g.add_op(r, compute, OpType::compute, ka, Phase::recompute, -1, 65535, deps2);
  }
  g.facts().tokens_per_step = 4096;
  g.facts().model_flops_per_step = inflect::core::Flops(1.5e18);
  return g;
}

// Replaces the first occurrence of `from` in `s` (which must be present).
std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return s.replace(at, from.size(), to);
}

void expect_input_error(const std::string& text, const std::string& fragment) {
  try {
    graph_from_json(text, "bad.json");
    FAIL("accepted a corrupt graph; expected: " << fragment);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    CHECK(e.where().file == "bad.json");
    std::string full = inflect::core::format_error(e);
    CHECK_MESSAGE(full.find(fragment) != std::string::npos, full);
  }
}

}  // namespace

TEST_CASE("graph JSON round trip is byte-identical") {
  // Writing, reading and writing again must give the same text, and the values must survive:
  // 1/3 and 1e15/3 need all 17 significant digits, which nlohmann's shortest form keeps.
  ExecutionGraph g = small_graph();
  std::string a = graph_to_json(g);
  ExecutionGraph back = graph_from_json(a, "tiny.json");
  std::string b = graph_to_json(back);
  CHECK(a == b);
  CHECK(back.name == g.name);
  // rank 1 copies rank 0 (on the same group): stored as its replica, its ops ids 3-5
  CHECK(back.op_count() == 6);
  CHECK(back.replicas().size() == 1);
  CHECK(back.op_deps(5).size() == 2);
  CHECK(back.op_deps(5)[1] == 4);
  CHECK(back.kernels()[1].cost.flops.value() == 1.0 / 3.0);
  CHECK(back.kernels()[1].cost.precision == inflect::core::Precision::fp8);
  CHECK(back.groups()[0].mirrors[0] == std::vector<RankId>{2, 3});
  CHECK(back.ops()[2].micro_batch == 65535);
  CHECK(back.ops()[2].layer == -1);
  CHECK(back.facts().model_flops_per_step.value().value() == 1.5e18);
  CHECK(back.facts().tokens_per_step == 4096);
  // A fact the graph does not carry stays unknown (no 0 read in its place), and is not written.
  CHECK_FALSE(back.facts().memory_peak.has_value());
  CHECK_FALSE(back.facts().micro_batches.has_value());
  CHECK(a.find("\"meta\":{\"model_flops_per_step\":1.5e+18,\"tokens_per_step\":4096.0}") != std::string::npos);
  CHECK(back.represents() == std::vector<std::uint32_t>{2, 2});
  // Deterministic: the same graph twice gives the same bytes.
  CHECK(graph_to_json(small_graph()) == a);
}

TEST_CASE("a fused collective's followers survive export and import") {
  ExecutionGraph g = small_graph();
  Collective fused = g.collectives()[0];
  fused.name = "tp_rs+tp_ag";
  fused.kind = CollectiveKind::reduce_scatter;
  fused.then.push_back(CollectivePart{CollectiveKind::all_gather, inflect::core::Bytes(1.0 / 3.0), "tp_ag"});
  g.add_collective(fused);
  const std::string text = graph_to_json(g);
  const ExecutionGraph back = graph_from_json(text, "fused.json");
  REQUIRE(back.collectives().size() == 2);
  CHECK(same_call(back.collectives()[1], fused));
  CHECK(back.collectives()[0].then.empty());
  CHECK(graph_to_json(back) == text);
}

TEST_CASE("corrupt graph JSON is an input error naming the field") {
  const std::string good = graph_to_json(small_graph());
  SUBCASE("not JSON") { expect_input_error("{\"format\": ", "not valid JSON"); }
  SUBCASE("not an object") { expect_input_error("[1,2]", "expected a JSON object"); }
  SUBCASE("missing field") { expect_input_error(replace(good, "\"total_ranks\":4,", ""), "total_ranks: missing required key"); }
  SUBCASE("unknown key with a suggestion") {
    expect_input_error(replace(good, "\"streams\"", "\"stream\""), "did you mean 'streams'");
  }
  SUBCASE("wrong type") { expect_input_error(replace(good, "\"total_ranks\":4", "\"total_ranks\":\"4\""), "total_ranks: expected an integer, got a string"); }
  SUBCASE("wrong format tag") { expect_input_error(replace(good, "inflect-exec-graph", "chakra"), "is not an execution graph"); }
  SUBCASE("dep index out of range") {
    // The last op is [1,0,0,1,2,-1,65535,3,4]: point a dep at op 99, which is not earlier.
    expect_input_error(replace(good, "65535,3,4]", "65535,3,99]"), "ops[5].deps[1] (an earlier op): 99 is out of range [0, 4]");
  }
  SUBCASE("kernel with a missing field") {
    expect_input_error(replace(good, ",2048,3072,1024,1]", ",2048,3072,1024]"), "kernels[0]: expected 9 fields (10 with the parts of a fused block, 11 with a recorded duration), got 8");
  }
  SUBCASE("bad kernel class") { expect_input_error(replace(good, "\"gemm\"", "\"gem\""), "did you mean 'gemm'"); }
  SUBCASE("negative bytes") { expect_input_error(replace(good, ",0.1,", ",-0.1,"), "kernels[0].bytes: -0.1 must be a finite number >= 0"); }
  SUBCASE("payload out of range") { expect_input_error(replace(good, "[0,0,0,0,0,0,3]", "[0,0,0,7,0,0,3]"), "ops[0].payload: 7 is out of range [0, 1]"); }
  SUBCASE("rank out of range") { expect_input_error(replace(good, "[0,0,0,0,0,0,3]", "[9,0,0,0,0,0,3]"), "ops[0].rank: 9 is out of range [0, 3]"); }
  SUBCASE("op on a rank that is not simulated (graph validation)") {
    expect_input_error(replace(good, "[0,0,0,0,0,0,3]", "[3,0,0,0,0,0,3]"), "not simulated");
  }
  SUBCASE("collective names a missing group") { expect_input_error(replace(good, "\"tp\",0,", "\"tp\",5,"), "group 5 does not exist"); }
  SUBCASE("fused collective: empty or malformed followers") {
    // The all-reduce's entry is ["tp_ar","all_reduce","tp",0,50331648]; a sixth field lists what
    // it runs after itself as [name, kind, bytes].
    expect_input_error(replace(good, "\"tp\",0,50331648.0]", "\"tp\",0,50331648.0,[]]"), "collectives[0].then: a collective's list");
    expect_input_error(replace(good, "\"tp\",0,50331648.0]", "\"tp\",0,50331648.0,[[\"ag\",\"all_gather\"]]]"),
                       "collectives[0].then[0]: expected 3 fields, got 2");
    expect_input_error(replace(good, "\"tp\",0,50331648.0]", "\"tp\",0,50331648.0,[[\"ag\",\"al_gather\",1]]]"),
                       "did you mean 'all_gather'");
    expect_input_error(replace(good, "\"tp\",0,50331648.0]", "\"tp\",0,50331648.0,[],1]"), "collectives[0]: expected 5 fields (6 with");
  }
  SUBCASE("meta: an unknown figure, a negative one, a fractional micro-batch count") {
    expect_input_error(replace(good, "\"tokens_per_step\"", "\"tokens_per_stp\""), "meta.tokens_per_stp: unknown figure 'tokens_per_stp' (did you mean 'tokens_per_step'?)");
    expect_input_error(replace(good, "\"tokens_per_step\":4096.0", "\"tokens_per_step\":-1"), "meta.tokens_per_step: -1 must be a finite number >= 0");
    expect_input_error(replace(good, "\"tokens_per_step\":4096.0", "\"micro_batches\":2.5"), "meta.micro_batches: 2.5 is not a whole number >= 1");
  }
  SUBCASE("figures past any hardware or model: a kernel of 1e308 FLOPs, absurd meta figures") {
    // 1e308 FLOPs took 1e293 s even at 1 EFLOP/s: simulated time overflowed and the run said
    // "deadlock"; meta figures of 1e308 gave "MFU inf %". The bounds are graph_json.cpp's kMax*.
    // The GEMM's 2 x 2048 x 3072 x 1024 = 12884901888 FLOPs, as the writer spells them.
    expect_input_error(replace(good, "12884901888.0", "1e308"),
                       "kernels[0].flops: 1e+308 is out of range; at most 1e+20");
    expect_input_error(replace(good, "\"tokens_per_step\":4096.0", "\"tokens_per_step\":1e308"), "meta.tokens_per_step: 1e+308 is out of range; at most 1e+12");
    expect_input_error(replace(good, "\"tokens_per_step\":4096.0", "\"model_flops_per_step\":1e30"), "meta.model_flops_per_step: 1e+30 is out of range; at most 1e+27");
    expect_input_error(replace(good, "\"tokens_per_step\":4096.0", "\"memory_peak_bytes\":1e16"), "meta.memory_peak_bytes: 1e+16 is out of range; at most 1e+15");
  }
  SUBCASE("a GEMM whose FLOPs are not its shape's 2 m n k batch") {
    // 2 x 2048 x 3072 x 1024 = 12884901888; 1.3e10 is 0.9% over (a rounding tool, accepted), 1.4e10 is 8.7% over.
    CHECK_NOTHROW((void)graph_from_json(replace(good, "12884901888.0", "1.3e10"), "g.json"));
    expect_input_error(replace(good, "12884901888.0", "1.4e10"),
                       "kernels[0].flops: 1.4e+10 FLOPs, but a GEMM of m=2048, n=3072, k=1024, batch=1 does 2*m*n*k*batch = 1.28849e+10");
    // A shape of 0 is unknown: any FLOPs.
    CHECK_NOTHROW((void)graph_from_json(replace(replace(good, "12884901888.0", "1.4e10"), ",2048,3072,1024,1]", ",0,0,0,1]"), "g.json"));
  }
  SUBCASE("duplicate stream") { expect_input_error(replace(good, "[\"compute\",\"comm\"]", "[\"comm\",\"comm\"]"), "listed twice"); }
  SUBCASE("huge integer") { expect_input_error(replace(good, "\"total_ranks\":4", "\"total_ranks\":18446744073709551615"), "out of range"); }
}

TEST_CASE("every truncation of a graph file is an input error, never a crash") {
  // A cut anywhere leaves unbalanced brackets, so each prefix must be rejected by the parser.
  const std::string good = graph_to_json(small_graph());
  int rejected = 0;
  for (std::size_t n = 0; n + 2 < good.size(); ++n) {
    try {
      graph_from_json(good.substr(0, n), "cut.json");
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::input) ++rejected;
    }
  }
  CHECK(rejected == static_cast<int>(good.size()) - 2);
}

TEST_CASE("broadcast and reduce survive export and import, by name, bytes and root") {
  // A trace's DDP parameter broadcast and a reduce (Chakra comm_type BROADCAST, REDUCE): written by
  // the names to_string gives them, read back as the same kinds with the same bytes (an odd size,
  // so all 17 digits must survive) and the same group order (members[0] is the root).
  ExecutionGraph g = small_graph();
  const GroupId rooted = g.add_group(Group{{1, 0}, {{3, 2}}});
  Collective bc = g.collectives()[0];
  bc.kind = CollectiveKind::broadcast;
  bc.dim = ParallelDim::dp;
  bc.group = rooted;
  bc.bytes = inflect::core::Bytes(1e9 / 3.0);
  bc.name = "ddp_param_broadcast";
  Collective rd = bc;
  rd.kind = CollectiveKind::reduce;
  rd.name = "reduce_to_root";
  rd.then.push_back(CollectivePart{CollectiveKind::broadcast, inflect::core::Bytes(4096), "bcast_back"});
  g.add_collective(bc);
  g.add_collective(rd);
  CHECK(std::string(to_string(CollectiveKind::broadcast)) == "broadcast");
  CHECK(std::string(to_string(CollectiveKind::reduce)) == "reduce");
  const std::string text = graph_to_json(g);
  CHECK(text.find("[\"ddp_param_broadcast\",\"broadcast\",\"dp\"") != std::string::npos);
  CHECK(text.find("[\"reduce_to_root\",\"reduce\",\"dp\"") != std::string::npos);
  const ExecutionGraph back = graph_from_json(text, "rooted.json");
  REQUIRE(back.collectives().size() == 3);
  CHECK(back.collectives()[1].kind == CollectiveKind::broadcast);
  CHECK(back.collectives()[1].bytes.value() == 1e9 / 3.0);
  CHECK(same_call(back.collectives()[1], bc));
  CHECK(back.collectives()[2].kind == CollectiveKind::reduce);
  CHECK(same_call(back.collectives()[2], rd));
  CHECK(back.groups()[rooted].members == std::vector<RankId>{1, 0});
  CHECK(graph_to_json(back) == text);
  // An unknown kind still names every allowed one, the new ones included.
  expect_input_error(replace(text, "\"reduce_to_root\",\"reduce\"", "\"reduce_to_root\",\"gather\""), "broadcast, reduce");
}
