#include "inflect/plan/experiment.hpp"

namespace inflect::plan {
namespace {

// splitmix64 (Steele, Lea, Flood 2014): a fixed, portable mix, so the same seed gives the same
// spread on every platform (std::uniform_real_distribution's output is implementation-defined).
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

double ThermalVariation::resistance_scale(int device, int devices_per_node) const {
  double scale = 1;
  if (spread > 0) {
    const std::uint64_t h = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(device)));
    const double u = static_cast<double>(h >> 11) * 0x1.0p-53 * 2 - 1;  // [-1, 1)
    scale *= 1 + spread * u;
  }
  for (const Hot& h : hot)
    if (h.device == device || (h.local_rank >= 0 && devices_per_node > 0 && device % devices_per_node == h.local_rank))
      scale *= h.resistance_scale;
  return scale;
}

}  // namespace inflect::plan
