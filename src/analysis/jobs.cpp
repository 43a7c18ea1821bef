// `inflect jobs`: several jobs placed on a cluster's sites, simulated together and alone
// (analysis/jobs.hpp).
#include "inflect/analysis/jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <numeric>

#include "inflect/analysis/simulate.hpp"
#include "inflect/core/error.hpp"
#include "inflect/core/parallel.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/power_model.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/memory.hpp"
#include "inflect/plan/plan_summary.hpp"
#include "inflect/sim/engine.hpp"
#include "inflect/workload/graph_merge.hpp"
#include "analysis/engine_setup.hpp"
#include "analysis/jobs_explain.hpp"

namespace inflect::analysis {

const char* policy_name(JobPolicy p) { return p == JobPolicy::pack ? "pack" : "spread"; }

std::optional<JobPolicy> policy_from_name(std::string_view name) {
  if (name == "pack") return JobPolicy::pack;
  if (name == "spread") return JobPolicy::spread;
  return std::nullopt;
}

std::vector<std::string> policy_names() { return {"pack", "spread"}; }

std::vector<std::vector<int>> place_jobs(JobPolicy policy, const std::vector<int>& site_nodes, const std::vector<int>& job_nodes) {
  const int total = std::accumulate(site_nodes.begin(), site_nodes.end(), 0);
  const int asked = std::accumulate(job_nodes.begin(), job_nodes.end(), 0);
  if (asked > total)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("the jobs ask for {} nodes but the cluster has {}", asked, total));
  // Each site's free nodes, lowest first.
  std::vector<std::vector<int>> free(site_nodes.size());
  int first = 0;
  for (std::size_t s = 0; s < site_nodes.size(); ++s) {
    for (int n = 0; n < site_nodes[s]; ++n) free[s].push_back(first + n);
    first += site_nodes[s];
  }
  auto take = [&](std::size_t s, std::vector<int>& into) {
    into.push_back(free[s].front());
    free[s].erase(free[s].begin());
  };
  std::vector<std::vector<int>> out;
  for (const int want : job_nodes) {
    std::vector<int> mine;
    if (policy == JobPolicy::pack) {
      // First fit: the first site that holds the whole job; else the sites with the most free
      // nodes first (the fewest sites), ties in the sites' order.
      std::optional<std::size_t> fit;
      for (std::size_t s = 0; s < free.size() && !fit; ++s)
        if (static_cast<int>(free[s].size()) >= want) fit = s;
      if (fit) {
        while (static_cast<int>(mine.size()) < want) take(*fit, mine);
      } else {
        std::vector<std::size_t> order(free.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return free[a].size() > free[b].size(); });
        for (const std::size_t s : order)
          while (static_cast<int>(mine.size()) < want && !free[s].empty()) take(s, mine);
      }
    } else {
      // One node at a time round the sites that still have free nodes: an even split where the
      // sites allow it, the rest where there is room.
      while (static_cast<int>(mine.size()) < want)
        for (std::size_t s = 0; s < free.size() && static_cast<int>(mine.size()) < want; ++s)
          if (!free[s].empty()) take(s, mine);
    }
    std::sort(mine.begin(), mine.end());
    out.push_back(std::move(mine));
  }
  return out;
}

namespace {

// One job ready to place: its graph (full fidelity) and what the report says of it.
struct CompiledJob {
  workload::ExecutionGraph graph;
  std::string plan;
};

CompiledJob compile_job(const JobSpec& job) {
  const plan::Experiment& e = job.experiment;
  CompiledJob out;
  SimulateOptions so;
  so.fidelity = plan::Fidelity::full;
  if (!e.workload.model) {
    out.graph = build_graph(e, so);  // a trace: its ranks as recorded
    out.plan = "trace";
    check_graph(e, out.graph, job.name);
    return out;
  }
  plan::check_plan(e);
  const plan::MemoryEstimate mem = plan::estimate_memory(e, plan::derive_dp(e));
  if (!mem.fits())
    throw core::Error(core::ErrorKind::input,
                      fmt::format("job '{}': its plan needs {:.1f} GiB per device, more than the {:.1f} GiB usable of {}", job.name,
                                  mem.peak.value() / 1073741824.0, mem.capacity.value() / 1073741824.0, e.cluster.device.name),
                      core::SourceLocation{e.file, 0, 0, "parallel"});
  plan::CompileOptions co;
  co.fidelity = plan::Fidelity::full;
  plan::CompiledPlan cp = plan::compile(e, co);
  out.graph = std::move(cp.graph);
  out.plan = plan::plan_label(e);
  return out;
}

// One step from idle on the shared cluster, with the engine's options analysis::simulate sets
// (analysis/engine_setup): every device starting at its idle temperature.
struct EngineSetup {
  const plan::ClusterSpec& cluster;
  const net::Topology& topo;
  hw::ComputeModel compute;
  hw::PowerModel power;
  explicit EngineSetup(const plan::ClusterSpec& c, const net::Topology& t) : cluster(c), topo(t), compute(c.device), power(c.device) {}

