// What `inflect placements` prints and writes (placements.json, docs/placements.md).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "inflect/io/report_json.hpp"
#include "inflect/search/placements.hpp"

namespace inflect::search {

namespace {

using Json = nlohmann::ordered_json;

// The headline figures of each placement, under their report field names (io/report_fields.hpp).
constexpr std::string_view kFigures[] = {"step_time_s",       "tokens_per_s",      "compute_s",         "exposed_comm_s.dp",
                                         "exposed_comm_s.tp", "exposed_comm_s.pp", "exposed_comm_s.cp", "exposed_comm_s.ep",
                                         "bubble_s",          "other_s"};

// The volume on groups that span sites, for the crossing dimensions: "; per rank per step: dp 4.2 GB".
std::string volume(const PlacementResult& p) {
  std::string s;
  for (const auto& d : p.placement.crossing) {
    const double gb = p.spanning[dim_index(d)].value() / 1e9;
    if (gb > 0) s += fmt::format("{}{} {:.3g} GB", s.empty() ? "" : ", ", d, gb);
  }
  return s.empty() ? s : " [per rank per step: " + s + "]";
}

}  // namespace

std::string format_placements(const PlacementsRun& r) {
  std::string sites;
  for (const auto& s : r.sites) sites += (sites.empty() ? "" : ", ") + s;
  std::string out = fmt::format("placements of {} ({}) on {} devices over {} sites ({}): {} placements, {:.2f} s wall on {} threads\n\n",
                                r.name, r.plan, r.devices, r.sites.size(), sites, r.ranked.size(), r.wall_s, r.jobs);
  std::size_t w = 9;
  for (const auto& p : r.ranked) w = std::max(w, p.placement.name.size());
  out += fmt::format("{:>2}  {:<{}} {:>9} {:>10} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7}\n", "#", "placement", w, "step s", "tokens/s",
                     "compute", "bubble", "dp", "tp", "pp", "cp", "ep");
  int rank = 0;
  for (const auto& p : r.ranked) {
    ++rank;
    if (!p.ok()) {
      out += fmt::format("{:>2}  {:<{}} {:>9}  {}\n", "-", p.placement.name, w, "failed", p.error);
    } else {
      const auto& rep = p.report;
      const auto& bd = rep.breakdown;
      const auto& x = bd.exposed_comm;
      out += fmt::format("{:>2}  {:<{}} {:>9.3f} {:>10.4g} {:>7.3f} {:>7.3f} {:>7.3f} {:>7.3f} {:>7.3f} {:>7.3f} {:>7.3f}\n", rank,
                         p.placement.name, w, rep.step_time.value(), rep.tokens_per_s.value_or(std::nan("")), bd.compute.value(),
                         bd.bubble.value(), x.dp.value(), x.tp.value(), x.pp.value(), x.cp.value(), x.ep.value());
    }
    out += fmt::format("{:>2}  {:<{}} crosses the WAN: {}{}\n", "", "", w, p.placement.crosses, p.ok() ? volume(p) : std::string());
    if (!p.why_loses.empty()) out += fmt::format("{:>2}  {:<{}} why it loses: {}\n", "", "", w, p.why_loses);
  }
  out += "\n(exposed communication by dimension in seconds: the compute stream idle waiting on it; docs/report.md)\n";
  return out;
}

std::string placements_to_json(const PlacementsRun& r, bool include_volatile) {
  Json j;
  j["name"] = r.name;
  j["plan"] = r.plan;
  j["devices"] = r.devices;
  j["sites"] = r.sites;
  if (include_volatile) {
    Json timing;
    timing["wall_s"] = r.wall_s;
    timing["jobs"] = r.jobs;
    j["timing"] = std::move(timing);
  }
  Json list = Json::array();
  int rank = 0;
  for (const auto& p : r.ranked) {
    Json x;
    x["rank"] = p.ok() ? Json(++rank) : Json(nullptr);
    x["name"] = p.placement.name;
    x["mesh"] = p.placement.mesh;
    Json order = Json::array();
    for (plan::Dim d : p.placement.order)
      order.push_back(d == plan::Dim::tp ? "tp" : d == plan::Dim::cp ? "cp" : d == plan::Dim::pp ? "pp" : "dp");
    x["order"] = std::move(order);
    x["cross_site_collectives"] = p.placement.cross_site ? Json(net::to_string(*p.placement.cross_site)) : Json(nullptr);
    x["crossing"] = p.placement.crossing;
    x["crosses"] = p.placement.crosses;
    if (p.ok()) {
      Json bytes;
      for (int d = 0; d < workload::kParallelDims; ++d)
        bytes[workload::to_string(static_cast<workload::ParallelDim>(d))] = p.spanning[static_cast<std::size_t>(d)].value();
      x["spanning_bytes"] = std::move(bytes);
      io::write_fields(x, p.report, kFigures);
      x["slower_than_best"] = p.report.step_time.value() / r.ranked.front().report.step_time.value() - 1;
    }
    x["why_loses"] = p.why_loses.empty() ? Json(nullptr) : Json(p.why_loses);
    if (!p.error.empty()) x["error"] = p.error;
    // The whole report.json of each placement; none when the engine threw before reporting.
    x["report"] = p.report.name.empty() ? Json(nullptr) : io::report_json(p.report, include_volatile);
    list.push_back(std::move(x));
  }
  j["placements"] = std::move(list);
  return j.dump(2) + "\n";
}

}  // namespace inflect::search
