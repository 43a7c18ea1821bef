#pragma once
// A cluster's fabric, as described by topologies/*.yaml: nodes of N devices with their intra-node
// fabric, NICs per node, and a scale-out leaf-spine fabric. The experiment sets the node count.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inflect/core/units.hpp"
#include "inflect/net/collective_library.hpp"
#include "inflect/net/wan_transport.hpp"

namespace inflect::net {

enum class IntraFabricKind : unsigned char {
  switched,  // NVSwitch: every device one port at `port_bandwidth` per direction, non-blocking
  mesh,      // Infinity Fabric: point-to-point links; `links` lists them (empty = full mesh)
};

struct MeshLink {
  int a = 0, b = 0;            // local device indices
  core::Bandwidth bandwidth;   // per direction
};

struct IntraNodeFabric {
  IntraFabricKind kind = IntraFabricKind::switched;
  /// switched: per-device port bandwidth per direction. mesh: per-link bandwidth per direction for
  /// a full mesh when `links` is empty.
  core::Bandwidth port_bandwidth;
  std::vector<MeshLink> links;  // mesh only; pairs not listed are reached over several hops
  core::Seconds hop_latency;    // per link or switch crossing
  /// Fraction of raw link bandwidth that collectives achieve (protocol overhead), from nccl-tests.
  double efficiency = 1.0;
  /// NVLink SHARP (NVSwitch gen3+): the switch reduces, so NCCL's NVLS algorithms run here.
  bool nvls = false;
  /// Fraction of raw port bandwidth an NVLS all-reduce achieves (the switch's reduction rate).
  double nvls_efficiency = 0;
};

struct ScaleOutFabric {
  std::string technology;      // "InfiniBand NDR", "Slingshot-11", "Pollara 400 Ethernet", ...
  int nics_per_node = 0;
  core::Bandwidth nic_bandwidth;   // per NIC per direction
  core::Seconds nic_latency;       // NIC TX+RX software/hardware path per message
  core::Seconds switch_latency;    // per switch hop
  int nodes_per_leaf = 32;         // nodes under one leaf group (per rail when rail-optimized)
  double oversubscription = 1.0;   // leaf down-bandwidth / up-bandwidth (1 = full bisection)
  bool rail_optimized = true;      // NIC i of every node on leaf i of its group
  double efficiency = 1.0;         // achieved fraction of line rate (protocol overhead)
  /// The switches reduce (InfiniBand SHARP): NCCL's CollNet algorithm runs across nodes.
  bool in_network_reduction = false;
};

/// How the nodes are cooled: the thermal model's ambient and which device resistance applies.
enum class CoolingKind : unsigned char { air, liquid };
struct Cooling {
  CoolingKind kind = CoolingKind::air;
  double inlet_c = 25;  // inlet air or coolant temperature
};

/// What a node draws besides its devices, and the facility overhead on top.
struct NodePower {
  core::Watts other;            // CPUs, memory, NICs, intra-node switches, fans, at training load
  core::Watts fabric_per_node;  // the node's share of the scale-out switches
  double pue = 1;               // facility power / IT power
};

/// The collective library the cluster runs and any override of its choice.
struct CollectiveSettings {
  CollectiveLibrary library = CollectiveLibrary::ideal();  // calibration/collectives/<name>.yaml
  std::optional<Algorithm> algorithm;   // `collectives.algorithm`, none = the library's choice
  std::optional<Protocol> protocol;     // `collectives.protocol`
  CrossSite cross_site = CrossSite::automatic;  // `cluster.cross_site_collectives`
  /// A calibrated profile's fits (`--profile`), applied on top of the library's model.
  CollectiveProfile profile;
};

/// One site of a geo-distributed cluster (`cluster.sites`): a data centre, or a building of a
/// campus, with its own scale-out fabric (from its own topology file) and a contiguous block of
/// the cluster's nodes, in the order the sites are listed. Every site runs the cluster's device
/// and node fabric.
struct SiteSpec {
  std::string name;
  int nodes = 0;
  ScaleOutFabric scale_out;
  std::string file;  // the site's topology file (for messages)
};

/// A link between two sites (`cluster.wan`), both directions. Its capacity is `bandwidth` x
/// `circuits` per direction, or, when `oversubscription` is given instead of a bandwidth, the
/// smaller site's total NIC bandwidth divided by it (the site edge of a campus).
struct WanLinkSpec {
  int a = 0, b = 0;              // site indices
  core::Bandwidth bandwidth;     // per circuit per direction; 0 when oversubscription is given
  int circuits = 1;
  double oversubscription = 0;   // 0 = bandwidth is given
  core::Seconds latency;         // one way
  double loss = 0;               // packet loss probability
  WanTransport transport;
};

struct TopologySpec {
  std::string name;
  std::string device;  // device catalog key of every device
  int devices_per_node = 8;
  /// Fixed software cost of one collective call on top of the library's own base latency
  /// (optional `collective_overhead`; 0 in the bundled topologies, whose library figures hold it).
  core::Seconds collective_overhead;
  CollectiveSettings collectives;
  IntraNodeFabric intra;
  ScaleOutFabric scale_out;
  Cooling cooling;
  NodePower power;
  std::map<std::string, std::string> sources;
  std::string file;
  /// A geo-distributed cluster: its sites in node order (empty: one site, this spec's scale-out)
  /// and the WAN links joining them.
  std::vector<SiteSpec> sites;
  std::vector<WanLinkSpec> wan;
};

}  // namespace inflect::net
