// plan::validate, the one set of plan legality rules (the loader, the search and the compiler all
// use it): each rule on the toy GPT (one node of 8 devices, 16 heads, 8 layers, seq 1024, global
// batch 8, tp2 pp2 dp2), changed just enough to break it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/validate.hpp"
#include "toy_cluster.hpp"

using namespace inflect;
using plan::Problem;

namespace {

/// The one problem validate finds (fails the test when there are none or several).
Problem only_problem(const plan::Experiment& e) {
  const std::vector<Problem> problems = plan::validate(e);
  REQUIRE(problems.size() == 1);
  return problems.front();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// Whether every stage passes (the search's view), which must agree with validate.
bool every_stage_passes(const plan::Experiment& e) {
  for (plan::Stage s : plan::kStages)
    if (!plan::passes(e, s)) return false;
  return true;
}

plan::Experiment toy() { return test::toy_gpt_experiment(); }

}  // namespace

TEST_CASE("validate: the toy plan breaks no rule") {
  // tp2 pp2 dp2 on 8 devices, 16 heads, 8 layers, 8 sequences of 1 per micro-batch: legal.
  const plan::Experiment e = toy();
  CHECK(plan::validate(e).empty());
  CHECK(every_stage_passes(e));
  CHECK_NOTHROW(plan::check_plan(e));
}

TEST_CASE("validate: tp fits in one node and divides it") {
  // tp16 > 8 devices per node: exceeds the node; the allowed list is the node's divisors.
  plan::Experiment e = toy();
  e.parallel.tp = 16;
  e.parallel.pp = 1;
  e.parallel.dp = 0;
  e.cluster.nodes = 2;
  e.workload.model->heads = e.workload.model->kv_heads = 32;
  Problem p = only_problem(e);
  CHECK(p.key == "parallel.tp");
  CHECK(contains(p.message, "tp=16 exceeds the 8 devices of one node's scale-up domain (topology 'toy')"));
  CHECK(p.allowed == "1, 2, 4, 8");

  // 6 devices per node, tp4 (divides the 16 heads): some TP groups would span nodes.
  e = toy();
  e.cluster.topology.devices_per_node = 6;
  e.cluster.nodes = 2;  // 12 devices = tp4 * pp1 * dp3
  e.parallel.tp = 4;
  e.parallel.pp = 1;
  e.parallel.dp = 3;
  e.training.global_batch = 3;
  p = only_problem(e);
  CHECK(contains(p.message, "tp=4 does not divide the 6 devices of one node"));
  CHECK(p.allowed == "1, 2, 3, 6");
}

TEST_CASE("validate: tp divides the attention heads") {
  // 12 heads, tp8: 12 % 8 != 0; the KV heads (12) break too. Allowed: divisors of gcd(12, 12, 8) = 4.
  plan::Experiment e = toy();
  e.workload.model->heads = e.workload.model->kv_heads = 12;
  e.workload.model->hidden = 1536;
  e.parallel.tp = 8;
  e.parallel.pp = 1;
  e.parallel.dp = 1;
  const auto problems = plan::validate(e);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].message == "tp=8 does not divide the 12 attention heads of model 'toy-gpt'; allowed: 1, 2, 4");
  CHECK(contains(problems[1].message, "tp=8 does not divide the 12 key/value heads"));
  CHECK(problems[1].allowed == "1, 2, 4");
}

