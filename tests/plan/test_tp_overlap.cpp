// Transformer Engine's TP communication overlap (parallel.tp_comm_overlap) in the compiled graph:
// the sequence-parallel all-gathers become ring exchanges of tp shards under tp row slices of the
// GEMM that reads them, the forward reduce-scatters pieces behind row slices of the GEMM that
// writes them; the slices add up to the same FLOPs; TE's userbuffers are counted in memory.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "inflect/core/error.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/memory.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

namespace {

// The GPT toy (h = 1024, 8 layers, seq 1024, micro-batch 1: T = 1024 tokens per micro-batch) on
// tp2 pp2 dp2 with sequence parallelism, no recomputation.
plan::Experiment overlap_experiment(bool overlap) {
  plan::Experiment e = test::toy_gpt_experiment();
  e.parallel.sequence_parallel = true;
  e.parallel.recompute = plan::Recompute::none;
  e.parallel.tp_comm_overlap = overlap;
  return e;
}

double total_flops(const plan::CompiledPlan& c) {
  double f = 0;
  for (const auto& op : c.graph.ops())
    if (op.type == workload::OpType::compute) f += c.graph.kernels()[op.payload].cost.flops.value();
  return f;
}

}  // namespace

TEST_CASE("tp_comm_overlap: a layer's forward has tp ring hops under tp GEMM slices of M/tp rows, and pipelined reduce-scatter pieces") {
  const plan::CompiledPlan c = plan::compile(overlap_experiment(true));
  const auto& g = c.graph;
  const double tb = 1024.0 * 1024 * 2;  // T x h x 2 bytes: the block boundary tensor
  // Rank 0 (stage 0), layer 0, micro-batch 0, forward.
  std::map<std::string, int> colls, slices;
  std::map<std::string, std::int64_t> rows;
  for (const auto& op : g.ops()) {
    if (op.rank != 0 || op.layer != 0 || op.micro_batch != 0 || op.phase != workload::Phase::forward) continue;
    if (op.type == workload::OpType::collective) {
      const auto& coll = g.collectives()[op.payload];
      CHECK(coll.dim == workload::ParallelDim::tp);
      CHECK(coll.kind != workload::CollectiveKind::all_gather);  // every gather is a ring exchange
      ++colls[coll.name];
      if (coll.kind == workload::CollectiveKind::send_recv) {
        CHECK(coll.bytes.value() == doctest::Approx(tb / 2));  // one shard per hop
        CHECK(g.groups()[coll.group].members.size() == 2);
      } else {
        CHECK(coll.kind == workload::CollectiveKind::reduce_scatter);
        CHECK(coll.bytes.value() == doctest::Approx(tb / 4));  // TE's 4 pipeline splits
      }
    } else {
      const auto& k = g.kernels()[op.payload];
      if (k.name.find("_slice") == std::string::npos) continue;
      ++slices[k.name];
      rows[k.name] = k.parts.empty() ? k.cost.m : k.parts.front().m;
    }
  }
  // tp = 2: one hop per gather (tp - 1), two GEMM slices of 1024/2 rows; four RS pieces behind
  // four slices of 1024/4 rows.
  CHECK(colls["tp_ag_attn_ring"] == 1);
  CHECK(colls["tp_ag_mlp_ring"] == 1);
  CHECK(colls["tp_rs_attn_piece"] == 4);
  CHECK(colls["tp_rs_mlp_piece"] == 4);
  CHECK(slices["attn_fwd_gather_slice"] == 2);
  CHECK(slices["mlp_fwd_gather_slice"] == 2);
  CHECK(slices["attn_fwd_scatter_slice"] == 4);
  CHECK(slices["mlp_fwd_scatter_slice"] == 4);
  CHECK(rows["attn_fwd_gather_slice"] == 512);
  CHECK(rows["mlp_fwd_gather_slice"] == 512);
  CHECK(rows["attn_fwd_scatter_slice"] == 256);
  CHECK(rows["mlp_fwd_scatter_slice"] == 256);
  CHECK(c.summary.find("sp tp-overlap") != std::string::npos);
}

TEST_CASE("tp_comm_overlap: backward gathers by ring under input-gradient slices, the reduce-scatter runs beside the weight gradient") {
  const plan::CompiledPlan c = plan::compile(overlap_experiment(true));
  const auto& g = c.graph;
  int hops = 0, rs = 0, rs_side = 0;
  for (std::size_t i = 0; i < g.ops().size(); ++i) {
    const auto& op = g.ops()[i];
    if (op.rank != 0 || op.layer != 0 || op.micro_batch != 0 || op.phase != workload::Phase::backward) continue;
    if (op.type != workload::OpType::collective) continue;
    const auto& coll = g.collectives()[op.payload];
    if (coll.dim != workload::ParallelDim::tp) continue;
    CHECK(coll.kind != workload::CollectiveKind::all_gather);
    if (coll.kind == workload::CollectiveKind::send_recv) ++hops;
    if (coll.kind == workload::CollectiveKind::reduce_scatter) {
      ++rs;
      // The next compute op on the rank is the weight-gradient GEMM, which does not wait for it.
      for (std::size_t j = i + 1; j < g.ops().size(); ++j) {
        const auto& nx = g.ops()[j];
        if (nx.rank != 0 || nx.type != workload::OpType::compute) continue;
        const std::string& name = g.kernels()[nx.payload].name;
        CHECK(name.find("_beside") != std::string::npos);
        bool waits = false;
        for (auto d : g.deps(static_cast<workload::OpId>(j)))
          if (d == static_cast<workload::OpId>(i)) waits = true;
        if (!waits) ++rs_side;
        break;
      }
    }
  }
  CHECK(hops == 2);    // one per block at tp = 2
  CHECK(rs == 2);      // one full reduce-scatter per block
  CHECK(rs_side == 2);
}

TEST_CASE("tp_comm_overlap: the slices add up to the same FLOPs, memory adds TE's ten userbuffers") {
  const plan::CompiledPlan on = plan::compile(overlap_experiment(true));
  const plan::CompiledPlan off = plan::compile(overlap_experiment(false));
  CHECK(total_flops(on) == doctest::Approx(total_flops(off)).epsilon(1e-12));
  CHECK(on.graph.ops().size() > off.graph.ops().size());
  // Ten buffers of [s*b/cp, h] = 1024 x 1024 bf16 = 2 MiB each, on every stage.
  const plan::MemoryEstimate mon = plan::estimate_memory(overlap_experiment(true), 2);
  const plan::MemoryEstimate moff = plan::estimate_memory(overlap_experiment(false), 2);
  for (std::size_t s = 0; s < mon.stages.size(); ++s)
    CHECK(mon.stages[s].buffers.value() - moff.stages[s].buffers.value() == doctest::Approx(10.0 * 1024 * 1024 * 2));
}

TEST_CASE("tp_comm_overlap needs tp > 1 and sequence parallelism") {
  plan::Experiment e = overlap_experiment(true);
  e.parallel.sequence_parallel = false;
  try {
    (void)plan::compile(e);
    FAIL("compiled without sequence parallelism");
  } catch (const core::Error& err) {
    CHECK(err.where().key_path == "parallel.tp_comm_overlap");
  }
}
