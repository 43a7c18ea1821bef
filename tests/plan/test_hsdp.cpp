// Hybrid sharding (parallel.shard_group, HSDP): gradients reduce-scatter within the shard group,
// then each reduced shard is all-reduced across the replicas, bucket by bucket behind the
// backward (as FSDP's hybrid shard does after each reduce-scatter), not once after it.
#include <doctest/doctest.h>

#include <string>

#include "inflect/plan/compiler.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

TEST_CASE("HSDP all-reduces each reduced bucket's shard across replicas during the backward") {
  // The GPT toy on dp8 (tp1 pp1), FSDP sharded over groups of 4: 2 replicas. Each dp_rs_grads
  // of B bytes over 4 ranks is followed by a dp_ar_replicas of B/4 bytes over the 2 replicas.
  plan::Experiment e = test::toy_gpt_experiment();
  e.parallel.tp = 1;
  e.parallel.pp = 1;
  e.parallel.dp = 8;
  e.parallel.zero = 3;
  e.parallel.fsdp = true;
  e.parallel.shard_group = 4;
  const plan::CompiledPlan c = plan::compile(e, {plan::Fidelity::full});
  const auto g = c.graph.expanded();  // replicas written out: every rank's ops
  int rs = 0, ar = 0;
  double rs_bytes = 0, ar_bytes = 0;
  for (const auto& op : g.ops()) {
    if (op.rank != 0 || op.type != workload::OpType::collective) continue;
    const auto& coll = g.collectives()[op.payload];
    const std::string name = coll.name;
    if (name == "dp_rs_grads") {
      ++rs;
      rs_bytes += coll.bytes.value();
      CHECK(g.groups()[coll.group].members.size() == 4);
    } else if (name == "dp_ar_replicas") {
      ++ar;
      ar_bytes += coll.bytes.value();
      CHECK(op.phase == workload::Phase::backward);
      CHECK(g.groups()[coll.group].members.size() == 2);
    }
  }
  CHECK(rs > 1);
  CHECK(ar == rs);
  CHECK(ar_bytes == doctest::Approx(rs_bytes / 4));
  // The label names the shard group and its replicas (plan::shard_groups, as the groups above).
  CHECK(c.summary.find(" hybrid4x2 ") != std::string::npos);
}
