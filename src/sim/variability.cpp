#include "inflect/sim/variability.hpp"

#include <cmath>
#include <numbers>

#include "inflect/core/splitmix.hpp"

namespace inflect::sim {
namespace {

using core::splitmix64;

// One key per (seed, rank, slot of draws): a device's factor takes the slot above every op
// position, so it never coincides with a kernel's.
constexpr std::uint64_t kDeviceDraw = std::uint64_t{1} << 63;
std::uint64_t key(std::uint64_t seed, workload::RankId rank, std::uint64_t which) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(rank))) ^ which);
}

}  // namespace

double standard_normal(std::uint64_t k) {
  // Box-Muller: u1 in (0, 1] (never 0, whose log is infinite), u2 in [0, 1).
  const double u1 = (static_cast<double>(splitmix64(k) >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>(splitmix64(k ^ 0xd1b54a32d192ed03ULL) >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double Variability::device_factor(workload::RankId device) const {
  double f = 1;
  if (gpu_speed_spread > 0) f = std::exp(gpu_speed_spread * standard_normal(key(seed, device, kDeviceDraw)));
  for (const Slow& s : slow)
    if (s.device == device) f *= s.time_factor;
  return f;
}

double Variability::kernel_factor(workload::RankId rank, std::uint32_t op, double sigma) const {
  if (!(sigma > 0)) return 1;
  return std::exp(sigma * standard_normal(key(seed, rank, op)));
}

}  // namespace inflect::sim
