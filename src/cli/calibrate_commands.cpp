// `inflect check-collectives FILE --topology T [--profile P]`: every row of a measured
// nccl-tests table against the model (or a calibrated profile), and the mean error.
// `inflect calibrate PATH --topology T --out P.yaml`: fits the collective model to the tables in
// PATH (a file or a folder) and writes the profile, with what it changed per file.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "inflect/calib/calibrate.hpp"
#include "inflect/calib/collective_check.hpp"
#include "inflect/calib/gemm_calibration.hpp"
#include "inflect/calib/gemm_sweep.hpp"
#include "inflect/calib/profile.hpp"
#include "inflect/calib/telemetry.hpp"
#include "inflect/calib/thermal_fit.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/io/device_catalog.hpp"
#include "inflect/core/error.hpp"
#include "inflect/io/profile_loader.hpp"
#include "inflect/io/topology_loader.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/net/collective.hpp"

namespace inflect::cli {
namespace {

std::optional<calib::NcclCollective> kind_arg(const std::string& s) {
  if (s.empty()) return std::nullopt;
  auto k = calib::parse_nccl_collective(s);
  if (!k)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("unknown collective '{}'; allowed: {}", s, calib::kNcclCollectiveNames));
  return k;
}

calib::NcclTable read_table(const std::string& path, const std::string& collective) {
  return calib::parse_nccl_tests(io::read_text_file(path, "nccl-tests result file"), path, kind_arg(collective));
}

using calib::percent;

}  // namespace

int cmd_check_collectives(const CheckCollectivesArgs& a) {
  net::TopologySpec spec = io::load_topology(a.table.topology);
  if (!a.profile.empty()) io::apply_profile(spec, io::load_profile(a.profile).collectives);
  const calib::NcclTable table = read_table(a.file, a.table.collective);
  const calib::TableGroup group = calib::table_group(table, spec, a.table.ranks, a.table.nodes);
  const calib::TableCheck check = calib::check_table(table, spec, group);
  std::printf("# %s (%s): %d ranks, %d node%s x %d, on %s%s\n", a.file.c_str(), table.format.c_str(), group.ranks,
              group.nodes, group.nodes == 1 ? "" : "s", group.per_node, spec.name.c_str(),
              a.profile.empty() ? " (uncalibrated)" : fmt::format(" with profile {}", a.profile).c_str());
  std::printf("# %6s  %-14s  %13s  %11s  %11s  %7s  %10s  %10s  %s\n", "line", "collective", "size (B)", "meas (us)",
              "sim (us)", "error", "meas busbw", "sim busbw", "algorithm");
  for (const auto& r : check.rows) {
    const int p = r.op == net::CollectiveOp::send_recv ? 2 : group.ranks;
    const double f = net::busbw_factor(r.op, p);
    const double err = (r.simulated.value() - r.measured.value()) / r.measured.value();
    std::printf("  %6d  %-14s  %13.0f  %11.2f  %11.2f  %+6.1f%%  %10.2f  %10.2f  %s/%s%s\n", r.line, net::to_string(r.op),
                r.size.value(), r.measured.value() * 1e6, r.simulated.value() * 1e6, 100 * err,
                r.size.value() / r.measured.value() * f / 1e9, r.size.value() / r.simulated.value() * f / 1e9,
                r.algorithm.c_str(), r.protocol.c_str(), r.forced ? " (as measured)" : "");
  }
  for (const auto& s : check.skipped) std::printf("# skipped %s\n", s.c_str());
  const calib::TableErrors e = calib::table_errors(check);
  std::printf("MAPE %s over %d rows (>= 1 MiB)\n", percent(e.large).c_str(), e.large_rows);
  if (e.small_rows > 0) std::printf("MAPE %s over %d rows (< 1 MiB)\n", percent(e.small).c_str(), e.small_rows);
  return 0;
}

