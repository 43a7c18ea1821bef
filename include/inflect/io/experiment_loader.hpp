#pragma once
// Experiment YAML -> plan::Experiment, with every key declared once in the option table
// (io/options.hpp) and every impossible plan rejected with the file, line, key and what is allowed.
#include <optional>
#include <string>
#include <vector>

#include "inflect/io/device_catalog.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/plan/experiment.hpp"

namespace inflect::io {

/// Loads and validates an experiment file. Relative paths inside it (cluster.topology,
/// cluster.device_file, workload.trace) resolve against the file's directory, then the current
/// directory, then the project root. Device names (cluster.device, the topology's device) are
/// looked up in `catalog` (the embedded one unless the caller added devices: `--catalog`).
/// Throws core::Error(input) for bad content, core::Error(io) for missing files; both carry the
/// file, line and key.
plan::Experiment load_experiment(const std::string& path, const DeviceCatalog& catalog = {});
/// Same from a parsed document; `base_dir` is where relative paths resolve first. With
/// `check_plan_keys` false the checks that involve the plan's degrees (divisibility, dp derived
/// from the device count, the schedule's shape) are skipped and dp is left as written (0 when
/// absent): `inflect search` reads a base experiment whose plan it fills in itself.
plan::Experiment parse_experiment(const Node& root, const std::string& base_dir, bool check_plan_keys = true,
                                  const DeviceCatalog& catalog = {});

/// A `cluster:` section alone (the same keys and checks as an experiment's), for files that
/// describe a cluster without a plan (a jobs file, io/jobs_loader.hpp). Relative paths resolve
/// against `base_dir` as in load_experiment.
plan::ClusterSpec parse_cluster(const Node& cluster, const std::string& base_dir, const DeviceCatalog& catalog = {});

/// The directory bundled topologies/ and workloads/ are found under when a relative path is not
/// found next to the experiment or in the current directory. Set by set_project_root(); else the
/// INFLECT_ROOT environment variable; else the INFLECT_SOURCE_DIR this file was compiled with, if
/// any; else empty (no third place to look). Thread-safe.
std::string project_root();
/// Sets project_root() for the whole process (the CLI and tests pass their INFLECT_SOURCE_DIR).
void set_project_root(std::string dir);

/// Where a relative path `p` from a file in `base_dir` is looked for, in order: base_dir/p, p (the
/// current directory), project_root()/p. An absolute path is looked for only as is.
std::vector<std::string> search_paths(const std::string& p, const std::string& base_dir);
/// The first of search_paths() that is a regular file, or nullopt.
std::optional<std::string> find_input_file(const std::string& p, const std::string& base_dir);

}  // namespace inflect::io
