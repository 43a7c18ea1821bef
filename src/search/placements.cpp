#include "inflect/search/placements.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <mutex>
#include <map>
#include <set>

#include "inflect/analysis/simulate.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/core/error.hpp"
#include "inflect/core/parallel.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/plan/placement.hpp"
#include "inflect/plan/plan_summary.hpp"

namespace inflect::search {

namespace {

using plan::Dim;

const char* dim_name(Dim d) {
  switch (d) {
    case Dim::tp: return "tp";
    case Dim::cp: return "cp";
    case Dim::pp: return "pp";
    case Dim::dp: return "dp";
  }
  return "?";
}

int size_of(const plan::ParallelPlan& p, Dim d) {
  switch (d) {
    case Dim::tp: return p.tp;
    case Dim::cp: return p.cp;
    case Dim::pp: return p.pp;
    case Dim::dp: return p.dp;
  }
  return 1;
}

// The dimensions of size > 1 in the order's sequence: two orders with the same one give every
// rank the same device (a dimension of size 1 has stride-free coordinate 0 wherever it stands).
std::vector<Dim> placed(const plan::ParallelPlan& p, const std::vector<Dim>& order) {
  std::vector<Dim> out;
  for (Dim d : order)
    if (size_of(p, d) > 1) out.push_back(d);
  return out;
}

std::string mesh_of(const plan::ParallelPlan& p, const std::vector<Dim>& order) {
  std::string s;
  const auto dims = placed(p, order);
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", dim_name(*it), size_of(p, *it));
    // Expert parallelism folds inside dp (plan/placement.hpp): said beside it, as the mesh key reads it.
    if (*it == Dim::dp && p.ep > 1) s += fmt::format(", ep {} in dp", p.ep);
  }
  return "[" + s + "]";
}

// Whether any group of `members_of(r)` over the ranks `firsts` has members in two sites.
template <class F>
bool spans(const net::Topology& topo, int ranks, F&& first_and_members) {
  for (int r = 0; r < ranks; ++r) {
    std::vector<workload::RankId> members;
    if (first_and_members(r, members) && topo.spans_sites(members)) return true;
  }
  return false;
}

std::vector<std::string> crossing_of(const plan::ParallelPlan& p, const net::Topology& topo) {
  const plan::Mesh mesh(p, p.dp);
  std::vector<std::string> out;
  // Each group once: from its member with coordinate 0 along the dimension.
  auto along = [&](Dim d) {
    if (size_of(p, d) < 2) return false;
    return spans(topo, mesh.ranks(), [&](int r, std::vector<workload::RankId>& m) {
      if (mesh.coords(static_cast<workload::RankId>(r)).get(d) != 0) return false;
      m = mesh.group(static_cast<workload::RankId>(r), d);
      return true;
    });
  };
  if (along(Dim::tp)) out.emplace_back("tp");
  if (along(Dim::cp)) out.emplace_back("cp");
  if (along(Dim::pp)) out.emplace_back("pp");
  // EP groups: ep consecutive data-parallel ranks (plan/group_table.cpp kEp).
  if (p.ep > 1 && spans(topo, mesh.ranks(), [&](int r, std::vector<workload::RankId>& m) {
        plan::Coords c = mesh.coords(static_cast<workload::RankId>(r));
        if (c.dp % p.ep != 0) return false;
        const int first = c.dp;
        for (int d = first; d < first + p.ep; ++d) {
          c.dp = d;
          m.push_back(mesh.rank(c));
        }
        return true;
      }))
    out.emplace_back("ep");
  if (along(Dim::dp)) out.emplace_back("dp");
  return out;
}

bool has(const std::vector<std::string>& v, const char* s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// Whether the hierarchical form applies to a data-parallel group that spans sites
// (net::hierarchical_split: the rule the lowering itself uses), else that group runs flat, and when
// none qualifies the two placements would be one.
bool hierarchical_applies(const plan::ParallelPlan& p, const net::Topology& topo) {
  const plan::Mesh mesh(p, p.dp);
  for (int r = 0; r < mesh.ranks(); ++r) {
    if (mesh.coords(static_cast<workload::RankId>(r)).dp != 0) continue;
    const auto group = mesh.group(static_cast<workload::RankId>(r), Dim::dp);
    const std::vector<net::DeviceId> members(group.begin(), group.end());
    if (net::hierarchical_split(members, topo)) return true;
  }
  return false;
}

std::string crosses_phrase(const plan::ParallelPlan& p, const std::vector<std::string>& crossing,
                           std::optional<net::CrossSite> form) {
  std::vector<std::string> parts;
  for (const auto& d : crossing) {
    if (d == "tp") parts.emplace_back("tp activations (every layer)");
    if (d == "cp") parts.emplace_back(p.cp_comm == plan::CpComm::p2p ? "cp K/V ring (every layer)" : "cp K/V gathers (every layer)");
    if (d == "pp") parts.emplace_back("pp activations and their gradients (stage boundaries)");
    if (d == "ep") parts.emplace_back("ep token all-to-alls (every MoE layer)");
    if (d == "dp") {
      std::string what = p.zero >= 3 ? "dp gradients and parameter gathers" : p.zero >= 1 ? "dp gradients and the parameter all-gather" : "dp gradients";
      if (form == net::CrossSite::hierarchical) what += ", a shard of them across (hierarchical)";
      else if (form == net::CrossSite::flat) what += ", all of them (flat: the library's algorithm over the whole group)";
      parts.push_back(std::move(what));
    }
  }
  if (parts.empty()) return "nothing: every group inside one site";
  std::string s;
  for (const auto& x : parts) s += (s.empty() ? "" : " + ") + x;
  if (crossing.size() == 1 && crossing[0] == "pp") s = "only " + s;
  return s;
}

// Whether the group's members, or those of any rank it stands for (symmetric fidelity's mirrors),
// lie in more than one site.
bool group_spans(const workload::Group& g, const net::Topology& topo) {
  if (topo.spans_sites(g.members)) return true;
  for (const auto& m : g.mirrors)
    if (topo.spans_sites(m)) return true;
  return false;
}

}  // namespace

std::array<core::Bytes, workload::kParallelDims> spanning_bytes(const plan::Experiment& e, plan::Fidelity fidelity) {
  const net::Topology topo(e.cluster.topology, e.cluster.nodes);
  analysis::SimulateOptions so;
  so.fidelity = fidelity;
  const workload::ExecutionGraph g = analysis::build_graph(e, so);
  std::vector<bool> spans_sites(g.groups().size());
  for (std::size_t i = 0; i < g.groups().size(); ++i) spans_sites[i] = group_spans(g.groups()[i], topo);
  // Per stored rank and dimension; the stored ranks stand for every other (their replicas and,
  // in symmetric fidelity, the ranks they represent), so the largest is the job's largest.
  std::map<workload::RankId, std::array<double, workload::kParallelDims>> per_rank;
  for (const workload::Op& op : g.ops()) {
    if (op.type != workload::OpType::collective) continue;
    const workload::Collective& c = g.collectives()[op.payload];
    if (!spans_sites[c.group]) continue;
    double bytes = c.bytes.value();
    for (const auto& part : c.then) bytes += part.bytes.value();
    per_rank[op.rank][static_cast<std::size_t>(c.dim)] += bytes;
  }
  std::array<core::Bytes, workload::kParallelDims> out{};
  for (const auto& [rank, dims] : per_rank)
    for (std::size_t d = 0; d < dims.size(); ++d) out[d] = core::Bytes(std::max(out[d].value(), dims[d]));
  return out;
}

std::vector<std::string> crossing_dims(const plan::Experiment& e) {
  const net::Topology topo(e.cluster.topology, e.cluster.nodes);
  return crossing_of(e.parallel, topo);
}

std::vector<Placement> enumerate_placements(const plan::Experiment& e) {
  const auto& p = e.parallel;
  const core::SourceLocation at{e.file, 0, 0, ""};
  if (e.cluster.topology.sites.size() < 2)
    throw core::Error(core::ErrorKind::input,
                      "nothing to place: the cluster has no sites (cluster.sites lists two or more, joined by cluster.wan; "
                      "docs/geo.md)",
                      {e.file, 0, 0, "cluster.sites"});
  if (!e.workload.model)
    throw core::Error(core::ErrorKind::input, "placements compile a model's plan; a replayed trace has its ranks placed already",
                      {e.file, 0, 0, "workload.trace"});
  if (p.cp < 2 && p.pp < 2 && p.dp < 2)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("nothing to place: the plan ({}) has no dimension larger than 1 besides tp, so it has one "
                                  "placement; give pp, dp or cp > 1",
                                  plan::plan_label(e)),
                      {at.file, 0, 0, "parallel"});
  const net::Topology topo(e.cluster.topology, e.cluster.nodes);

