#pragma once
// Files compiled into the binary by cmake/embed.cmake: {file name, contents}, sorted by name.
#include <string_view>
#include <utility>
#include <vector>

namespace inflect::io::embedded {

/// calibration/devices/*.yaml
const std::vector<std::pair<std::string_view, std::string_view>>& catalog_devices();
/// calibration/collectives/*.yaml
const std::vector<std::pair<std::string_view, std::string_view>>& catalog_collectives();
/// workloads/models/*.yaml
const std::vector<std::pair<std::string_view, std::string_view>>& catalog_models();

}  // namespace inflect::io::embedded
