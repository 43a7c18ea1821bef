#include "inflect/plan/experiment.hpp"

#include "inflect/core/splitmix.hpp"

namespace inflect::plan {

using core::splitmix64;

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
