#include "inflect/hw/device.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"

namespace inflect::hw {

double EfficiencyCurve::at(double x) const {
  core::check_invariant(!points.empty(), "EfficiencyCurve::at needs at least one point");
  if (x <= points.front().x) return points.front().efficiency;
  if (x >= points.back().x) return points.back().efficiency;
  // Linear in log10(x): efficiency effects scale with problem size by orders of magnitude.
  const double lx = std::log10(x);
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (x > points[i].x) continue;
    const double x0 = std::log10(points[i - 1].x);
    const double x1 = std::log10(points[i].x);
    const double t = (lx - x0) / (x1 - x0);
    return points[i - 1].efficiency + t * (points[i].efficiency - points[i - 1].efficiency);
  }
  return points.back().efficiency;
}

bool EfficiencyCurve::work_monotone() const {
  // Between two points e(f) = a + b*f with f = log10(x), so d ln(x/e) / df = ln10 - b/e(f). When
  // b > 0 that is smallest where e is, at the left end: x/e never falls iff ln10 * e_left >= b.
  for (std::size_t i = 1; i < points.size(); ++i) {
    const double decades = std::log10(points[i].x) - std::log10(points[i - 1].x);
    if (!(decades > 0)) return false;
    const double slope = (points[i].efficiency - points[i - 1].efficiency) / decades;
    if (slope > 0 && std::log(10.0) * points[i - 1].efficiency < slope) return false;
  }
  return true;
}

core::FlopRate DeviceSpec::peak(core::Precision p) const {
  auto it = peak_dense.find(p);
  if (it != peak_dense.end()) return it->second;
  std::vector<std::string> have;
  for (const auto& [q, rate] : peak_dense) have.emplace_back(core::to_string(q));
  throw core::Error(core::ErrorKind::input,
                    fmt::format("precision: device '{}' has no dense {} peak; supported: {}", name,
                                core::to_string(p), core::join(have)));
}

const EfficiencyCurve& DeviceSpec::gemm_curve(core::Precision p) const {
  auto it = gemm_efficiency_by_precision.find(p);
  return it != gemm_efficiency_by_precision.end() ? it->second : gemm_efficiency;
}

core::Bytes DeviceSpec::usable_memory(int communicators) const {
  return std::max(core::Bytes(0), hbm_capacity - memory_reserve.total(communicators));
}

const AttentionImplementation* DeviceSpec::find_attention(std::string_view implementation) const {
  for (const auto& impl : attention_implementations)
    if (impl.name == implementation) return &impl;
  return nullptr;
}

DeviceSpec DeviceSpec::with_attention(std::string_view implementation) const {
  if (const AttentionImplementation* found = find_attention(implementation)) {
    const AttentionImplementation& impl = *found;
    DeviceSpec d = *this;
    d.attention = impl.name;
    d.attention_efficiency = impl.forward;
    d.attention_backward_efficiency = impl.backward;
    // The selected curve's source under the key reports and `inflect devices` read.
    if (auto it = sources.find("attention." + impl.name); it != sources.end()) d.sources["attention_efficiency"] = it->second;
    if (auto it = sources.find("attention." + impl.name + ".backward"); it != sources.end())
      d.sources["attention_efficiency.backward"] = it->second;
    else
      d.sources.erase("attention_efficiency.backward");
    return d;
  }
  std::vector<std::string> have;
  for (const auto& impl : attention_implementations) have.push_back(impl.name);
  const std::string hint = core::closest_match(implementation, have);
  throw core::Error(core::ErrorKind::input,
                    fmt::format("device '{}' has no attention implementation '{}'{}; it has: {}", name, implementation,
                                hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint),
                                have.empty() ? std::string("none") : core::join(have)));
}

}  // namespace inflect::hw
