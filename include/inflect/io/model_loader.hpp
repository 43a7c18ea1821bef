#pragma once
// Model descriptions: presets (workloads/models/*.yaml, embedded into the binary) and inline
// fields in an experiment's `model:` map, with `preset:` plus overrides.
#include <string>
#include <vector>

#include "inflect/io/yaml_reader.hpp"
#include "inflect/workload/model.hpp"

namespace inflect::io {

/// Names of the embedded presets, sorted.
std::vector<std::string> model_preset_names();
/// The preset `name`; throws core::Error(input) with a did-you-mean on an unknown name.
workload::ModelSpec model_preset(const std::string& name);
/// An experiment's `model:` map: `preset: NAME` with optional overriding fields, or all fields
/// inline. Checks the shape (hidden % heads == 0, heads % kv_heads == 0, ...).
workload::ModelSpec parse_model(const Node& model_map);

}  // namespace inflect::io
