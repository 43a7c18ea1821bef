#pragma once
// The scan-file fuzz target (above io, so apart from fuzz_targets.hpp, whose replay test links io
// only): parse a scan and expand its points; the same contract as every parser (fuzz_targets.hpp).
#include "fuzz_targets.hpp"
#include "inflect/scan/scan_file.hpp"

namespace inflect::fuzz {

inline void scan_yaml(const std::uint8_t* data, std::size_t size) {
  const auto spec = scan::parse_scan(as_text(data, size), "<fuzz scan>", io::project_root());
  (void)scan::expand_points(spec);
}

}  // namespace inflect::fuzz