  sim::EngineResult run(const workload::ExecutionGraph& g) const {
    sim::EngineOptions eo = engine_options(cluster, power);
    eo.power.devices.assign(g.simulated_ranks().size(), base_cooling(cluster, power));
    return sim::run_engine(g, topo, compute, eo);
  }
};

// A rank of the merged graph is a device: the breakdown names it so.
Breakdown breakdown_of(const sim::RankTimes& c, const net::Topology& topo) {
  Breakdown b = analysis::breakdown_of(c, topo.sites() > 1);
  b.critical_rank_note = fmt::format("device {}", c.rank);
  return b;
}

// A job's step in an engine run: its ranks' last end, and the breakdown of the rank that ends last
// (the lowest device on ties, as a report's critical rank).
struct JobStep {
  core::Time step;
  Breakdown breakdown;
};

JobStep job_step(const workload::ExecutionGraph& g, const sim::EngineResult& res, const std::vector<workload::RankId>& devices,
                 const net::Topology& topo) {
  std::vector<char> mine(static_cast<std::size_t>(g.total_ranks()), 0);
  for (const auto d : devices) mine[static_cast<std::size_t>(d)] = 1;
  std::optional<std::size_t> crit;
  for (std::size_t i = 0; i < res.ranks.size(); ++i)
    if (mine[static_cast<std::size_t>(g.simulated_ranks()[i])] && (!crit || res.ranks[i].finish > res.ranks[*crit].finish)) crit = i;
  core::check_invariant(crit.has_value(), "a job has a simulated rank");
  return {res.ranks[*crit].finish, breakdown_of(res.ranks[*crit], topo)};
}

std::vector<workload::RankId> devices_of(const std::vector<int>& nodes, int per_node) {
  std::vector<workload::RankId> out;
  for (const int n : nodes)
    for (int k = 0; k < per_node; ++k) out.push_back(n * per_node + k);
  return out;
}

}  // namespace

