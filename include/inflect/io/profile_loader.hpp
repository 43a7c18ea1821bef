#pragma once
// Calibrated profiles (`inflect calibrate` writes them; `--profile` reads them) -> the collective
// fits the topology's model is overlaid with.
#include <string>

#include "inflect/io/yaml_reader.hpp"
#include "inflect/net/topology_spec.hpp"

namespace inflect::io {

net::CollectiveProfile parse_profile(const Node& root);
/// Loads a profile file; a missing file is core::Error(io) naming the path.
net::CollectiveProfile load_profile(const std::string& path);
/// Puts `profile` on `spec`; the profile must have been fitted on this topology (its name).
void apply_profile(net::TopologySpec& spec, const net::CollectiveProfile& profile);

}  // namespace inflect::io
