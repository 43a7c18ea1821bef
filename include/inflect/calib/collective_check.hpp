#pragma once
// Replaying a measured nccl-tests table through the collective model: the group each row ran on,
// the model's (or a profile's) time per row, and the errors. `inflect check-collectives` prints it;
// `inflect calibrate` fits what it finds (collective_fit.hpp).
#include <optional>
#include <string>
#include <vector>

#include "inflect/calib/collective_fit.hpp"
#include "inflect/calib/nccl_tests.hpp"
#include "inflect/net/topology_spec.hpp"

namespace inflect::calib {

/// The group a table's rows ran on, on a topology: `ranks` devices filling `nodes` nodes from
/// device 0 of each (as nccl-tests' launchers place one rank per GPU, node after node).
struct TableGroup {
  int ranks = 0;
  int nodes = 0;
  int per_node = 0;
  std::vector<net::DeviceId> members;
};

/// The ranks are the table's (or `ranks`); the nodes are ceil(ranks / devices per node) unless
/// `nodes` is given. Throws core::Error(input) when the table does not say its ranks and none are
/// given, or when they do not fill whole nodes evenly.
TableGroup table_group(const NcclTable& table, const net::TopologySpec& topo, std::optional<int> ranks,
                       std::optional<int> nodes);

/// One row replayed.
struct RowCheck {
  int line = 0;
  net::CollectiveOp op = net::CollectiveOp::all_reduce;
  core::Bytes size;
  core::Seconds measured;
  core::Seconds simulated;
  std::string algorithm, protocol;  // the model's choice (or the row's own, forced)
  bool forced = false;              // the row names the algorithm it was measured with
};

struct TableCheck {
  TableGroup group;
  std::vector<RowCheck> rows;
  std::vector<std::string> skipped;  // rows not replayed, with why (broadcast/reduce, no time)
};

/// Replays every row of `table` on `topo` (with its profile, if any).
TableCheck check_table(const NcclTable& table, const net::TopologySpec& topo, const TableGroup& group);

/// nccl-tests' collective as the model's, if it models it (broadcast and reduce it does not).
std::optional<net::CollectiveOp> model_op(NcclCollective kind);

}  // namespace inflect::calib
