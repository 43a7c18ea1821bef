// DiLoCo's plan side (training.diloco; plan/diloco.hpp): workers as contiguous groups of dp/K
// ranks, every data-parallel group inside one, the outer all-reduce on the K ranks that hold the
// same shard, the steps the compiler builds, the memory and the rules.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "inflect/plan/compiler.hpp"
#include "inflect/plan/diloco.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/plan/plan_summary.hpp"
#include "inflect/plan/validate.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

namespace {

// The GPT toy on one toy node: tp1 pp1 dp8, ZeRO-1, with `workers` DiLoCo workers.
plan::Experiment toy(int workers, int sync_every = 4) { return test::toy_diloco_experiment(sync_every, workers); }

// Rank 0's collectives of `name` in the full-fidelity graph of `step`: their groups' members.
std::vector<std::vector<workload::RankId>> groups_of(const plan::Experiment& e, plan::DilocoStep step, const std::string& name) {
  plan::CompileOptions o;
  o.fidelity = plan::Fidelity::full;
  o.diloco_step = step;
  const auto g = plan::compile(e, o).graph.expanded();
  std::vector<std::vector<workload::RankId>> out;
  for (const auto& op : g.ops()) {
    if (op.rank != 5 || op.type != workload::OpType::collective) continue;
    const auto& c = g.collectives()[op.payload];
    if (c.name == name) out.push_back(g.groups()[c.group].members);
  }
  return out;
}

std::string only_problem_key(const plan::Experiment& e) {
  const auto problems = plan::validate(e);
  REQUIRE(problems.size() == 1);
  return problems.front().key + ": " + problems.front().message;
}

}  // namespace

TEST_CASE("diloco: the inner step reduces inside the worker, the sync step all-reduces across workers") {
  // dp8 in 2 workers: ranks 0-3 and 4-7. Rank 5's gradient reduce-scatter (ZeRO-1) runs over its
  // worker {4, 5, 6, 7}; its outer all-reduce over its counterpart and itself, {1, 5}, of its
  // quarter of the parameters in fp32; the inner step has no outer all-reduce.
  const plan::Experiment e = toy(2);
  const auto inner_rs = groups_of(e, plan::DilocoStep::inner, "dp_rs_grads");
  REQUIRE(!inner_rs.empty());
  for (const auto& m : inner_rs) CHECK(m == std::vector<workload::RankId>{4, 5, 6, 7});
  CHECK(groups_of(e, plan::DilocoStep::inner, "diloco_outer_ar").empty());
  const auto outer = groups_of(e, plan::DilocoStep::sync, "diloco_outer_ar");
  REQUIRE(outer.size() == 1);
  CHECK(outer[0] == std::vector<workload::RankId>{1, 5});
  // ZeRO-1's parameter all-gather stays in the worker too.
  for (const auto& m : groups_of(e, plan::DilocoStep::sync, "dp_ag_params")) CHECK(m == std::vector<workload::RankId>{4, 5, 6, 7});

  // Four workers of two: rank 5 is in worker {4, 5}, its outer group one rank of each worker at
  // its place (second): {1, 3, 5, 7}.
  const plan::Experiment four = toy(4);
  for (const auto& m : groups_of(four, plan::DilocoStep::inner, "dp_rs_grads")) CHECK(m == std::vector<workload::RankId>{4, 5});
  CHECK(groups_of(four, plan::DilocoStep::sync, "diloco_outer_ar")[0] == std::vector<workload::RankId>{1, 3, 5, 7});
}

TEST_CASE("diloco: hybrid shard groups and their replicas lie inside the worker") {
  // FSDP with shard_group 2 inside workers of 4: rank 5 reduce-scatters with {4, 5}, all-reduces
  // its shard with the other replica of its worker, {5, 7}, and syncs it across workers with {1, 5}.
  plan::Experiment e = toy(2);
  e.parallel.zero = 3;
  e.parallel.fsdp = true;
  e.parallel.shard_group = 2;
  REQUIRE(plan::validate(e).empty());
  for (const auto& m : groups_of(e, plan::DilocoStep::inner, "dp_rs_grads")) CHECK(m == std::vector<workload::RankId>{4, 5});
  for (const auto& m : groups_of(e, plan::DilocoStep::inner, "dp_ar_replicas")) CHECK(m == std::vector<workload::RankId>{5, 7});
  CHECK(groups_of(e, plan::DilocoStep::sync, "diloco_outer_ar")[0] == std::vector<workload::RankId>{1, 5});
  // The label says both.
  CHECK(plan::plan_label(e).find(" hybrid2x2 ") != std::string::npos);
  CHECK(plan::plan_label(e).find(" diloco k2 h4 none") != std::string::npos);
}

