#pragma once
// Fitting measured collective times to the collective model: the latency, efficiency and pipeline
// coefficient of net::CollectiveFit (time = a + s x + c sqrt(x), x the size times the model's wire
// time per byte for large messages), by weighted least squares (Eigen) on relative
// error, every coefficient kept >= 0.
#include <span>
#include <string>
#include <vector>

#include "inflect/core/units.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"

namespace inflect::calib {

/// One measured row with what the model says about it.
struct FitPoint {
  core::Bytes size;
  core::Seconds measured;
  double wire_time_s = 0;  // x: the model's bottleneck wire time at this size
};

/// The wire time per byte a fit's x is made of (x = size times it): the model's, for the algorithm
/// and protocol it picks for large messages on this group
/// (net::CollectiveCostModel::reference_wire_s_per_byte); 0 for a group of one.
double model_wire_s_per_byte(net::CollectiveOp op, std::span<const net::DeviceId> members, const net::Topology& topo);

/// Fits the points (at least 3, positive sizes and times) of one collective at one level.
/// `source` names the measurements in the fit's provenance and in errors.
net::CollectiveFit fit_points(net::CollectiveOp op, net::FabricLevel level, std::span<const FitPoint> points,
                              const std::string& source);

/// The fit's time for a point.
double fitted_time(const net::CollectiveFit& fit, const FitPoint& p);

/// Mean absolute relative error of `predicted_s` against `measured_s` over the entries whose
/// size is in [min_bytes, max_bytes); NaN when there are none. Also the count, in `n`.
double mean_abs_rel_error(std::span<const double> sizes, std::span<const double> measured_s,
                          std::span<const double> predicted_s, double min_bytes, double max_bytes, int* n = nullptr);

}  // namespace inflect::calib
