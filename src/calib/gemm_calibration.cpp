#include "inflect/calib/gemm_calibration.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

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
  std::vector<GemmUse*> order;
  for (auto& u : uses) order.push_back(&u);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->executed_flops < b->executed_flops; });
  const GemmUse* last = nullptr;  // the last kept point, by executed FLOPs
  for (GemmUse* u : order) {
    if (last && u->executed_flops == last->executed_flops) {
      u->excluded = fmt::format("the same executed FLOPs as line {} (a 1-D curve holds one point per size)", last->point->line);
    } else if (last && u->point->time.value() < last->point->time.value()) {
      u->excluded = fmt::format("finishes sooner than the smaller GEMM of line {}: its shape, not its size, sets its speed, "
                                "which a curve by size cannot hold",
                                last->point->line);
    } else {
      last = u;
    }
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
