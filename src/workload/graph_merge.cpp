#include "inflect/workload/graph_merge.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "inflect/core/error.hpp"

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
    total_ops += g.op_count();
  }

  // Each part's ops by rank, in issue order (id order: a rank's ops are issued in id order even in
  // a graph whose ranks interleave, as an importer's may).
  std::vector<std::vector<std::vector<OpId>>> ops_of(parts.size());
  std::vector<std::vector<OpId>> new_id(parts.size());
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const ExecutionGraph& g = *parts[p].graph;
    ops_of[p].resize(static_cast<std::size_t>(g.total_ranks()));
    for (OpId id = 0; id < g.op_count(); ++id) ops_of[p][static_cast<std::size_t>(g.op(id).rank)].push_back(id);
    new_id[p].assign(g.op_count(), 0);
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
    const RankId local = local_of[static_cast<std::size_t>(d)];
    const auto& sim = g.simulated_ranks();
    const auto it = std::find(sim.begin(), sim.end(), local);
    if (it == sim.end()) {
      // A rank the part does not simulate (symmetric fidelity): stood for by another of its ranks.
      if (!ops_of[pi][static_cast<std::size_t>(local)].empty()) fail(fmt::format("job {} rank {} has ops but is not simulated", p, local));
      continue;
    }
    simulated.push_back(d);
    represents.push_back(g.represents()[static_cast<std::size_t>(it - sim.begin())]);
    for (const OpId id : ops_of[pi][static_cast<std::size_t>(local)]) {
      const Op o = g.op(id);
      deps.clear();
      for (const OpId dep : g.op_deps(id)) deps.push_back(new_id[pi][dep]);
      const std::uint32_t payload = o.payload + (o.type == OpType::compute ? kernel_base[pi] : coll_base[pi]);
      new_id[pi][id] = out.add_op(d, stream_of[pi][o.stream], o.type, payload, o.phase, o.layer, o.micro_batch, deps);
    }
    out.end_rank(d);
  }
  out.set_ranks(total_ranks, std::move(simulated), std::move(represents));
  out.validate();
  return out;
}

}  // namespace inflect::workload
