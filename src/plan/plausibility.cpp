#include "inflect/plan/plausibility.hpp"

#include <fmt/format.h>

namespace inflect::plan {

std::vector<std::string> plausibility_warnings(const Experiment& e) {
  using R = PlausibleRange;
  std::vector<std::string> out;
  const auto& topo = e.cluster.topology;
  const std::string where = topo.file.empty() ? std::string("topology ") + topo.name : topo.file;
  // Only a cluster with a scale-out fabric has NICs (a single-node topology gives none).
  if (topo.scale_out.nics_per_node > 0) {
    const double nic = topo.scale_out.nic_bandwidth.value();
    if (nic > R::nic_max_bytes_per_s || nic < R::nic_min_bytes_per_s)
      out.push_back(fmt::format("{}: scale_out.nic_bandwidth {:g} Gb/s is outside what NICs have (1 Gb/s to 3.2 Tb/s); "
                                "was a unit meant (400Gb/s, 50GB/s)?",
                                where, nic * 8 / 1e9));
    const auto latency = [&](const char* key, core::Seconds s) {
      if (s.value() > R::latency_max_s)
        out.push_back(fmt::format("{}: {} {:g} us is over 1 ms, more than any hop inside a data centre; was a unit meant "
                                  "(600ns, 0.6us)?",
                                  where, key, s.value() * 1e6));
    };
    latency("scale_out.nic_latency", topo.scale_out.nic_latency);
    latency("scale_out.switch_latency", topo.scale_out.switch_latency);
  }
  if (topo.intra.hop_latency.value() > R::latency_max_s)
    out.push_back(fmt::format("{}: intra.hop_latency {:g} us is over 1 ms, more than any hop inside a data centre; was a "
                              "unit meant (600ns, 0.6us)?",
                              where, topo.intra.hop_latency.value() * 1e6));
  const double board = e.cluster.device.board_power.value();
  if (board > R::board_power_max_w)
    out.push_back(fmt::format("device {}: board_power {:g} W is over 2 kW, more than any accelerator has; was a unit "
                              "meant (700W, 0.7kW)?",
                              e.cluster.device.name, board));
  return out;
}

}  // namespace inflect::plan
