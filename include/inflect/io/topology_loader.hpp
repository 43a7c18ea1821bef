#pragma once
// topologies/*.yaml -> net::TopologySpec.
#include <string>

#include "inflect/io/yaml_reader.hpp"
#include "inflect/net/topology_spec.hpp"

namespace inflect::io {

/// Parses one topology document (strict keys, sources required for figures).
net::TopologySpec parse_topology(const Node& root);
/// Loads a topology file; a missing file is core::Error(io) naming the path.
net::TopologySpec load_topology(const std::string& path);

}  // namespace inflect::io
