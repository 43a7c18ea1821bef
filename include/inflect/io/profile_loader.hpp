#pragma once
// Calibrated profiles (`inflect calibrate` writes them; `--profile` reads them): the collective
// fits the topology's model is overlaid with, and optionally a calibrated device (the catalog's
// device with the user's GEMM sweeps as its curves) that the run then uses.
#include <optional>
#include <string>

#include "inflect/io/device_catalog.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/net/topology_spec.hpp"
#include "inflect/plan/experiment.hpp"

namespace inflect::io {

struct Profile {
  net::CollectiveProfile collectives;
  std::string device_file;  // the calibrated device (resolved against the profile), empty if none
  /// The profile's `algorithm:` / `protocol:`: the choice its cluster runs (its NCCL_ALGO /
  /// NCCL_PROTO), applied where neither the experiment nor the topology forces one.
  std::optional<net::Algorithm> algorithm;
  std::optional<net::Protocol> protocol;
};

Profile parse_profile(const Node& root);
/// Loads a profile file; a missing file is core::Error(io) naming the path.
Profile load_profile(const std::string& path);
/// Puts the profile's collective fits on `spec`; the profile must have been fitted on this
/// topology (its name).
void apply_profile(net::TopologySpec& spec, const net::CollectiveProfile& profile);
/// The whole profile on an experiment: its fits on the topology, its device (if any) as the
/// cluster's device (read with load_device_file, so its name may not take a catalog device's).
void apply_profile(plan::Experiment& e, const Profile& profile, const DeviceCatalog& catalog = {});

}  // namespace inflect::io
