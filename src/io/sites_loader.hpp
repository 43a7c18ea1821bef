#pragma once
// cluster.sites and cluster.wan (docs/geo.md): the sites of a geo-distributed cluster, each a
// topology file and a node count, and the WAN links joining them. Private to the io layer.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "inflect/io/yaml_reader.hpp"
#include "inflect/net/topology_spec.hpp"

namespace inflect::io {

/// Finds a topology file named by a node (relative to the experiment, else the current directory,
/// else the project root) and returns its path; throws a located error when there is none.
using TopologyResolver = std::function<std::string(const Node&)>;

/// Reads `sites` (a list of {name, topology, nodes}) and `wan` into `cluster`, whose node fabric,
/// device and collectives they must share. `cluster` is the spec of cluster.topology when
/// `cluster_given`, else it is set to the first site's. Returns the nodes of all sites.
std::int64_t read_sites(const Node& sites, const std::optional<Node>& wan, const TopologyResolver& resolve,
               bool cluster_given, net::TopologySpec& cluster);

}  // namespace inflect::io
