#include "inflect/calib/gemm_calibration.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "inflect/core/error.hpp"
#include "inflect/hw/compute_model.hpp"

namespace inflect::calib {

std::vector<GemmUse> usable_gemm_points(const GemmSweep& sweep, const hw::DeviceSpec& device) {
  std::vector<GemmUse> uses;
  for (const GemmPoint& p : sweep.points) {
    if (p.dtype != sweep.points.front().dtype)
      throw core::Error(core::ErrorKind::input,
                        fmt::format("{}:{}: a {} row in a {} sweep; calibrate one precision per file", sweep.file, p.line,
                                    core::to_string(p.dtype), core::to_string(sweep.points.front().dtype)));
    const double wq = hw::wave_quantization(p.m, p.n, 1, device.gemm_tile, device.compute_units);
    uses.push_back({&p, 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) / wq, {}});
  }
  const auto peak = device.peak_dense.find(sweep.points.front().dtype);
  if (peak == device.peak_dense.end())
    throw core::Error(core::ErrorKind::input, fmt::format("{}: device '{}' has no {} peak; it cannot run this sweep",
                                                          sweep.file, device.name, core::to_string(sweep.points.front().dtype)));
  const hw::MeasuringDevice on{peak->second.value(), device.compute_units, device.gemm_tile, device.kernel_launch_overhead};
  // Derived points (the derivation of docs/devices.md: launch and wave quantization divided out);
  // a row the catalog cannot take (slower than its launch, above the peak) is excluded as it says.
  struct Derived {
    GemmUse* use;
    hw::EfficiencyCurve::Point pt;
  };
  // Rows at the sweep's floor of time are the host's or the launch's speed, not the kernel's (torch
  // dispatches a matmul in ~14 us however small): within 25% of the fastest row, excluded.
  double floor_s = std::numeric_limits<double>::infinity();
  for (const auto& u : uses) floor_s = std::min(floor_s, u.point->time.value());
  constexpr double kFloorBand = 1.25;
  std::vector<Derived> derived;
  for (auto& u : uses) {
    if (u.point->time.value() <= kFloorBand * floor_s && uses.size() > 1) {
      u.excluded = fmt::format("host- or launch-bound: {:.1f} us, within 25% of the sweep's fastest row ({:.1f} us), "
                               "so it times the call, not the kernel",
                               u.point->time.value() * 1e6, floor_s * 1e6);
      continue;
    }
    try {
      derived.push_back({&u, hw::gemm_point(u.point->m, u.point->n, u.point->k, core::FlopRate(u.point->tflops * 1e12), on)});
    } catch (const core::Error& e) {
      u.excluded = e.message();
    }
  }
  std::stable_sort(derived.begin(), derived.end(), [](const Derived& a, const Derived& b) { return a.pt.x < b.pt.x; });
  // A curve by size holds one efficiency per size, so rows of other shapes at about the same
  // executed FLOPs are represented by their median: bins of a quarter decade, the median row of
  // each (the lower one of an even count) kept, the others excluded naming it.
  constexpr double kBinsPerDecade = 4;
  std::vector<Derived*> representatives;
  for (std::size_t i = 0; i < derived.size();) {
    const double bin = std::floor(std::log10(derived[i].pt.x) * kBinsPerDecade);
    std::size_t j = i;
    while (j < derived.size() && std::floor(std::log10(derived[j].pt.x) * kBinsPerDecade) == bin) ++j;
    std::vector<Derived*> in_bin;
    for (std::size_t q = i; q < j; ++q) in_bin.push_back(&derived[q]);
    std::stable_sort(in_bin.begin(), in_bin.end(), [](auto* a, auto* b) { return a->pt.efficiency < b->pt.efficiency; });
    Derived* median = in_bin[(in_bin.size() - 1) / 2];
    for (Derived* d : in_bin)
      if (d != median)
        d->use->excluded = fmt::format("represented by line {}, the median of the {} rows of about its size (a curve by size "
                                       "holds one efficiency per size)",
                                       median->use->point->line, in_bin.size());
    representatives.push_back(median);
    i = j;
  }
  // Then, by size, a representative is kept when the curve through those kept before it and it is
  // one the catalog accepts: no larger GEMM finishing sooner along it (EfficiencyCurve::work_monotone).
  hw::EfficiencyCurve kept;
  const GemmUse* last = nullptr;
  for (Derived* d : representatives) {
    kept.points.push_back(d->pt);
    if (!kept.work_monotone()) {
      kept.points.pop_back();
      d->use->excluded = fmt::format("with it a larger GEMM would finish sooner than a smaller one along the curve (after "
                                     "line {})",
                                     last ? last->point->line : 0);
      continue;
    }
    last = d->use;
  }
  return uses;
}

std::string device_with_gemm_sweep(const std::string& device_yaml, const hw::DeviceSpec& device, const GemmSweep& sweep,
                                   const std::string& name, const std::string& measurement_id, const std::string& source) {
  if (sweep.points.empty()) throw core::Error(core::ErrorKind::input, fmt::format("{}: no GEMM rows", sweep.file));
  const core::Precision dtype = sweep.points.front().dtype;
  if (!device.peak_dense.count(dtype))
    throw core::Error(core::ErrorKind::input, fmt::format("{}: device '{}' has no {} peak; it cannot run this sweep",
                                                          sweep.file, device.name, core::to_string(dtype)));
  const std::vector<GemmUse> uses = usable_gemm_points(sweep, device);
  if (std::none_of(uses.begin(), uses.end(), [](const GemmUse& u) { return u.excluded.empty(); }))
    throw core::Error(core::ErrorKind::input, fmt::format("{}: no usable GEMM row", sweep.file));

  YAML::Node doc = YAML::Load(device_yaml);
  doc["name"] = name;
  YAML::Node m;
  m["id"] = measurement_id;
  m["dtype"] = std::string(core::to_string(dtype));
  m["source"] = source;
  for (const GemmUse& u : uses) {
    YAML::Node pt;
    pt.SetStyle(YAML::EmitterStyle::Flow);
    pt["shape"] = fmt::format("{}x{}x{}", u.point->m, u.point->n, u.point->k);
    pt["rate"] = fmt::format("{:.6g}TFLOP/s", u.point->tflops);
    if (!u.excluded.empty()) pt["excluded"] = fmt::format("line {}: {}", u.point->line, u.excluded);
    m["points"].push_back(pt);
  }
  doc["gemm"]["measurements"].push_back(m);
  YAML::Node curve;
  curve.SetStyle(YAML::EmitterStyle::Flow);
  curve["shape"] = measurement_id;
  curve["note"] = fmt::format("calibrated from {} (inflect calibrate)", sweep.file);
  doc["gemm"]["curves"][std::string(core::to_string(dtype))] = curve;
  YAML::Emitter out;
  out << YAML::Comment(fmt::format("Device '{}' calibrated by `inflect calibrate` from {}: the catalog's '{}' with the "
                                   "sweep as its {} GEMM curve.",
                                   name, sweep.file, device.name, core::to_string(dtype)))
      << YAML::Newline << doc;
  return std::string(out.c_str()) + "\n";
}

}  // namespace inflect::calib