TEST_CASE("validate: tp divides the KV heads, so a tp above kv_heads is not allowed (no KV replication)") {
  // The disagreement this rule settles: the compiler used to accept kv_heads 2 with tp 4 because
  // tp % kv_heads == 0; Megatron-Core requires kv_heads % tp == 0 and the layer costs split whole
  // KV heads, so it is a problem. Allowed: divisors of gcd(16, 2, 8) = 2.
  plan::Experiment e = toy();
  e.workload.model->kv_heads = 2;
  e.parallel.tp = 4;
  e.parallel.pp = 1;
  const Problem p = only_problem(e);
  CHECK(p.key == "parallel.tp");
  CHECK(contains(p.message, "tp=4 does not divide the 2 key/value heads of model 'toy-gpt' (grouped-query attention shards "
                            "whole KV heads)"));
  CHECK(p.allowed == "1, 2");
  CHECK_FALSE(plan::passes(e, plan::Stage::tensor_parallel));
  CHECK_THROWS_WITH_AS(plan::check_plan(e), doctest::Contains("key/value heads"), core::Error);

  // kv_heads 2 with tp 2: each rank holds one whole KV head; legal.
  e.parallel.tp = 2;
  e.parallel.pp = 2;
  CHECK(plan::validate(e).empty());
}

TEST_CASE("validate: cp divides the sequence") {
  // seq 1020 over cp8 (tp1 pp1 dp1): 1020 % 8 != 0.
  plan::Experiment e = toy();
  e.training.seq_len = 1020;
  e.parallel.tp = 1;
  e.parallel.pp = 1;
  e.parallel.cp = 8;
  e.parallel.dp = 1;
  const Problem p = only_problem(e);
  CHECK(p.key == "parallel.cp");
  CHECK(contains(p.message, "cp=8 does not divide seq_len=1020"));
}

TEST_CASE("validate: tp*pp*cp*dp covers the devices, and pp divides the layers") {
  // dp given as 4: tp2*pp2*dp4 = 16 != 8 devices; dp=2 would fit.
  plan::Experiment e = toy();
  e.parallel.dp = 4;
  Problem p = only_problem(e);
  CHECK(p.key == "parallel.dp");
  CHECK(contains(p.message, "tp*pp*cp*dp = 2*2*1*4 = 16 but the cluster has 8 devices (1 nodes * 8 per node); allowed: dp=2"));
  CHECK(p.allowed == "2");

  // dp derived with tp1 pp3: 3 does not divide 8 devices (on the section), nor the 8 layers.
  e = toy();
  e.parallel.tp = 1;
  e.parallel.pp = 3;
  e.parallel.dp = 0;
  const auto problems = plan::validate(e);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].key == "parallel");
  CHECK(contains(problems[0].message, "tp*pp*cp = 1*3*1 = 3 does not divide the cluster's 8 devices"));
  CHECK(problems[1].key == "parallel.pp");
  CHECK(problems[1].message == "pp=3 does not divide the 8 layers of model 'toy-gpt'; allowed: 1, 2, 4, 8");

  // An uneven layers_per_stage replaces the even split: pp4 of 6 layers as [2, 2, 1, 1] is legal.
  e = toy();
  e.workload.model->layers = 6;
  e.parallel.pp = 4;
  e.parallel.dp = 1;
  e.parallel.layers_per_stage = {2, 2, 1, 1};
  CHECK(plan::validate(e).empty());
}

TEST_CASE("validate: ep needs an MoE model whose experts and dp it divides") {
  // ep2 on the dense toy.
  plan::Experiment e = toy();
  e.parallel.ep = 2;
  CHECK(contains(only_problem(e).message, "ep=2 needs a mixture-of-experts model (model.moe); this model is dense"));

  // 6 experts, ep4 with dp2: divides neither the experts nor dp (two problems).
  e.workload.model->moe.experts = 6;
  e.workload.model->moe.top_k = 2;
  e.workload.model->moe.expert_ffn_hidden = 1024;
  e.parallel.ep = 4;
  const auto problems = plan::validate(e);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].message == "ep=4 does not divide the 6 experts of model 'toy-gpt'; allowed: 1, 2, 3, 6");
  CHECK(problems[1].message == "ep=4 does not divide dp=2: expert parallelism is folded inside data parallelism; allowed: 1, 2");

  // ep2 of 6 experts inside dp2: legal.
  e.parallel.ep = 2;
  CHECK(plan::validate(e).empty());
}

