#include "inflect/workload/graph_merge.hpp"

#include <fmt/format.h>

#include "inflect/core/error.hpp"
#include "inflect/workload/rank_classes.hpp"

namespace inflect::workload {

ExecutionGraph merge_graphs(std::span<const GraphPart> parts, int total_ranks, std::string name) {
  auto fail = [](const std::string& what) { throw core::Error(core::ErrorKind::input, "merging job graphs: " + what); };
  if (total_ranks <= 0) fail("no devices");
  // Which part and which of its ranks each device runs (-1: idle).
  std::vector<int> part_of(static_cast<std::size_t>(total_ranks), -1);
  std::vector<RankId> local_of(static_cast<std::size_t>(total_ranks), -1);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const GraphPart& gp = parts[p];
    if (static_cast<int>(gp.devices.size()) != gp.graph->total_ranks())
      fail(fmt::format("job {} has {} ranks but {} devices", p, gp.graph->total_ranks(), gp.devices.size()));
    for (std::size_t r = 0; r < gp.devices.size(); ++r) {
      const RankId d = gp.devices[r];
      if (d < 0 || d >= total_ranks) fail(fmt::format("job {} rank {} on device {} of {}", p, r, d, total_ranks));
      if (part_of[static_cast<std::size_t>(d)] >= 0)
        fail(fmt::format("device {} holds a rank of job {} and of job {}", d, part_of[static_cast<std::size_t>(d)], p));
      part_of[static_cast<std::size_t>(d)] = static_cast<int>(p);
      local_of[static_cast<std::size_t>(d)] = static_cast<RankId>(r);
    }
  }

  ExecutionGraph out;
  out.name = std::move(name);
  std::vector<std::uint32_t> kernel_base(parts.size()), coll_base(parts.size());
  std::vector<std::vector<std::uint8_t>> stream_of(parts.size());
  std::size_t total_ops = 0;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const ExecutionGraph& g = *parts[p].graph;
    const auto& dev = parts[p].devices;
    auto rename = [&](std::vector<RankId> members) {
      for (RankId& m : members) m = dev[static_cast<std::size_t>(m)];
      return members;
    };
    const auto group_base = static_cast<GroupId>(out.groups().size());
    for (const Group& grp : g.groups()) {
      Group renamed{rename(grp.members), {}};
      for (const auto& m : grp.mirrors) renamed.mirrors.push_back(rename(m));
      out.add_group(std::move(renamed));
    }
    kernel_base[p] = static_cast<std::uint32_t>(out.kernels().size());
    for (const Kernel& k : g.kernels()) out.add_kernel(k);
    coll_base[p] = static_cast<std::uint32_t>(out.collectives().size());
    for (Collective c : g.collectives()) {
      c.group += group_base;
      out.add_collective(std::move(c));
    }
    for (const std::string& s : g.stream_names()) stream_of[p].push_back(out.stream(s));
    total_ops += g.ops().size();  // its stored ops: its replicas are added as replicas (below)
  }

  // Each part's ranks' ops in issue order (RankOps; its ranks' ops may interleave, as an
  // importer's may), which replica each of its replicas is, and which of the merged graph's kept
  // ranks each of its kept ranks became (-1 until added; its own, or the one end_rank found it
  // copies, say the same rank of an identical job).
  std::vector<RankOps> rank_ops;
  rank_ops.reserve(parts.size());
  std::vector<std::vector<OpId>> new_id(parts.size());
  std::vector<std::vector<std::int32_t>> kept_at(parts.size()), replica_at(parts.size());  // by part rank
  std::vector<std::vector<std::int64_t>> kept_in_out(parts.size());                        // by part kept rank
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const ExecutionGraph& g = *parts[p].graph;
    const auto ranks = static_cast<std::size_t>(g.total_ranks());
    // RankOps needs every op on a simulated rank; a part of another kind is an input error here.
    std::vector<char> simulated_here(ranks, 0);
    for (const RankId r : g.simulated_ranks())
      if (r >= 0 && static_cast<std::size_t>(r) < ranks) simulated_here[static_cast<std::size_t>(r)] = 1;
    for (const Op& o : g.ops())
      if (o.rank < 0 || static_cast<std::size_t>(o.rank) >= ranks || !simulated_here[static_cast<std::size_t>(o.rank)])
        fail(fmt::format("job {} rank {} has ops but is not simulated", p, o.rank));
    rank_ops.emplace_back(g);
    new_id[p].assign(g.op_count(), 0);
    kept_at[p].assign(ranks, -1);
    replica_at[p].assign(ranks, -1);
    for (std::size_t k = 0; k < g.kept_ranks().size(); ++k)
      kept_at[p][static_cast<std::size_t>(g.kept_ranks()[k].rank)] = static_cast<std::int32_t>(k);
    for (std::size_t k = 0; k < g.replicas().size(); ++k)
      replica_at[p][static_cast<std::size_t>(g.replicas()[k].rank)] = static_cast<std::int32_t>(k);
    kept_in_out[p].assign(g.kept_ranks().size(), -1);
  }
  out.reserve(total_ops, 0);
  std::vector<RankId> simulated;
  std::vector<std::uint32_t> represents;
  std::vector<OpId> deps;
  for (RankId d = 0; d < total_ranks; ++d) {
    const int p = part_of[static_cast<std::size_t>(d)];
    if (p < 0) continue;
    const auto pi = static_cast<std::size_t>(p);
    const ExecutionGraph& g = *parts[pi].graph;
    const RankOps& ro = rank_ops[pi];
    const RankId local = local_of[static_cast<std::size_t>(d)];
    const std::int32_t index = ro.index_of(local);
    // A rank the part does not simulate (symmetric fidelity): stood for by another of its ranks.
    if (index < 0) continue;
    const auto i = static_cast<std::uint32_t>(index);
    simulated.push_back(d);
    represents.push_back(g.represents()[i]);
    if (ro.is_replica(i)) {
      // A replica of a kept rank already in the merged graph is added as one, its ops not copied:
      // its collectives are the part's, moved by the part's base.
      const Replica& rep = g.replicas()[static_cast<std::size_t>(replica_at[pi][static_cast<std::size_t>(local)])];
      if (const std::int64_t kept = kept_in_out[pi][rep.kept]; kept >= 0) {
        std::vector<std::uint32_t> colls = rep.colls;
        for (std::uint32_t& c : colls) c += coll_base[pi];
        out.add_replica(d, static_cast<std::uint32_t>(kept), std::move(colls));
        continue;
      }
      // Its kept rank is on a later device: its ops are copied, and end_rank finds the copy.
    }
    for (std::uint32_t j = 0; j < ro.count(i); ++j) {
      const OpId id = ro.id(i, j);
      const Op o = g.op(id);
      deps.clear();
      for (const OpId dep : g.op_deps(id)) deps.push_back(new_id[pi][dep]);
      const std::uint32_t payload = o.payload + (o.type == OpType::compute ? kernel_base[pi] : coll_base[pi]);
      new_id[pi][id] = out.add_op(d, stream_of[pi][o.stream], o.type, payload, o.phase, o.layer, o.micro_batch, deps);
    }
    const bool replica = out.end_rank(d);
    if (const std::int32_t k = kept_at[pi][static_cast<std::size_t>(local)]; k >= 0)
      kept_in_out[pi][static_cast<std::size_t>(k)] =
          replica ? static_cast<std::int64_t>(out.replicas().back().kept) : static_cast<std::int64_t>(out.kept_ranks().size()) - 1;
  }
  out.set_ranks(total_ranks, std::move(simulated), std::move(represents));
  out.validate();
  return out;
}

}  // namespace inflect::workload
