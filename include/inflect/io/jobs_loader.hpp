#pragma once
// A jobs file (`inflect jobs`, docs/geo.md "Several jobs on shared sites"): a shared cluster, the
// jobs that run on it (each an experiment file and its node count) and the placement policies to
// compare.
//
//   name: two-jobs-two-sites
//   cluster: {sites: [...], wan: [...]}     # as an experiment's cluster section
//   jobs:
//     - {name: a, experiment: ../examples/geo/llama3-8b-campus.yaml, nodes: 4}
//     - {name: b, experiment: ../examples/geo/llama3-8b-campus.yaml, nodes: 4}
//   policies: [pack, spread]                # optional; default every policy
//
// A job's experiment gives its model, training and parallel plan; its own cluster section is
// replaced by its share of this cluster (its node count of this cluster's device and node), and
// its plan is checked again on that share (dp derived from it when the experiment leaves dp out).
#include <string>

#include "inflect/analysis/jobs.hpp"
#include "inflect/io/device_catalog.hpp"
#include "inflect/io/yaml_reader.hpp"

namespace inflect::io {

/// Loads and checks a jobs file. Throws core::Error(input) located in the jobs file (or in a job's
/// experiment, for what is wrong there): more nodes asked than the cluster has, a job whose plan
/// does not fit its node count, an unknown policy, a job on another device than the cluster's, a
/// DiLoCo job (several engine runs per step, not merged yet), training.steps above 1 (one step
/// from idle is simulated), cluster.thermal or cluster.variability on the shared cluster (not
/// modelled across jobs yet). Errors of kind io for missing files.
analysis::JobsSpec load_jobs(const std::string& path, const DeviceCatalog& catalog = {});
analysis::JobsSpec parse_jobs(const Node& root, const std::string& base_dir, const DeviceCatalog& catalog = {});

}  // namespace inflect::io
