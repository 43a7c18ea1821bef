#include "inflect/calib/collective_fit.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <array>
#include <cmath>
#include <limits>

#include "inflect/core/error.hpp"

namespace inflect::calib {
namespace {

// The regressors of one row: 1, x, sqrt(x) (latency, efficiency, pipeline fill).
constexpr int kTerms = 3;

struct Solved {
  std::array<double, kTerms> coef{};
  double sse = std::numeric_limits<double>::infinity();
};

// Weighted least squares over the terms in `use` (the others held at 0); the rows of `a` and `y`
// are already divided by the measured time, so the residuals are relative errors.
Solved solve(const Eigen::MatrixXd& a, const Eigen::VectorXd& y, const std::array<bool, kTerms>& use) {
  std::vector<Eigen::Index> cols;
  for (int j = 0; j < kTerms; ++j)
    if (use[static_cast<std::size_t>(j)]) cols.push_back(j);
  Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
  for (std::size_t k = 0; k < cols.size(); ++k) sub.col(static_cast<Eigen::Index>(k)) = a.col(cols[k]);
  const Eigen::VectorXd c = sub.colPivHouseholderQr().solve(y);
  Solved s;
  for (std::size_t k = 0; k < cols.size(); ++k) s.coef[static_cast<std::size_t>(cols[k])] = c(static_cast<Eigen::Index>(k));
  s.sse = (sub * c - y).squaredNorm();
  return s;
}

}  // namespace

double model_wire_s_per_byte(net::CollectiveOp op, std::span<const net::DeviceId> members, const net::Topology& topo) {
  const net::CollectiveCostModel model = net::collective_cost_model(op, members, topo);
  return model.lines.empty() ? 0.0 : model.reference_wire_s_per_byte();
}

double fitted_time(const net::CollectiveFit& fit, const FitPoint& p) {
  return fit.latency.value() + fit.scale * p.wire_time_s + fit.sqrt_coefficient * std::sqrt(p.wire_time_s);
}

double mean_abs_rel_error(std::span<const double> sizes, std::span<const double> measured_s,
                          std::span<const double> predicted_s, double min_bytes, double max_bytes, int* n) {
  double sum = 0;
  int count = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < min_bytes || sizes[i] >= max_bytes) continue;
    sum += std::abs(predicted_s[i] - measured_s[i]) / measured_s[i];
    ++count;
  }
  if (n) *n = count;
  return count ? sum / count : std::numeric_limits<double>::quiet_NaN();
}

net::CollectiveFit fit_points(net::CollectiveOp op, net::FabricLevel level, std::span<const FitPoint> points,
                              const std::string& source) {
  if (points.size() < kTerms)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: {} rows; a fit of latency, efficiency and pipeline needs at least {}", source,
                                  points.size(), kTerms));
  const auto n = static_cast<Eigen::Index>(points.size());
  Eigen::MatrixXd a(n, kTerms);
  const Eigen::VectorXd y = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const FitPoint& p = points[static_cast<std::size_t>(i)];
    if (!(p.size.value() > 0) || !(p.measured.value() > 0) || !(p.wire_time_s >= 0))
      throw core::Error(core::ErrorKind::input, fmt::format("{}: a row needs a positive size and time", source));
    const double w = 1 / p.measured.value();
    a(i, 0) = w;
    a(i, 1) = p.wire_time_s * w;
    a(i, 2) = std::sqrt(p.wire_time_s) * w;
  }
  // Every coefficient must be >= 0 and the efficiency term > 0: the best feasible fit over the
  // subsets of terms that keep the efficiency (an active set over three terms).
  Solved best;
  for (const std::array<bool, kTerms> use : {std::array<bool, kTerms>{true, true, true}, {true, true, false},
                                             {false, true, true}, {false, true, false}}) {
    const Solved s = solve(a, y, use);
    if (s.coef[0] >= 0 && s.coef[1] > 0 && s.coef[2] >= 0 && s.sse < best.sse) best = s;
  }
  if (!std::isfinite(best.sse))
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: no fit with a positive efficiency (the times do not grow with the size)", source));
  net::CollectiveFit fit;
  fit.op = op;
  fit.level = level;
  fit.latency = core::Seconds(best.coef[0]);
  fit.scale = best.coef[1];
  fit.sqrt_coefficient = best.coef[2];
  fit.source = source;
  return fit;
}

}  // namespace inflect::calib