namespace {

/// The GEMM model's time for one measured row, on `device`.
double gemm_model_s(const hw::ComputeModel& model, const calib::GemmPoint& p) {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  return model.duration(core::gemm_cost(d(p.m), d(p.n), d(p.k), p.dtype)).seconds();
}

/// The catalog device with every sweep as its curve for the sweep's precision and the thermal fit
/// of every telemetry log; prints each one's figures. Returns the device file's text.
std::string calibrated_device(const std::vector<calib::GemmSweep>& sweeps, const std::vector<calib::TelemetryTable>& logs,
                              const hw::DeviceSpec& base, const std::string& name, const std::string& file_name,
                              std::optional<double> inlet_c, bool liquid) {
  std::string text = io::device_yaml_text(base);
  for (const auto& log : logs) {
    if (!inlet_c)
      throw core::Error(core::ErrorKind::input,
                        fmt::format("{}: a thermal fit needs the inlet temperature the log ran at; give --inlet-c", log.file));
    const calib::ThermalFit fit = calib::fit_thermal(log, core::Celsius(*inlet_c));
    std::printf("%s: %zu steps of load; R %.4g C/W (%s), tau %.3g s, C %.3g J/C (catalog: R %.4g, C %.3g)\n",
                log.file.c_str(), fit.steps.size(), fit.resistance_c_per_w, liquid ? "liquid" : "air", fit.tau_s,
                fit.capacitance_j_per_c,
                liquid ? base.thermal.resistance_liquid_c_per_w : base.thermal.resistance_air_c_per_w,
                base.thermal.capacitance_j_per_c);
    text = calib::device_with_thermal_fit(text, fit, liquid, name);
  }
  if (sweeps.empty()) {
    (void)io::parse_device(io::load_yaml_string(text, file_name));
    return text;
  }
  for (std::size_t i = 0; i < sweeps.size(); ++i) {
    const auto& s = sweeps[i];
    const std::string id = fmt::format("{}-{}-sweep{}", name, core::to_string(s.points.front().dtype), i + 1);
    text = calib::device_with_gemm_sweep(text, base, s, name, id, fmt::format("{} (inflect calibrate)", s.file));
  }
  // The result must load as any device file does (derived points with efficiency <= 1, a curve a
  // larger GEMM never runs faster on): the catalog's own checks, located in the new file.
  const hw::DeviceSpec calibrated = io::parse_device(io::load_yaml_string(text, file_name));
  const hw::ComputeModel before(base), after(calibrated);
  // The error over every row of the sweep, the ones the curve does not hold included.
  std::printf("%-64s  %5s  %-7s  %-11s  %-11s\n", "GEMM sweep", "rows", "on curve", "model", "calibrated");
  for (const auto& s : sweeps) {
    std::vector<double> sizes, meas, b, c;
    int kept = 0;
    for (const auto& u : calib::usable_gemm_points(s, base)) {
      kept += u.excluded.empty();
      sizes.push_back(1);
      meas.push_back(u.point->time.value());
      b.push_back(gemm_model_s(before, *u.point));
      c.push_back(gemm_model_s(after, *u.point));
    }
    std::printf("%-64s  %5zu  %-7d  %-11s  %-11s\n", s.file.c_str(), s.points.size(), kept,
                percent(calib::mean_abs_rel_error(sizes, meas, b, 0, 2)).c_str(),
                percent(calib::mean_abs_rel_error(sizes, meas, c, 0, 2)).c_str());
  }
  return text;
}

}  // namespace

