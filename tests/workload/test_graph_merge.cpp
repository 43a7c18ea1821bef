// workload::merge_graphs: several jobs' graphs as one over a shared cluster (analysis/jobs).
#include <doctest/doctest.h>

#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/workload/graph_merge.hpp"

using namespace inflect;
using workload::CollectiveKind;
using workload::ExecutionGraph;
using workload::GraphPart;
using workload::OpId;
using workload::OpType;
using workload::ParallelDim;
using workload::Phase;

namespace {

// A job of two ranks: each runs a kernel, then an all-reduce of `bytes` on {0, 1} that depends on
// it. `stream` names the collective's stream (two jobs may name theirs differently).
ExecutionGraph job(double bytes, const char* stream, const char* kernel) {
  ExecutionGraph g;
  const auto comp = g.stream("compute");
  const auto comm = g.stream(stream);
  core::KernelCost c;
  c.cls = core::KernelClass::memory;
  c.bytes = core::Bytes(1e6);
  const auto k = g.add_kernel(workload::Kernel{kernel, c, {}});
  const auto grp = g.add_group(workload::Group{{0, 1}, {}});
  const auto ar = g.add_collective(workload::Collective{CollectiveKind::all_reduce, ParallelDim::dp, grp, core::Bytes(bytes), "ar"});
  for (int r = 0; r < 2; ++r) {
    const OpId first = g.add_op(r, comp, OpType::compute, k, Phase::backward, 3, 1, {});
    const std::vector<OpId> d{first};
    g.add_op(r, comm, OpType::collective, ar, Phase::backward, 3, 1, d);
    g.end_rank(r);
  }
  g.set_ranks(2, {0, 1}, {1, 1});
  return g;
}

// Every op of the graph, written out with its deps, as (rank, stream name, type, payload name,
// dep positions in the rank): what must survive a merge.
struct Flat {
  int rank;
  std::string stream, what;
  std::vector<workload::RankId> group;
  std::size_t deps;
  bool operator==(const Flat&) const = default;
};
std::vector<Flat> flat(const ExecutionGraph& g, workload::RankId rank) {
  std::vector<Flat> out;
  for (OpId id = 0; id < g.op_count(); ++id) {
    const workload::Op o = g.op(id);
    if (o.rank != rank) continue;
    Flat f{o.rank, g.stream_names()[o.stream], "", {}, g.op_deps(id).size()};
    if (o.type == OpType::compute) f.what = g.kernels()[o.payload].name;
    else {
      const auto& c = g.collectives()[o.payload];
      f.what = c.name + std::to_string(c.bytes.value());
      f.group = g.groups()[c.group].members;
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace

TEST_CASE("merge_graphs: each job's ranks become its devices and unused devices are idle") {
  const ExecutionGraph a = job(1e9, "dp", "ka");
  const ExecutionGraph b = job(2e9, "dp_b", "kb");
  // 8 devices: job a on {5, 1}, job b on {2, 6}; 0, 3, 4 and 7 idle.
  const std::vector<GraphPart> parts = {{&a, {5, 1}}, {&b, {2, 6}}};
  const ExecutionGraph m = workload::merge_graphs(parts, 8, "both");
  CHECK(m.total_ranks() == 8);
  CHECK(m.simulated_ranks() == std::vector<workload::RankId>{1, 2, 5, 6});
  CHECK(m.represents() == std::vector<std::uint32_t>{1, 1, 1, 1});
  CHECK(m.op_count() == a.op_count() + b.op_count());
  CHECK(m.stream_names() == std::vector<std::string>{"compute", "dp", "dp_b"});
  // Device 5 runs job a's rank 0: a's kernel, then a's all-reduce on {5, 1}, after the kernel.
  const std::vector<Flat> d5 = flat(m, 5);
  REQUIRE(d5.size() == 2);
  CHECK(d5[0] == Flat{5, "compute", "ka", {}, 0});
  CHECK(d5[1] == Flat{5, "dp", "ar1000000000.000000", {5, 1}, 1});
  CHECK(flat(m, 6)[1] == Flat{6, "dp_b", "ar2000000000.000000", {2, 6}, 1});
  CHECK(flat(m, 0).empty());
  // Layers, phases and micro-batches are kept.
  for (OpId id = 0; id < m.op_count(); ++id) {
    CHECK(m.op(id).layer == 3);
    CHECK(m.op(id).micro_batch == 1);
    CHECK(m.op(id).phase == Phase::backward);
  }
  // Copies are stored once, as in any graph: device 1 copies device 5 (the same job, same group).
  CHECK(m.kept_ranks().size() == 2);
  CHECK(m.replicas().size() == 2);
  CHECK(m.facts().tokens_per_step == std::nullopt);
}

TEST_CASE("merge_graphs: one part alone is the job on its devices") {
  const ExecutionGraph a = job(1e9, "dp", "ka");
  const std::vector<GraphPart> parts = {{&a, {3, 0}}};
  const ExecutionGraph m = workload::merge_graphs(parts, 4, "a");
  CHECK(m.simulated_ranks() == std::vector<workload::RankId>{0, 3});
  CHECK(flat(m, 3)[1].group == std::vector<workload::RankId>{3, 0});
}

TEST_CASE("merge_graphs: refuses devices shared, out of range or not one per rank") {
  const ExecutionGraph a = job(1e9, "dp", "ka");
  const ExecutionGraph b = job(1e9, "dp", "kb");
  const std::vector<GraphPart> shared = {{&a, {0, 1}}, {&b, {1, 2}}};
  CHECK_THROWS_WITH_AS(workload::merge_graphs(shared, 4, "x"), doctest::Contains("device 1 holds a rank of job 0 and of job 1"),
                       core::Error);
  const std::vector<GraphPart> outside = {{&a, {0, 4}}};
  CHECK_THROWS_WITH_AS(workload::merge_graphs(outside, 4, "x"), doctest::Contains("on device 4 of 4"), core::Error);
  const std::vector<GraphPart> short_list = {{&a, {0}}};
  CHECK_THROWS_WITH_AS(workload::merge_graphs(short_list, 4, "x"), doctest::Contains("has 2 ranks but 1 devices"), core::Error);
}
