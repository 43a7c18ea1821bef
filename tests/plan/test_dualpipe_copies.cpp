// DualPipe keeps two copies of the model (rank s holds stages s and pp-1-s, as does rank pp-1-s
// in the other direction): before the update each pair sums its copies' gradients
// (deepseek-ai/DualPipe's example adds each copy's gradient to its mirror's). The compiler emits
// one all-reduce per rank over {r, mirror(r)}, after the data-parallel reduction, on the shard the
// optimizer updates. DualPipeV holds each stage once and emits none.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "inflect/plan/compiler.hpp"
#include "inflect/plan/placement.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

namespace {

struct MirrorOps {
  int count = 0;
  double bytes = 0;
  std::map<workload::RankId, workload::RankId> partner;
};

MirrorOps mirror_ops(const plan::Experiment& e) {
  const plan::CompiledPlan c = plan::compile(e, {plan::Fidelity::full});
  MirrorOps m;
  const auto all = c.graph.expanded();  // replicas written out: every rank's ops
  for (const auto& op : all.ops()) {
    if (op.type != workload::OpType::collective) continue;
    const auto& coll = c.graph.collectives()[op.payload];
    if (coll.name != std::string("pp_ar_dualpipe_copies")) continue;
    ++m.count;
    CHECK(coll.kind == workload::CollectiveKind::all_reduce);
    CHECK(op.phase == workload::Phase::optimizer);
    m.bytes = coll.bytes.value();
    const auto& members = c.graph.groups()[coll.group].members;
    REQUIRE(members.size() == 2);
    m.partner[op.rank] = members[0] == op.rank ? members[1] : members[0];
  }
  return m;
}

// The GPT toy on tp2 pp2 dp2 (8 ranks), 4 micro-batches per replica (DualPipe needs >= 2 pp).
plan::Experiment toy(plan::Schedule s, int zero) {
  plan::Experiment e = test::toy_gpt_experiment();
  e.parallel.schedule = s;
  e.parallel.zero = zero;
  return e;
}

}  // namespace

TEST_CASE("DualPipe sums its two copies' gradients over each mirror pair, DualPipeV and 1F1B do not") {
  const plan::Experiment e = toy(plan::Schedule::dualpipe, 1);
  const MirrorOps m = mirror_ops(e);
  CHECK(m.count == 8);  // one per rank
  const plan::Mesh mesh(e.parallel, 2);
  for (const auto& [r, partner] : m.partner) {
    plan::Coords c = mesh.coords(r), p = mesh.coords(partner);
    CHECK(p.pp == 1 - c.pp);  // pp = 2: stage 0 <-> stage 1
    CHECK(p.tp == c.tp);
    CHECK(p.dp == c.dp);
    CHECK(m.partner.at(partner) == r);
  }
  // ZeRO-1 sums the shards the optimizer updates: 1/dp (= 1/2) of what ZeRO-0 sums.
  const MirrorOps full = mirror_ops(toy(plan::Schedule::dualpipe, 0));
  CHECK(full.count == 8);
  CHECK(m.bytes == doctest::Approx(full.bytes / 2));
  CHECK(full.bytes > 0);
  CHECK(mirror_ops(toy(plan::Schedule::dualpipev, 1)).count == 0);
  CHECK(mirror_ops(toy(plan::Schedule::one_f_one_b, 1)).count == 0);
}
