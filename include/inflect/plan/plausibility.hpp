#pragma once
// Plausibility, apart from legality (plan/validate.hpp): values the simulator can run but that no
// shipping hardware has, which are most often a unit slip (a NIC of 400 GB/s meant as 400 Gb/s, a
// hop of 0.6 s meant as 0.6 us). They are warnings, not errors: a what-if study may mean them.
#include <string>
#include <vector>

#include "inflect/plan/experiment.hpp"

namespace inflect::plan {

/// The bounds, with the hardware behind each (docs/experiment.md "Plausibility warnings").
struct PlausibleRange {
  /// Per NIC per direction. 3.2 Tb/s is four times the fastest NIC in the project's hardware
  /// reference (ConnectX-8 SuperNIC, 800 Gb/s: hardware.md [ZIASH-NET]; the bundled topologies run
  /// 200-400 Gb/s); 1 Gb/s is the slowest Ethernet a cluster still has. In bytes per second.
  static constexpr double nic_min_bytes_per_s = 1e9 / 8;
  static constexpr double nic_max_bytes_per_s = 3.2e12 / 8;
  /// Any one latency inside a data centre (a NIC, a switch hop, a scale-up hop): switches add
  /// hundreds of ns, NICs a few us; 1 ms is three orders above.
  static constexpr double latency_max_s = 1e-3;
  /// Device board power: the largest in the hardware reference is B200 at up to 1,000 W, its GB200
  /// variant up to 1,200 W (hardware.md [ZDS-BW], [KLOCK-B200]); 2 kW is well above them.
  static constexpr double board_power_max_w = 2000;
};

/// One sentence per implausible value, naming the key, the value and the range; empty when all
/// are plausible. Read from the experiment's cluster (topology and device) after loading.
std::vector<std::string> plausibility_warnings(const Experiment& e);

}  // namespace inflect::plan
