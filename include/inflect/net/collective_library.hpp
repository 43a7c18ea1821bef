#pragma once
// What a collective library (NCCL, RCCL) costs per algorithm and protocol, as its own tuning model
// states it: the figures NCCL's src/graph/tuning.cc uses to choose an algorithm and a protocol for
// each call. They are data (calibration/collectives/*.yaml, loaded by io), not code: a user can
// give a newer library's figures, or a calibrated profile can replace them.
//
// How the figures are used (net/collective.cpp, docs/collectives.md):
//   time = base + P + x + fill
//   P    = the latency of the algorithm's steps: intra-node steps x intra_step + inter-node steps x
//          inter_step (each step at least the topology's own route latency for that hop)
//   x    = the bottleneck link's bytes on the wire / its capacity, the wire bytes being the payload
//          over the protocol's bandwidth factor (LL carries 4 data bytes in every 8, LL128 120 in 128)
//   fill = 2 sqrt(P x) for a chunk-pipelined protocol (Simple): the pipeline's fill and drain when
//          the chunk size follows the message (NCCL halves its chunks for smaller messages), the
//          optimum of (chunks + steps - 1) x (step + chunk time) over the number of chunks.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inflect/core/units.hpp"

namespace inflect::net {

/// NCCL's algorithms, and the full-mesh exchange RCCL runs on Infinity Fabric.
enum class Algorithm : unsigned char {
  ring,       // rings through every member, one per channel, rail-aligned across nodes (broadcast and
              // reduce: a chain from / to the root along each ring)
  tree,       // double binary tree across nodes, a chain inside each node (all-reduce)
  nvls,       // NVLink SHARP: the reduction in the NVSwitch (all-reduce, one node)
  nvls_tree,  // NVLS inside each node, trees across nodes between same-rail devices (all-reduce)
  pat,        // parallel aggregated trees (all-gather, reduce-scatter; one device per node)
  collnet,    // CollNet Direct: in-network reduction across nodes (SHARP), direct exchange inside
  direct,     // every member to every other over its own link (a full mesh: RCCL on xGMI)
  pairwise,   // all-to-all: every pair at once
  p2p,        // send/recv
};
inline constexpr int kAlgorithms = 9;

enum class Protocol : unsigned char { ll, ll128, simple };

/// How a collective over several sites runs (`cluster.cross_site_collectives`): `automatic` takes
/// the hierarchical form (reduce-scatter inside each site, all-reduce across, all-gather inside)
/// where the group is served (the same k >= 2 members in every site), else the flat one; `flat`
/// always runs the library's algorithm over the whole group. `hierarchical` is `automatic`.
enum class CrossSite : unsigned char { automatic, flat, hierarchical };
inline constexpr int kProtocols = 3;

/// broadcast and reduce are rooted at the group's members[0] (net/collective.hpp); NCCL runs them on
/// rings only.
enum class CollectiveOp : unsigned char { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv, broadcast, reduce };

/// Where a group's members are: all in one node, or across nodes.
enum class FabricLevel : unsigned char { intra_node, inter_node };

/// A collective's time at one level of the fabric as measured on the user's cluster (fitted by
/// `inflect calibrate` from an nccl-tests sweep): with x the size times the wire time per byte of
/// the algorithm and protocol the library model picks for large messages (its bandwidth on this
/// group, so a fit made on 2 nodes carries to other groups at the same level through the model),
///   time = latency + scale x + sqrt_coefficient sqrt(x)
/// (a latency, an efficiency, and the pipeline fill's 2 sqrt(P s) as one coefficient). The
/// model's choice of algorithm and protocol is kept; only its time is replaced. Every
/// coefficient is >= 0, so more bandwidth never slows a calibrated collective either.
struct CollectiveFit {
  CollectiveOp op = CollectiveOp::all_reduce;
  FabricLevel level = FabricLevel::intra_node;
  core::Seconds latency;
  double scale = 1;
  double sqrt_coefficient = 0;  // s^(1/2)
  /// The fit holds from this size up to the next fit's of the same collective and level: NCCL
  /// changes protocol with the size (LL, LL128, Simple), so small and large messages are fitted
  /// apart (inflect calibrate: below and from 1 MiB).
  core::Bytes min_size;
  std::string source;           // the measurement it was fitted on, its rows and error
};

/// A calibrated profile's collective part: fits for the topology it names.
struct CollectiveProfile {
  std::string name;
  std::string topology;  // the topology's name the fits were made on
  std::vector<CollectiveFit> fits;
  std::string file;
  /// The fits for `op` at `level`, by min_size; empty if none.
  std::vector<const CollectiveFit*> find(CollectiveOp op, FabricLevel level) const {
    std::vector<const CollectiveFit*> out;
    for (const auto& f : fits)
      if (f.op == op && f.level == level) out.push_back(&f);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->min_size.value() < b->min_size.value(); });
    return out;
  }
};

const char* to_string(Algorithm a);
const char* to_string(Protocol p);
/// Parses a name ("ring", "nvls_tree", ...; "nvls-tree" also); none if unknown.
std::optional<Algorithm> parse_algorithm(std::string_view name);
std::optional<Protocol> parse_protocol(std::string_view name);
/// "auto", "flat", "hierarchical", as `cluster.cross_site_collectives` spells them, and back.
const char* to_string(CrossSite c);
std::optional<CrossSite> parse_cross_site(std::string_view name);
/// "ring, tree, ..." for messages.
std::string algorithm_names();
std::string protocol_names();

/// One algorithm with one protocol.
struct ProtocolCost {
  core::Seconds base;        // per call
  core::Seconds intra_step;  // per step inside a node (NVLink / xGMI)
  core::Seconds inter_step;  // per step across nodes (network)
  /// Payload bytes per byte on the wire (and any algorithm-specific loss NCCL's model applies).
  double bandwidth_factor = 1;
  /// Fill and drain of a chunk pipeline (2 sqrt(P x)); true for Simple.
  bool pipelined = false;
};

struct CollectiveLibrary {
  std::string name;  // "nccl-2.28"
  /// Per algorithm and protocol; empty = the library does not run that pair.
  std::array<std::array<std::optional<ProtocolCost>, kProtocols>, kAlgorithms> costs{};
  /// LL's bus-bandwidth ceiling across nodes (NCCL's llMaxBws, the CPU-bound LL path): at two
  /// nodes and beyond. Zero = none.
  core::Bandwidth ll_max_busbw_two_nodes;
  core::Bandwidth ll_max_busbw_more_nodes;
  /// NCCL's tree correction by message size (powers of two from 64 B): the tree's bandwidth
  /// times this factor. Per protocol; empty = 1.
  std::array<std::vector<double>, kProtocols> tree_size_correction{};
  std::map<std::string, std::string> sources;
  std::string file;

  /// The links alone: every algorithm with the Simple protocol at full payload, no software
  /// latency and no pipeline fill, so a step costs its route's latency and a collective is the
  /// alpha-beta form. What a TopologySpec built in code has unless it is given a library (a
  /// loaded topology always names one).
  static CollectiveLibrary ideal();

  const std::optional<ProtocolCost>& cost(Algorithm a, Protocol p) const {
    return costs[static_cast<std::size_t>(a)][static_cast<std::size_t>(p)];
  }
};

}  // namespace inflect::net
