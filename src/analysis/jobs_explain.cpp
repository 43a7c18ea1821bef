#include "analysis/jobs_explain.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "inflect/analysis/inflection.hpp"
#include "inflect/sim/collective_op.hpp"

namespace inflect::analysis {
namespace {

std::string dims_text(unsigned dims) {
  std::string out;
  for (int d = 0; d < workload::kParallelDims; ++d)
    if (dims & (1u << d)) out = fmt::format("{}{}{}", out, out.empty() ? "" : "+", workload::to_string(static_cast<workload::ParallelDim>(d)));
  return out;
}

// "WAN east.core->west.core (a: dp 10.7 GB, b: dp 10.7 GB per step)" and "16 leaf_up links".
std::string shared_text(const std::vector<SharedLink>& shared) {
  std::vector<std::string> parts;
  int wan = 0;
  std::map<std::string, int> others;
  for (const SharedLink& l : shared) {
    if (l.cls != net::LinkClass::wan) {
      ++others[net::to_string(l.cls)];
      continue;
    }
    if (++wan > 2) continue;
    std::string uses;
    for (const LinkUse& u : l.uses) uses += fmt::format("{}{}: {} {:.3g} GB", uses.empty() ? "" : ", ", u.job, u.dims, u.bytes / 1e9);
    parts.push_back(fmt::format("WAN {} ({} per step)", l.name, uses));
  }
  if (wan > 2) parts.push_back(fmt::format("{} more WAN links", wan - 2));
  for (const auto& [cls, n] : others) parts.push_back(fmt::format("{} {} link{}", n, cls, n == 1 ? "" : "s"));
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out = fmt::format("{}{}{}", out, i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ", parts[i]);
  return out;
}

}  // namespace

std::vector<JobLinks> job_links(const std::vector<JobTraffic>& jobs, const net::Topology& topo, const net::CollectiveTuning& tuning) {
  std::vector<JobLinks> out(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const workload::ExecutionGraph& g = *jobs[j].graph;
    // Calls per collective: each call counted once, on its group's first member.
    std::vector<double> calls(g.collectives().size(), 0);
    for (workload::OpId id = 0; id < g.op_count(); ++id) {
      const workload::Op op = g.op(id);
      if (op.type != workload::OpType::collective) continue;
      if (g.groups()[g.collectives()[op.payload].group].members.front() == op.rank) calls[op.payload] += 1;
    }
    for (std::size_t c = 0; c < calls.size(); ++c) {
      if (calls[c] == 0) continue;
      const workload::Collective& coll = g.collectives()[c];
      std::vector<net::DeviceId> members;
      for (const auto m : g.groups()[coll.group].members) members.push_back(jobs[j].devices[static_cast<std::size_t>(m)]);
      auto add = [&](workload::CollectiveKind kind, core::Bytes bytes) {
        const net::LoweredCollective lc = net::lower_collective(sim::to_net(kind), members, bytes, topo, tuning);
        for (const auto& ph : lc.phases)
          for (const auto& [l, b] : ph.link_bytes) {
            JobLinks::Use& u = out[j].links[l];
            u.bytes += b * calls[c];
            u.dims |= 1u << static_cast<unsigned>(coll.dim);
          }
      };
      add(coll.kind, coll.bytes);
      for (const auto& part : coll.then) add(part.kind, part.bytes);
    }
  }
  return out;
}

std::vector<SharedLink> shared_links(const std::vector<JobLinks>& links, const std::vector<JobTraffic>& jobs, std::size_t j,
                                     const net::Topology& topo) {
  std::vector<SharedLink> out;
  for (const auto& [l, use] : links[j].links) {
    bool shared = false;
    for (std::size_t k = 0; k < links.size() && !shared; ++k) shared = k != j && links[k].links.count(l) > 0;
    if (!shared) continue;
    SharedLink s;
    s.name = topo.link_name(l);
    s.cls = topo.links()[l].cls;
    for (std::size_t k = 0; k < links.size(); ++k)
      if (const auto it = links[k].links.find(l); it != links[k].links.end())
        s.uses.push_back({jobs[k].name, it->second.bytes, dims_text(it->second.dims)});
    out.push_back(std::move(s));
  }
  std::stable_partition(out.begin(), out.end(), [](const SharedLink& s) { return s.cls == net::LinkClass::wan; });
  return out;
}

std::string explain_slowdown(const JobResult& r) {
  const std::string shared = shared_text(r.shared);
  const double grew = r.step_together.value() - r.step_alone.value();
  if (!(grew > 0)) {
    if (r.shared.empty()) return "no slowdown: no link carries another job's traffic";
    return fmt::format("no slowdown, although it shares {}", shared);
  }
  // The part of the critical rank's step that grew most, named as every other report names it.
  const auto [alone, together] = paired_breakdown_components(r.alone, r.together);
  std::size_t top = 0;
  for (std::size_t i = 1; i < alone.size(); ++i)
    if (together[i].second - alone[i].second > together[top].second - alone[top].second) top = i;
  const double top_grew = together[top].second - alone[top].second;
  return fmt::format("{} +{:.4g} ms of the +{:.4g} ms; {}", together[top].first, top_grew * 1e3, grew * 1e3,
                     r.shared.empty() ? std::string("it shares no link with another job") : fmt::format("it shares {}", shared));
}

}  // namespace inflect::analysis
