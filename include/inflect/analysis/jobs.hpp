#pragma once
// Several jobs on one cluster's sites (`inflect jobs`, docs/geo.md "Several jobs on shared
// sites"): each job, an experiment on its share of the cluster, is placed on nodes by a policy,
// and all of them run together in one engine run over the shared topology, where their transfers
// share NICs, leaves, cores and WAN links max-min. Each job also runs alone on the same devices
// (the others absent), so its slowdown is the sharing alone, and the slowdown is explained by what
// grew in its step (the critical rank's breakdown, together against alone) and by the links it
// shares with other jobs (the WAN links named, with what each job puts on them per step).
//
// Why one merged graph rather than a second engine API: the engine already runs any graph over
// any topology, ranks are devices (sim/lowering), and jobs are independent in their dependencies,
// so a job's ranks renamed to its devices (workload::merge_graphs) is all that running them
// together takes. Each job's graph is compiled at full fidelity: a symmetric graph's mirrors
// assume every rank's links are loaded alike, which another job on some of them breaks.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inflect/analysis/run_report.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/plan/experiment.hpp"

namespace inflect::analysis {

/// pack: each job's nodes in as few sites as possible, job after job (first fit in the sites'
/// order, else the sites with the most free nodes first). spread: each job's nodes split evenly
/// over the sites (one node at a time round the sites with free nodes, in the sites' order).
enum class JobPolicy : std::uint8_t { pack, spread };
const char* policy_name(JobPolicy p);
std::optional<JobPolicy> policy_from_name(std::string_view name);
/// Every policy's name, in enum order (for messages).
std::vector<std::string> policy_names();

/// One job: its experiment (model, training, parallel) with its cluster replaced by its share of
/// the shared cluster: `nodes` nodes of the cluster's device and node, no sites (where those nodes
/// are is the policy's choice, made later).
struct JobSpec {
  std::string name;
  plan::Experiment experiment;
  int nodes = 0;
};

/// A jobs file (io/jobs_loader.hpp): the shared cluster, the jobs, the policies to compare.
struct JobsSpec {
  std::string name;
  std::string file;
  plan::ClusterSpec cluster;  // the shared cluster (its topology's sites and WAN links)
  std::vector<JobSpec> jobs;
  std::vector<JobPolicy> policies;
};

/// The nodes (ascending) each job gets under `policy`, from sites of `site_nodes` nodes each (in
/// node order: site 0 holds nodes [0, site_nodes[0]), ...). Throws core::Error(input) when the
/// jobs need more nodes than the sites hold.
std::vector<std::vector<int>> place_jobs(JobPolicy policy, const std::vector<int>& site_nodes, const std::vector<int>& job_nodes);

/// What one job puts on a link per step: bytes (summed over its collectives' calls, as their
/// lowering loads the link) and the parallel dimensions they serve.
struct LinkUse {
  std::string job;
  double bytes = 0;
  std::string dims;  // "dp", "dp+pp", ...
};

/// A link that carries traffic of this job and of at least one other.
struct SharedLink {
  std::string name;  // Topology::link_name, e.g. "east.core->west.core"
  net::LinkClass cls = net::LinkClass::scale_up;
  std::vector<LinkUse> uses;  // every job that loads it, in the jobs' order
};

struct JobResult {
  std::string name;
  std::vector<int> nodes;                            // where it ran
  std::vector<std::pair<std::string, int>> sites;    // its nodes per site (site order; "" without sites)
  std::string plan;                                  // plan::plan_label
  core::Seconds step_together, step_alone;
  std::optional<double> tokens_per_step;
  std::optional<double> tokens_per_s_together, tokens_per_s_alone;
  double slowdown = 0;  // step_together / step_alone - 1
  Breakdown together, alone;  // its critical rank's (the one of its ranks that ends last)
  std::vector<SharedLink> shared;  // WAN links first, then by link id
  std::string explanation;         // why it is slower together (or that it is not)
};

struct PolicyResult {
  JobPolicy policy = JobPolicy::pack;
  std::vector<JobResult> jobs;  // in the file's order
  double tokens_per_s = 0;        // summed over the jobs, together
  double tokens_per_s_alone = 0;  // summed over the jobs, each alone on the same devices
  std::uint64_t events = 0;       // the joint run's engine events
};

struct JobsRun {
  std::string name;
  std::string file;
  int nodes = 0;
  int devices = 0;
  std::vector<std::string> sites;
  std::vector<PolicyResult> ranked;  // by total throughput together, best first (ties: file order)
  core::Seconds wall;
};

struct JobsOptions {
  int threads = 1;
  /// Called after each engine run (joint or alone) with runs done and total, from a worker thread
  /// (one at a time).
  std::function<void(int done, int total)> on_progress;
};

/// Places, compiles and simulates the jobs under every policy of the spec, together and alone.
/// Throws core::Error(input) naming the job when its plan does not fit its devices' memory.
JobsRun run_jobs(const JobsSpec& spec, const JobsOptions& options = {});

}  // namespace inflect::analysis