TEST_CASE("diloco: memory shards over the worker and holds the outer state") {
  // ZeRO-1 over a worker of 4 instead of all 8: the Adam states (12 B/param) are P/4 per rank,
  // not P/8, and the outer copy and momentum (8 B/param) are sharded the same way.
  // optimizer = (12 + 8) * P / 4 with DiLoCo, 12 * P / 8 without.
  plan::Experiment e = toy(2);
  const double p = plan::estimate_memory(e, 8).stages[0].params;
  CHECK(plan::estimate_memory(e, 8).stages[0].optimizer.value() == doctest::Approx(20 * p / 4).epsilon(1e-12));
  e.training.diloco.reset();
  CHECK(plan::estimate_memory(e, 8).stages[0].optimizer.value() == doctest::Approx(12 * p / 8).epsilon(1e-12));
  // One more communicator (the outer group) holds collective buffers.
  CHECK(plan::estimate_memory(toy(2), 8).communicators == plan::estimate_memory(e, 8).communicators + 1);
}

TEST_CASE("diloco: a streamed fragment's all-reduce starts with the step on its own stream") {
  // F = 2: the sync step carries half the shard's bytes, on stream diloco_outer, issued before the
  // first forward (ops on it depend only on the pseudo-gradient kernel).
  plan::Experiment e = toy(2);
  e.training.diloco->fragments = 2;
  plan::CompileOptions o;
  o.diloco_step = plan::DilocoStep::sync;
  const auto g = plan::compile(e, o).graph;
  const double p = plan::estimate_memory(e, 8).stages[0].params / 4;
  int found = 0;
  for (std::size_t i = 0; i < g.ops().size(); ++i) {
    const auto& op = g.ops()[i];
    if (op.type != workload::OpType::collective) continue;
    const auto& c = g.collectives()[op.payload];
    if (c.name != std::string("diloco_outer_ar")) continue;
    ++found;
    CHECK(c.bytes.value() == doctest::Approx(4 * p / 2).epsilon(1e-12));
    CHECK(g.stream_names()[op.stream] == "diloco_outer");
    CHECK(i < 3);  // the step's first ops: the pseudo-gradient, then this
  }
  CHECK(found == 1);
}

TEST_CASE("diloco: the rules on workers, fragments, compression and the multiplier") {
  plan::Experiment e = toy(1);
  CHECK(only_problem_key(e).find("training.diloco.workers: workers=1 is out of range; allowed: 2 or more (one worker is "
                                 "synchronous training") == 0);
  e = toy(3);
  CHECK(only_problem_key(e).find("training.diloco.workers: workers=3 does not divide dp=8") == 0);
  CHECK(plan::validate(e).front().allowed == "2, 4, 8");
  e = toy(2, 4);
  e.training.diloco->fragments = 5;  // more than sync_every
  CHECK(only_problem_key(e).find("training.diloco.fragments: fragments=5 is out of range; allowed: 1 to sync_every (4)") == 0);
  e = toy(2, 16);
  e.training.diloco->fragments = 9;  // more than the toy's 8 layers
  CHECK(only_problem_key(e).find("at most 8, the layers of the smallest pipeline stage") != std::string::npos);
  e = toy(2);
  e.training.diloco->compression = plan::OuterCompression::topk;
  CHECK(only_problem_key(e).find("training.diloco.topk_fraction: topk_fraction=0 is out of range") == 0);
  e = toy(2);
  e.training.diloco->token_multiplier = 0;
  CHECK(only_problem_key(e).find("training.diloco.token_multiplier") == 0);
  // Expert parallelism lies inside a worker: ep must divide dp/K.
  e = toy(4);
  e.parallel.ep = 4;
  e.workload.model->moe.experts = 8;
  e.workload.model->moe.top_k = 2;
  e.workload.model->moe.expert_ffn_hidden = 1024;
  CHECK(only_problem_key(e).find("parallel.ep: ep=4 does not divide a DiLoCo worker's dp/workers = 8/4 = 2") == 0);
  // Hybrid sharding: shard_group divides the worker's dp*cp (4 here), not all of it (8).
  e = toy(2);
  e.parallel.shard_group = 8;
  CHECK(only_problem_key(e).find("parallel.shard_group: shard_group=8 does not divide a DiLoCo worker's dp*cp") == 0);
  // A legal one passes every stage the search checks too.
  e = toy(4, 100);
  CHECK(plan::validate(e).empty());
  for (plan::Stage s : plan::kStages) CHECK(plan::passes(e, s));
}