TEST_CASE("validate: global_batch splits into whole micro-batches per data-parallel rank") {
  // dp2 * micro_batch 3 = 6 does not divide 8; the nearest that do are 6 and 12.
  plan::Experiment e = toy();
  e.training.micro_batch = 3;
  Problem p = only_problem(e);
  CHECK(p.key == "training.global_batch");
  CHECK(contains(p.message, "global_batch=8 is not divisible by dp*micro_batch = 2*3 = 6"));
  CHECK(contains(p.message, "nearest allowed: 6 or 12"));
  CHECK(p.allowed == "6 or 12");

  // 131072 sequences on dp2 with micro_batch 1: 65536 micro-batches, one more than the graph numbers.
  e = toy();
  e.training.global_batch = 131072;
  p = only_problem(e);
  CHECK(p.key == "training.global_batch");
  CHECK(contains(p.message, "makes 65536 micro-batches per step"));
}

TEST_CASE("validate: ZeRO stage, fsdp and shard_group") {
  // zero 4 is no ZeRO stage.
  plan::Experiment e = toy();
  e.parallel.zero = 4;
  CHECK(only_problem(e).allowed == "0, 1, 2, 3");

  // fsdp is ZeRO-3; with zero 1 it is contradicted.
  e = toy();
  e.parallel.fsdp = true;
  CHECK(only_problem(e).key == "parallel.fsdp");

  // shard_group 2 with nothing sharded (zero 0).
  e = toy();
  e.parallel.zero = 0;
  e.parallel.shard_group = 2;
  CHECK(contains(only_problem(e).message, "shard_group shards within groups and needs zero >= 1"));

  // shard_group 4 does not divide dp*cp = 2.
  e = toy();
  e.parallel.shard_group = 4;
  const Problem p = only_problem(e);
  CHECK(p.message == "shard_group=4 does not divide dp*cp = 2; allowed: 1, 2");
}

TEST_CASE("validate: the schedule can run the shape, named at the setting it is about") {
  // interleaved with virtual_stages 1: on parallel.schedule.
  plan::Experiment e = toy();
  e.parallel.schedule = plan::Schedule::interleaved;
  Problem p = only_problem(e);
  CHECK(p.key == "parallel.schedule");
  CHECK(contains(p.message, "schedule interleaved: interleaved needs virtual_stages >= 2 (got 1) (micro-batches per step: 4"));

  // 1f1b with virtual_stages 2: on parallel.virtual_stages.
  e = toy();
  e.parallel.virtual_stages = 2;
  CHECK(only_problem(e).key == "parallel.virtual_stages");

  // layers_per_stage [5, 2] sums to 7 of 8 layers: on parallel.layers_per_stage.
  e = toy();
  e.parallel.layers_per_stage = {5, 2};
  p = only_problem(e);
  CHECK(p.key == "parallel.layers_per_stage");
  CHECK(contains(p.message, "sums to 7 but the model has 8 layers"));

  // A custom order whose second rank waits for a backward before any forward: deadlock.
  e = toy();
  e.training.global_batch = 4;  // 2 micro-batches per step on dp2
  e.parallel.schedule = plan::Schedule::custom;
  e.parallel.custom_schedule = {"F0 F1 B0 B1", "B0 F0 F1 B1"};
  p = only_problem(e);
  CHECK(p.key == "parallel.custom_schedule");
  CHECK(contains(p.message, "the custom schedule cannot run"));
}

TEST_CASE("validate: sequence parallelism splits the sequence over tp, and TP overlap needs it") {
  // seq 1023 over tp2 with sequence parallelism: 1023 % 2 != 0.
  plan::Experiment e = toy();
  e.training.seq_len = 1023;
  e.parallel.sequence_parallel = true;
  Problem p = only_problem(e);
  CHECK(p.key == "parallel.sequence_parallel");
  CHECK(p.message == "sequence parallelism needs seq_len/cp (1023) divisible by tp (2)");

  // tp_comm_overlap without sequence parallelism.
  e = toy();
  e.parallel.tp_comm_overlap = true;
  p = only_problem(e);
  CHECK(p.key == "parallel.tp_comm_overlap");
  CHECK(contains(p.message, "it needs tp > 1 (tp is 2) and sequence_parallel: true"));
}

