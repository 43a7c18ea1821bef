#include "inflect/calib/calibrate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "inflect/calib/collective_fit.hpp"
#include "inflect/core/error.hpp"
#include "inflect/net/topology.hpp"

namespace inflect::calib {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

std::string percent(double fraction) { return std::isnan(fraction) ? "-" : fmt::format("{:.1f}%", 100 * fraction); }

TableErrors table_errors(const TableCheck& check) {
  std::vector<double> sizes, meas, sim;
  for (const auto& r : check.rows) {
    sizes.push_back(r.size.value());
    meas.push_back(r.measured.value());
    sim.push_back(r.simulated.value());
  }
  TableErrors e;
  e.large = mean_abs_rel_error(sizes, meas, sim, kMiB, 1e300, &e.large_rows);
  e.small = mean_abs_rel_error(sizes, meas, sim, 0, kMiB, &e.small_rows);
  return e;
}

Calibration calibrate(const std::vector<NcclTable>& tables, const net::TopologySpec& spec, const std::string& name,
                      std::optional<int> ranks, std::optional<int> nodes) {
  struct Replayed {
    const NcclTable* table;
    TableGroup group;
    TableCheck before;
  };
  std::vector<Replayed> replayed;
  std::map<std::pair<int, int>, std::vector<FitPoint>> points;  // by (collective, level)
  std::map<std::pair<int, int>, std::vector<std::string>> files;
  for (const NcclTable& t : tables) {
    Replayed r{&t, table_group(t, spec, ranks, nodes), {}};
    r.before = check_table(t, spec, r.group);
    const net::Topology topo(spec, r.group.nodes);
    const auto level = r.group.nodes == 1 ? net::FabricLevel::intra_node : net::FabricLevel::inter_node;
    std::map<net::CollectiveOp, double> wire_s_per_byte;
    for (const RowCheck& row : r.before.rows) {
      if (row.forced) continue;  // measured with an algorithm the model may not pick
      // The model's wire time per byte depends on the collective and the group, not the size: once
      // per collective of the table.
      auto per_byte = wire_s_per_byte.find(row.op);
      if (per_byte == wire_s_per_byte.end()) {
        std::vector<net::DeviceId> members = r.group.members;
        if (row.op == net::CollectiveOp::send_recv) members = {members[0], members[1]};
        per_byte = wire_s_per_byte.emplace(row.op, model_wire_s_per_byte(row.op, members, topo)).first;
      }
      const auto key = std::make_pair(static_cast<int>(row.op), static_cast<int>(level));
      points[key].push_back({row.size, row.measured, row.size.value() * per_byte->second});
      const std::string file = std::filesystem::path(t.file).filename().string();
      auto& f = files[key];
      if (f.empty() || f.back() != file) f.push_back(file);
    }
    replayed.push_back(std::move(r));
  }
  Calibration out;
  out.profile.name = name;
  out.profile.topology = spec.name;
  for (const auto& [key, all] : points) {
    const auto op = static_cast<net::CollectiveOp>(key.first);
    const auto level = static_cast<net::FabricLevel>(key.second);
    std::string names;
    for (const auto& f : files[key]) names += (names.empty() ? "" : ", ") + f;
    // NCCL changes protocol with the size (LL, LL128, Simple), so one smooth curve cannot follow
    // both ends: small and large messages are fitted apart where each has enough rows.
    std::vector<FitPoint> small, large;
    for (const auto& p : all) (p.size.value() < kMiB ? small : large).push_back(p);
    std::vector<std::pair<double, std::vector<FitPoint>>> regimes;
    if (small.size() >= 3 && large.size() >= 3) regimes = {{0.0, small}, {kMiB, large}};
    else regimes = {{0.0, all}};
    for (const auto& [min_size, pts] : regimes) {
      net::CollectiveFit fit = fit_points(op, level, pts, names);
      fit.min_size = core::Bytes(min_size);
      std::vector<double> sizes, meas, fitted;
      for (const auto& p : pts) {
        sizes.push_back(p.size.value());
        meas.push_back(p.measured.value());
        fitted.push_back(fitted_time(fit, p));
      }
      fit.source = fmt::format("{}: {} rows from {:.0f} B; fitted mean error {}", names, pts.size(), min_size,
                               percent(mean_abs_rel_error(sizes, meas, fitted, 0, 1e300)));
      out.profile.fits.push_back(fit);
    }
  }
  if (out.profile.fits.empty())
    throw core::Error(core::ErrorKind::input, "nothing to fit: every row was skipped or measured with a named algorithm");
  net::TopologySpec calibrated = spec;
  calibrated.collectives.profile = out.profile;
  for (const Replayed& r : replayed)
    out.tables.push_back({r.table->file, r.group, table_errors(r.before),
                          table_errors(check_table(*r.table, calibrated, r.group))});
  return out;
}

}  // namespace inflect::calib
