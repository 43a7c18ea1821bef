#pragma once
// Devices that do not all run at one speed (docs/variability.md).
//
// Chips of one SKU differ: Sinha et al. (SC'22, arXiv 2208.11035) measured an 8% (up to 22%)
// average performance variation across the GPUs of five clusters, outliers 1.5x slower than the
// median GPU; Meta's PRISM (arXiv 2510.15596) up to 14% on GEMMs and 9% GPU-time variability at
// 64k GPUs. Every synchronising collective waits for its slowest member, so the expected step
// grows with the number of members even though no single device changed.
//
// Each device's kernels take a time factor drawn once from (seed, device): exp(spread * z), z
// standard normal, so the median device is the calibrated one; named slow devices multiply it.
// Optionally each kernel also takes exp(jitter * z') with z' drawn from (seed, rank, op). Every
// draw is a pure function of its key (splitmix64, Box-Muller): the same seed gives the same
// factors whatever the thread count, and a run is reproducible bit for bit.
#include <cstdint>
#include <vector>

#include "inflect/workload/ids.hpp"

namespace inflect::sim {

struct Variability {
  /// Standard deviation of ln(a device's kernel-time factor); 0 = every device as calibrated.
  double gpu_speed_spread = 0;
  /// Standard deviation of ln(one kernel's time factor), drawn per (seed, rank, op) on top of its
  /// device's; 0 = none. A fused op (several kernels) draws once with the spread its parts' sum
  /// would have: jitter * sqrt(sum of squared part times) / (sum of part times).
  double kernel_jitter = 0;
  std::uint64_t seed = 1;
  /// A device whose kernels take `time_factor` times as long (on top of the drawn factor).
  struct Slow {
    workload::RankId device = 0;
    double time_factor = 1;
  };
  std::vector<Slow> slow;

  bool any() const { return gpu_speed_spread > 0 || kernel_jitter > 0 || !slow.empty(); }
  /// The factor on every kernel time of `device`: exp(gpu_speed_spread * z) times the factors of
  /// the slow entries that name it. Exactly 1 when neither applies.
  double device_factor(workload::RankId device) const;
  /// One kernel's jitter on `rank`: exp(sigma * z), z drawn from (seed, rank, op). `op` is the op's
  /// position in its rank's issue order, the same on every rank that runs the same ops.
  double kernel_factor(workload::RankId rank, std::uint32_t op, double sigma) const;
};

/// A standard normal variate that is a pure function of `key` (Box-Muller on two splitmix64
/// outputs): portable, and independent of any generator's state.
double standard_normal(std::uint64_t key);

}  // namespace inflect::sim