TEST_CASE("validate: degrees below one are reported before anything divides by them") {
  // tp0, cp0, pp0, ep0, micro_batch 0: each its own problem, no division by zero.
  plan::Experiment e = toy();
  e.parallel.tp = 0;
  CHECK(only_problem(e).message == "tp=0 is out of range; allowed: 1 or more");
  e = toy();
  e.parallel.cp = 0;
  CHECK(only_problem(e).key == "parallel.cp");
  e = toy();
  e.parallel.pp = 0;
  CHECK(only_problem(e).key == "parallel.pp");
  e = toy();
  e.parallel.ep = 0;
  CHECK(only_problem(e).key == "parallel.ep");
  e = toy();
  e.training.micro_batch = 0;
  CHECK(only_problem(e).key == "training.micro_batch");
}

TEST_CASE("validate: only the first broken stage is reported") {
  // tp3 (tensor-parallel stage) and zero 4 (a later stage): the later one is not reported, since
  // dp and everything after it mean nothing for a tp that does not fit.
  plan::Experiment e = toy();
  e.parallel.tp = 3;
  e.parallel.zero = 4;
  for (const Problem& p : plan::validate(e)) CHECK(p.key == "parallel.tp");
}

TEST_CASE("validate: passes agrees with validate on every plan of a small grid") {
  // Every tp, pp, dp, micro_batch and zero of small lists on the toy: validate is empty exactly
  // when every stage passes (the search's filter and the loader's check are the same rules).
  int legal = 0, total = 0;
  for (int tp : {1, 2, 3, 4, 8})
    for (int pp : {1, 2, 3, 4})
      for (int dp : {0, 1, 2, 3})
        for (std::int64_t mb : {1, 2, 3})
          for (int zero : {0, 1, 4}) {
            plan::Experiment e = toy();
            e.parallel.tp = tp;
            e.parallel.pp = pp;
            e.parallel.dp = dp;
            e.training.micro_batch = mb;
            e.parallel.zero = zero;
            const bool valid = plan::validate(e).empty();
            CHECK(valid == every_stage_passes(e));
            legal += valid;
            ++total;
          }
  CHECK(total == 5 * 4 * 4 * 3 * 3);
  CHECK(legal > 0);
}

TEST_CASE("validate: a trace replay is checked against the cluster and the batch only") {
  // No model: tp2 (no heads to divide) is legal; ep2 needs an MoE model and there is none.
  plan::Experiment e = toy();
  e.workload.model.reset();
  e.workload.trace_file = "graph.json";
  e.training.global_batch = 0;
  CHECK(plan::validate(e).empty());
  e.parallel.ep = 2;
  CHECK(only_problem(e).key == "parallel.ep");
}

TEST_CASE("check_plan names the first problem's key and lists the others") {
  // 6 experts with ep4 on dp2: two problems in one message, located at parallel.ep.
  plan::Experiment e = toy();
  e.workload.model->moe.experts = 6;
  e.workload.model->moe.top_k = 2;
  e.workload.model->moe.expert_ffn_hidden = 1024;
  e.parallel.ep = 4;
  try {
    plan::check_plan(e);
    FAIL("check_plan accepted a plan with problems");
  } catch (const core::Error& err) {
    CHECK(err.kind() == core::ErrorKind::input);
    CHECK(err.where().key_path == "parallel.ep");
    CHECK(contains(err.message(), "ep=4 does not divide the 6 experts"));
    CHECK(contains(err.message(), "; also parallel.ep: ep=4 does not divide dp=2"));
  }
}
