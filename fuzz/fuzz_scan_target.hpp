#pragma once
// The scan-file fuzz target (above io, so apart from fuzz_targets.hpp, whose replay test links io
// only): parse a scan and expand its points; the same contract as every parser (fuzz_targets.hpp).
#include "fuzz_targets.hpp"
#include "inflect/scan/scan_file.hpp"

namespace inflect::fuzz {

/// Expands the points only up to the CLI's default budget (`scan --max-points`, 10,000): past it
/// the command refuses before expanding, and a 100,000-point expansion of large documents takes
/// gigabytes, which libFuzzer would report as out-of-memory (the parser's own cap is checked above).
inline constexpr double kFuzzPointBudget = 10000;

inline void scan_yaml(const std::uint8_t* data, std::size_t size) {
  const auto spec = scan::parse_scan(as_text(data, size), "<fuzz scan>", io::project_root());
  if (scan::points_before_filters(spec) > kFuzzPointBudget) return;
  (void)scan::expand_points(spec);
}

}  // namespace inflect::fuzz