  // The experiment's own order first (tp moved innermost), then every order of cp, pp and dp.
  std::vector<std::vector<Dim>> orders;
  {
    std::vector<Dim> own = {Dim::tp};
    for (Dim d : p.order)
      if (d != Dim::tp) own.push_back(d);
    orders.push_back(own);
    std::array<Dim, 3> rest = {Dim::cp, Dim::pp, Dim::dp};
    do orders.push_back({Dim::tp, rest[0], rest[1], rest[2]});
    while (std::next_permutation(rest.begin(), rest.end()));
  }
  std::set<std::vector<Dim>> seen;
  std::vector<Placement> out;
  for (const auto& order : orders) {
    if (!seen.insert(placed(p, order)).second) continue;
    plan::ParallelPlan q = p;
    q.order = order;
    Placement base;
    base.order = order;
    base.mesh = mesh_of(p, order);
    base.crossing = crossing_of(q, topo);
    std::vector<std::optional<net::CrossSite>> forms = {std::nullopt};
    if (has(base.crossing, "dp")) {
      forms = {net::CrossSite::flat};
      if (hierarchical_applies(q, topo)) forms.emplace_back(net::CrossSite::hierarchical);
    }
    for (const auto& form : forms) {
      Placement pl = base;
      pl.cross_site = form;
      pl.name = pl.mesh;
      if (form) pl.name += std::string(" ") + net::to_string(*form);
      pl.crosses = crosses_phrase(p, pl.crossing, form);
      out.push_back(std::move(pl));
    }
  }
  return out;
}

