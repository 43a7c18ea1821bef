#pragma once
// A calibrated profile as a file: what `inflect calibrate` writes (io::load_profile reads it back).
// It overlays the topology's collective figures with fits made on the user's own measurements,
// each with its provenance (file, rows, error before and after).
#include <string>

#include "inflect/net/collective_library.hpp"

namespace inflect::calib {

/// The profile as YAML (yaml-cpp's emitter), a header comment saying how it was made.
/// `device_file`, if not empty, is written as given (a path relative to the profile).
std::string profile_yaml(const net::CollectiveProfile& profile, const std::string& header_comment,
                         const std::string& device_file = "");

/// "all_reduce", "all_gather", ... (nccl-tests' names, as profiles and tables write them).
const char* op_key(net::CollectiveOp op);
const char* level_key(net::FabricLevel level);

}  // namespace inflect::calib
