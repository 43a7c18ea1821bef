#pragma once
// The one seeded mix every reproducible draw uses (cluster.thermal's spread, cluster.variability's
// speed factors): splitmix64 (Steele, Lea, Flood 2014, "Fast splittable pseudorandom number
// generators"), fixed and portable, so the same seed gives the same draws on every platform and
// standard library (std::*_distribution's output is implementation-defined).
#include <cstdint>

namespace inflect::core {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace inflect::core