plan::Experiment with_placement(const plan::Experiment& base, const Placement& p) {
  plan::Experiment e = base;
  e.parallel.order = p.order;
  if (p.cross_site) e.cluster.topology.collectives.cross_site = *p.cross_site;
  return e;
}

std::size_t dim_index(const std::string& d) {
  for (int i = 0; i < workload::kParallelDims; ++i)
    if (d == workload::to_string(static_cast<workload::ParallelDim>(i))) return static_cast<std::size_t>(i);
  core::fail_invariant("dim_index: a parallel dimension's name");
}

std::string why_loses(const PlacementResult& loser, const PlacementResult& best) {
  if (!loser.ok() || !best.ok()) return loser.ok() ? "" : "not simulated";
  const auto& a = loser.report.breakdown;
  const auto& b = best.report.breakdown;
  struct Part {
    std::string what;
    double delta;
  };
  const auto ex = [](const analysis::PerDim& x, const char* d) {
    const std::string s = d;
    return (s == "dp" ? x.dp : s == "tp" ? x.tp : s == "pp" ? x.pp : s == "cp" ? x.cp : x.ep).value();
  };
  std::vector<Part> parts;
  for (const char* d : {"dp", "tp", "pp", "cp", "ep"}) {
    std::string why;
    const bool here = has(loser.placement.crossing, d), there = has(best.placement.crossing, d);
    const double gb = loser.spanning[dim_index(d)].value() / 1e9;
    if (here && !there) why = fmt::format(" ({} groups span sites here, not in the best: {:.3g} GB per rank per step)", d, gb);
    else if (here && std::string(d) == "dp" && loser.placement.cross_site != best.placement.cross_site)
      why = loser.placement.cross_site == net::CrossSite::flat
                ? fmt::format(" (all of the {:.3g} GB per rank per step cross the WAN, flat)", gb)
                : fmt::format(" (hierarchical: a shard of the {:.3g} GB per rank per step crosses)", gb);
    parts.push_back({fmt::format("exposed {}{}", d, why), ex(a.exposed_comm, d) - ex(b.exposed_comm, d)});
  }
  parts.push_back({has(loser.placement.crossing, "pp") && !has(best.placement.crossing, "pp") ? "pipeline bubble (stages wait on the WAN)"
                                                                                                  : "pipeline bubble",
                   (a.bubble - b.bubble).value()});
  parts.push_back({"compute", (a.compute - b.compute).value()});
  parts.push_back({"other waits", (a.other - b.other).value()});
  std::stable_sort(parts.begin(), parts.end(), [](const Part& x, const Part& y) { return x.delta > y.delta; });
  const double total = (loser.report.step_time - best.report.step_time).value();
  // Orders that differ only inside the sites (which dimension rides the fabric between nodes).
  const bool same_crossing = loser.placement.crossing == best.placement.crossing && loser.placement.cross_site == best.placement.cross_site;
  if (total <= 0) return same_crossing ? "ties with the best: the same groups cross the WAN, the order differs only inside the sites" : "ties with the best";
  std::string s = fmt::format("{:.3g} s slower ({:+.1f}%){}:", total, 100 * total / best.report.step_time.value(),
                              same_crossing ? ", the same groups cross the WAN, the order inside the sites differs" : "");
  int shown = 0;
  for (const auto& part : parts) {
    // The parts that make up most of the difference: the largest, and any other above a tenth of it.
    if (part.delta <= 0 || shown >= 2 || (shown > 0 && part.delta < 0.1 * std::max(total, parts[0].delta))) break;
    s += fmt::format("{} +{:.3g} s {}", shown ? "," : "", part.delta, part.what);
    ++shown;
  }
  if (shown == 0) s += " no part of the breakdown grew";
  return s;
}

