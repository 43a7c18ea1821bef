#pragma once
// Experiment YAML -> plan::Experiment, with every key declared once in the option table
// (io/options.hpp) and every impossible plan rejected with the file, line, key and what is allowed.
#include <string>

#include "inflect/io/yaml_reader.hpp"
#include "inflect/plan/experiment.hpp"

namespace inflect::io {

/// Loads and validates an experiment file. Relative paths inside it (cluster.topology,
/// workload.trace) resolve against the file's directory, then the project root.
plan::Experiment load_experiment(const std::string& path);
/// Same from a parsed document; `base_dir` is where relative paths resolve first.
plan::Experiment parse_experiment(const Node& root, const std::string& base_dir);

}  // namespace inflect::io
