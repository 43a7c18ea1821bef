#pragma once
// A stable fingerprint of text (FNV-1a, 64 bit): the same bytes give the same value on every
// platform and build, so it can be written to a results file and compared by a later run (scan
// points' inputs). Not for security: it only tells two inputs apart.
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace inflect::core {

constexpr std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// The fingerprint as 16 lower-case hex digits.
inline std::string content_hash(std::string_view text) { return fmt::format("{:016x}", fnv1a64(text)); }

}  // namespace inflect::core