PlacementsRun run_placements(const plan::Experiment& e, const PlacementsOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto placements = enumerate_placements(e);
  PlacementsRun run;
  run.name = e.name;
  run.plan = plan::plan_label(e);
  run.devices = e.cluster.devices();
  for (const auto& s : e.cluster.topology.sites) run.sites.push_back(s.name);
  run.jobs = options.jobs;
  std::vector<PlacementResult> results(placements.size());
  std::mutex lock;
  int done = 0;
  core::parallel_pull(placements.size(), options.jobs, [&](std::size_t i) {
    PlacementResult& r = results[i];
    r.placement = placements[i];
    try {
      analysis::SimulateOptions so;
      so.fidelity = options.fidelity;
      const plan::Experiment placed_e = with_placement(e, r.placement);
      r.report = analysis::simulate(placed_e, so);
      if (!r.report.simulated) r.error = r.report.not_simulated;
      else r.spanning = spanning_bytes(placed_e, options.fidelity);
    } catch (const core::Error& err) {
      if (err.kind() == core::ErrorKind::internal) throw;
      r.error = core::format_error(err);
    }
    const std::lock_guard<std::mutex> g(lock);
    ++done;
    if (options.on_progress) options.on_progress(done, static_cast<int>(placements.size()), r);
  });
  // Best step time first; ties and failures keep the enumeration order.
  std::stable_sort(results.begin(), results.end(), [](const PlacementResult& a, const PlacementResult& b) {
    if (a.ok() != b.ok()) return a.ok();
    return a.ok() && a.report.step_time.value() < b.report.step_time.value();
  });
  for (std::size_t i = 1; i < results.size(); ++i) results[i].why_loses = why_loses(results[i], results[0]);
  run.ranked = std::move(results);
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

}  // namespace inflect::search
