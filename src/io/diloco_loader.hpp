#pragma once
// training.diloco read from an experiment (the option table declares its keys; docs/experiment.md).
// Separate from experiment_loader.cpp, which reads the rest, to keep that file to one screenful
// per section. Private to io.
#include "inflect/io/yaml_reader.hpp"
#include "inflect/plan/experiment.hpp"

namespace inflect::io {

/// The settings of the `training.diloco` map `node`, each checked against the option table's
/// range, the keys that need each other located at the one written (topk_fraction with topk).
/// Whether they fit the plan (workers against dp, fragments against the layers) is plan::validate's.
plan::DilocoSpec read_diloco(const Node& node);

}  // namespace inflect::io
