#include "inflect/io/jobs_loader.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "inflect/core/strings.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/plan/compiler.hpp"
#include "inflect/plan/validate.hpp"

namespace inflect::io {
namespace {

namespace fs = std::filesystem;

std::string dir_of(const std::string& path) {
  const std::string d = fs::path(path).parent_path().string();
  return d.empty() ? "." : d;
}

// The job's experiment on its share of the cluster: `nodes` nodes of the shared cluster's device
// and node fabric, without sites (where the nodes are is the policy's to decide).
plan::ClusterSpec share_of(const plan::ClusterSpec& cluster, const hw::DeviceSpec& device, int nodes) {
  plan::ClusterSpec c = cluster;
  c.nodes = nodes;
  c.topology.sites.clear();
  c.topology.wan.clear();
  c.device = device;  // the experiment's: the same device, with its training's attention chosen
  return c;
}

analysis::JobSpec read_job(const Node& item, const std::string& base_dir, const plan::ClusterSpec& cluster,
                           const DeviceCatalog& catalog) {
  MapReader r(item);
  analysis::JobSpec job;
  // Unknown keys first: a misspelt `nodes` is said as such, not as a missing one.
  const auto name_node = r.optional("name");
  const auto exp_node = r.optional("experiment");
  const auto nodes_node = r.optional("nodes");
  r.finish();
  // Unknown keys first (finish above), then what is missing, at the job's map.
  for (const auto& [present, key] : {std::pair{name_node.has_value(), "name"}, std::pair{exp_node.has_value(), "experiment"},
                                     std::pair{nodes_node.has_value(), "nodes"}})
    if (!present) r.node().fail(fmt::format("missing required key '{}'", key));
  const Node& name = *name_node;
  const Node& exp = *exp_node;
  const Node& nodes = *nodes_node;
  job.name = name.as_string();
  if (job.name.empty()) name.fail("empty job name");
  job.nodes = static_cast<int>(nodes.as_int(1, cluster.nodes));
  const auto path = find_input_file(exp.as_string(), base_dir);
  if (!path)
    throw core::Error(core::ErrorKind::io,
                      fmt::format("experiment file '{}' not found; looked in: {}", exp.as_string(),
                                  core::join(search_paths(exp.as_string(), base_dir))),
                      exp.where());
  // The experiment as written, on its own cluster; its plan is checked below on its share.
  const Node root = load_yaml_file(*path, "experiment");
  plan::Experiment e = parse_experiment(root, dir_of(*path), /*check_plan_keys=*/false, catalog);
  if (e.cluster.device.name != cluster.device.name)
    exp.fail(fmt::format("job '{}' runs on device '{}' but the cluster's device is '{}'; a job runs on the cluster's devices",
                         job.name, e.cluster.device.name, cluster.device.name));
  if (e.training.diloco)
    exp.fail(fmt::format("job '{}' trains with training.diloco, whose step is several engine runs; several jobs together "
                         "run synchronous plans and traces only",
                         job.name));
  if (e.training.steps > 1)
    exp.fail(fmt::format("job '{}' asks for training.steps: {}; jobs together simulate one step from idle, so give 1 (or "
                         "leave it out)",
                         job.name, e.training.steps));
  e.cluster = share_of(cluster, e.cluster.device, job.nodes);
  if (e.workload.model) {
    const std::vector<plan::Problem> problems = plan::validate(e);
    if (!problems.empty())
      nodes.fail(fmt::format("job '{}' on {} nodes ({} devices): {}: {}", job.name, job.nodes, e.cluster.devices(),
                             problems.front().key, problems.front().message));
    if (e.parallel.dp == 0) e.parallel.dp = plan::derive_dp(e);
  }
  job.experiment = std::move(e);
  return job;
}

}  // namespace

analysis::JobsSpec parse_jobs(const Node& root, const std::string& base_dir, const DeviceCatalog& catalog) {
  if (!root.is_map()) root.fail("expected a jobs file: a map with cluster, jobs and policies");
  // An experiment handed to `inflect jobs`: say which command reads it, not "missing jobs".
  for (const char* k : {"model", "training", "parallel", "workload"})
    if (root.raw()[k])
      root.child(k).fail(fmt::format("this is an experiment file (it has `{}:`); run it with `inflect run FILE`, or list it "
                                     "under a jobs file's `jobs:`",
                                     k));
  MapReader r(root);
  analysis::JobsSpec spec;
  spec.file = root.file();
  spec.name = fs::path(root.file()).stem().string();
  if (auto n = r.optional("name")) spec.name = n->as_string();
  const Node cluster = r.required("cluster");
  spec.cluster = parse_cluster(cluster, base_dir, catalog);
  if (spec.cluster.thermal.any()) cluster.child("thermal").fail("cluster.thermal is not modelled for several jobs yet; leave it out");
  if (spec.cluster.variability.any())
    cluster.child("variability").fail("cluster.variability is not modelled for several jobs yet; leave it out");
  const Node jobs = r.required("jobs");
  const std::vector<Node> items = jobs.items();
  if (items.empty()) jobs.fail("no jobs; list at least one {name, experiment, nodes}");
  int asked = 0;
  std::set<std::string> names;
  for (const Node& item : items) {
    spec.jobs.push_back(read_job(item, base_dir, spec.cluster, catalog));
    if (!names.insert(spec.jobs.back().name).second)
      item.child("name").fail(fmt::format("job name '{}' is given twice; name each job once", spec.jobs.back().name));
    asked += spec.jobs.back().nodes;
    // One engine runs every job's kernels with one device model, whose attention kernel is the
    // training's choice (training.attention): the jobs must agree on it.
    const auto& first = spec.jobs.front().experiment.cluster.device;
    const auto& mine = spec.jobs.back().experiment.cluster.device;
    if (mine.attention != first.attention)
      item.child("experiment")
          .fail(fmt::format("job '{}' runs attention '{}' but job '{}' runs '{}'; jobs together share one device model, so give "
                            "them the same training.attention",
                            spec.jobs.back().name, mine.attention, spec.jobs.front().name, first.attention));
  }
  // The engine's device: the cluster's, with the jobs' attention kernel.
  spec.cluster.device = spec.jobs.front().experiment.cluster.device;
  if (asked > spec.cluster.nodes)
    jobs.fail(fmt::format("the jobs ask for {} nodes but the cluster has {}", asked, spec.cluster.nodes));
  if (auto p = r.optional("policies")) {
    for (const Node& item : p->items()) {
      const auto policy = analysis::policy_from_name(item.as_choice(analysis::policy_names()));
      for (const auto q : spec.policies)
        if (q == *policy) item.fail(fmt::format("policy '{}' is given twice", analysis::policy_name(q)));
      spec.policies.push_back(*policy);
    }
    if (spec.policies.empty()) p->fail("no policies; give one or more of pack, spread (or leave policies out for both)");
  } else {
    spec.policies = {analysis::JobPolicy::pack, analysis::JobPolicy::spread};
  }
  r.finish();
  return spec;
}

analysis::JobsSpec load_jobs(const std::string& path, const DeviceCatalog& catalog) {
  const Node root = load_yaml_file(path, "jobs file");
  return parse_jobs(root, dir_of(path), catalog);
}

}  // namespace inflect::io