int cmd_calibrate(const CalibrateArgs& a) {
  net::TopologySpec spec = io::load_topology(a.table.topology);
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  if (fs::is_directory(a.path)) {
    for (const auto& entry : fs::directory_iterator(a.path)) {
      const std::string name = entry.path().filename().string();
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || name.rfind("README", 0) == 0) continue;
      if (ext == ".txt" || ext == ".json" || ext == ".md" || ext == ".log" || ext == ".csv")
        files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(a.path)) {
    files.push_back(a.path);
  } else {
    throw core::Error(core::ErrorKind::io, fmt::format("'{}' is neither a file nor a folder of nccl-tests results", a.path));
  }
  if (files.empty())
    throw core::Error(core::ErrorKind::input,
                      fmt::format("no measurements (nccl-tests *.txt, *.json, *.md, *.log; GEMM sweeps *.csv) in '{}'", a.path));

  const std::string name = a.name.empty() ? fs::path(a.out).stem().string() : a.name;
  std::vector<calib::NcclTable> tables;
  std::vector<calib::GemmSweep> sweeps;
  std::vector<calib::TelemetryTable> logs;
  for (const auto& f : files) {
    if (fs::path(f).extension() != ".csv") {
      tables.push_back(read_table(f, a.table.collective));
      continue;
    }
    // A CSV is a GEMM sweep when its header names M, N and K, else a telemetry log.
    const std::string text = io::read_text_file(f, "CSV file");
    if (calib::looks_like_gemm_sweep(text)) sweeps.push_back(calib::parse_gemm_sweep(text, f));
    else logs.push_back(calib::parse_telemetry(text, f));
  }
  net::CollectiveProfile profile;
  profile.name = name;
  profile.topology = spec.name;
  if (!tables.empty()) {
    const calib::Calibration cal = calib::calibrate(tables, spec, name, a.table.ranks, a.table.nodes);
    std::printf("%-64s  %5s  %-11s  %-11s  %-11s  %-11s\n", "nccl-tests table", "rows", "model >=1M", "fitted >=1M",
                "model <1M", "fitted <1M");
    for (const auto& t : cal.tables)
      std::printf("%-64s  %5d  %-11s  %-11s  %-11s  %-11s\n", t.file.c_str(), t.before.large_rows + t.before.small_rows,
                  percent(t.before.large).c_str(), percent(t.after.large).c_str(), percent(t.before.small).c_str(),
                  percent(t.after.small).c_str());
    profile = cal.profile;
  }
  // GEMM sweeps make a calibrated device, written beside the profile, which names it.
  std::string device_file;
  if (!sweeps.empty() || !logs.empty()) {
    const hw::DeviceSpec& base = io::find_device(a.device.empty() ? spec.device : a.device);
    // A device file is named after its device (the loader checks it): <profile>-<device>.yaml.
    const std::string device_name = name + "-" + base.name;
    const fs::path device_path = fs::path(a.out).parent_path() / (device_name + ".yaml");
    const std::string text = calibrated_device(sweeps, logs, base, device_name, device_path.string(), a.inlet_c,
                                               spec.cooling.kind == net::CoolingKind::liquid);
    std::ofstream dev(device_path);
    dev << text;
    if (!dev) throw core::Error(core::ErrorKind::io, fmt::format("cannot write '{}'", device_path.string()));
    device_file = device_path.filename().string();
    std::printf("wrote %s (device '%s')\n", device_path.string().c_str(), device_name.c_str());
  }
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  const std::string header = fmt::format(
      "Fitted by `inflect calibrate {} --topology {}` on {} ({} file(s)).\n"
      "Per collective, fabric level and size range: time = latency + scale x + sqrt_coefficient sqrt(x), x\n"
      "the size times the model's wire time per byte for large messages on the group (docs/calibration.md).",
      a.path, a.table.topology, date, files.size());
  std::ofstream out(a.out);
  if (!out) throw core::Error(core::ErrorKind::io, fmt::format("cannot write '{}'", a.out));
  out << calib::profile_yaml(profile, header, device_file);
  if (!out) throw core::Error(core::ErrorKind::io, fmt::format("cannot write '{}'", a.out));
  std::printf("wrote %s (%zu fit%s)\n", a.out.c_str(), profile.fits.size(), profile.fits.size() == 1 ? "" : "s");
  return 0;
}

}  // namespace inflect::cli
