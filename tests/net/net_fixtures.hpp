#pragma once
// Topologies the net tests build in code (figures chosen for round arithmetic, not the bundled
// calibration; topologies/*.yaml is tested in tests/io/test_topology_loader.cpp). Built in code,
// so their library is CollectiveLibrary::ideal(): Simple at full payload, a step costs its route's
// latency, no fill.
#include "inflect/core/units.hpp"
#include "inflect/net/topology_spec.hpp"

namespace fixtures {

// An NVSwitch node (DGX/HGX H100-like): 450 GB/s per port per direction at efficiency 0.8 = 360
// GB/s effective, 0.6 us per GPU-switch-GPU crossing; a 400 Gb/s NIC per GPU (50 GB/s x 0.8 = 40
// GB/s effective), 0.6 us NIC + 0.33 us per switch, rail-optimized leaves of 32 nodes.
inline inflect::net::TopologySpec nvswitch(int devices = 8) {
  using inflect::core::Seconds;
  inflect::net::TopologySpec s;
  s.name = "test-nvswitch";
  s.device = "h100-sxm";
  s.devices_per_node = devices;
  s.intra.kind = inflect::net::IntraFabricKind::switched;
  s.intra.port_bandwidth = inflect::core::gb_per_s(450);
  s.intra.hop_latency = Seconds(0.6e-6);
  s.intra.efficiency = 0.8;
  s.scale_out.technology = "InfiniBand NDR";
  s.scale_out.nics_per_node = devices;
  s.scale_out.nic_bandwidth = inflect::core::gbit_per_s(400);
  s.scale_out.nic_latency = Seconds(0.6e-6);
  s.scale_out.switch_latency = Seconds(0.33e-6);
  s.scale_out.nodes_per_leaf = 32;
  s.scale_out.oversubscription = 1;
  s.scale_out.rail_optimized = true;
  s.scale_out.efficiency = 0.8;
  return s;
}

}  // namespace fixtures