JobsRun run_jobs(const JobsSpec& spec, const JobsOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const plan::ClusterSpec& cluster = spec.cluster;
  const net::Topology topo(cluster.topology, cluster.nodes);
  const int per_node = cluster.topology.devices_per_node;
  JobsRun run;
  run.name = spec.name;
  run.file = spec.file;
  run.nodes = cluster.nodes;
  run.devices = cluster.devices();
  for (int s = 0; s < topo.sites(); ++s) run.sites.push_back(topo.site_name(s));

  std::vector<int> site_nodes;
  if (cluster.topology.sites.empty()) site_nodes.push_back(cluster.nodes);
  for (const auto& s : cluster.topology.sites) site_nodes.push_back(s.nodes);
  std::vector<int> job_nodes;
  for (const auto& j : spec.jobs) job_nodes.push_back(j.nodes);

  // Compile every job once (its graph does not depend on where it runs), in parallel.
  std::vector<CompiledJob> compiled(spec.jobs.size());
  core::parallel_pull(spec.jobs.size(), options.threads, [&](std::size_t j) { compiled[j] = compile_job(spec.jobs[j]); });

  // Per policy: where each job runs, the joint graph and each job's alone graph.
  struct PolicyRuns {
    std::vector<std::vector<int>> nodes;
    std::vector<std::vector<workload::RankId>> devices;
    workload::ExecutionGraph together;
    std::vector<workload::ExecutionGraph> alone;
    sim::EngineResult together_res;
    std::vector<sim::EngineResult> alone_res;
  };
  std::vector<PolicyRuns> runs(spec.policies.size());
  for (std::size_t p = 0; p < spec.policies.size(); ++p) {
    PolicyRuns& pr = runs[p];
    pr.nodes = place_jobs(spec.policies[p], site_nodes, job_nodes);
    std::vector<workload::GraphPart> parts;
    for (std::size_t j = 0; j < spec.jobs.size(); ++j) {
      pr.devices.push_back(devices_of(pr.nodes[j], per_node));
      parts.push_back({&compiled[j].graph, pr.devices.back()});
    }
    pr.together = workload::merge_graphs(parts, cluster.devices(), spec.name + " (" + policy_name(spec.policies[p]) + ")");
    for (std::size_t j = 0; j < spec.jobs.size(); ++j)
      pr.alone.push_back(workload::merge_graphs(std::span(parts).subspan(j, 1), cluster.devices(), spec.jobs[j].name));
    pr.alone_res.resize(spec.jobs.size());
  }

  // Every engine run is independent: the joint run and each job alone, per policy.
  const EngineSetup setup(cluster, topo);
  const std::size_t per_policy = spec.jobs.size() + 1;
  const std::size_t total = runs.size() * per_policy;
  std::mutex progress;
  int done = 0;
  core::parallel_pull(total, options.threads, [&](std::size_t i) {
    PolicyRuns& pr = runs[i / per_policy];
    const std::size_t k = i % per_policy;
    if (k == 0) pr.together_res = setup.run(pr.together);
    else pr.alone_res[k - 1] = setup.run(pr.alone[k - 1]);
    if (options.on_progress) {
      const std::lock_guard lock(progress);
      options.on_progress(++done, static_cast<int>(total));
    }
  });

  for (std::size_t p = 0; p < runs.size(); ++p) {
    PolicyRuns& pr = runs[p];
    PolicyResult out;
    out.policy = spec.policies[p];
    out.events = pr.together_res.events;
    std::vector<JobTraffic> traffic;
    for (std::size_t j = 0; j < spec.jobs.size(); ++j)
      traffic.push_back({spec.jobs[j].name, &compiled[j].graph, pr.devices[j]});
    const std::vector<JobLinks> links = job_links(traffic, topo, net::CollectiveTuning::of(cluster.topology));
    for (std::size_t j = 0; j < spec.jobs.size(); ++j) {
      JobResult r;
      r.name = spec.jobs[j].name;
      r.nodes = pr.nodes[j];
      for (int s = 0; s < topo.sites(); ++s) {
        const auto n = std::count_if(r.nodes.begin(), r.nodes.end(), [&](int node) { return topo.site_of_node(node) == s; });
        if (n > 0) r.sites.push_back({topo.site_name(s), static_cast<int>(n)});
      }
      r.plan = compiled[j].plan;
      const JobStep together = job_step(pr.together, pr.together_res, pr.devices[j], topo);
      const JobStep alone = job_step(pr.alone[j], pr.alone_res[j], pr.devices[j], topo);
      r.step_together = core::Seconds(together.step.seconds());
      r.step_alone = core::Seconds(alone.step.seconds());
      r.together = together.breakdown;
      r.alone = alone.breakdown;
      r.slowdown = r.step_alone.value() > 0 ? r.step_together.value() / r.step_alone.value() - 1 : 0;
      r.tokens_per_step = compiled[j].graph.facts().tokens_per_step;
      if (r.tokens_per_step && r.step_together.value() > 0) r.tokens_per_s_together = *r.tokens_per_step / r.step_together.value();
      if (r.tokens_per_step && r.step_alone.value() > 0) r.tokens_per_s_alone = *r.tokens_per_step / r.step_alone.value();
      out.tokens_per_s += r.tokens_per_s_together.value_or(0);
      out.tokens_per_s_alone += r.tokens_per_s_alone.value_or(0);
      r.shared = shared_links(links, traffic, j, topo);
      r.explanation = explain_slowdown(r);
      out.jobs.push_back(std::move(r));
    }
    run.ranked.push_back(std::move(out));
  }
  std::stable_sort(run.ranked.begin(), run.ranked.end(),
                   [](const PolicyResult& a, const PolicyResult& b) { return a.tokens_per_s > b.tokens_per_s; });
  run.wall = core::Seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return run;
}

}  // namespace inflect::analysis
