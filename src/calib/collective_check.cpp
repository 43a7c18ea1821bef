#include "inflect/calib/collective_check.hpp"

#include <fmt/format.h>

#include "inflect/core/error.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"

namespace inflect::calib {

std::optional<net::CollectiveOp> model_op(NcclCollective kind) {
  switch (kind) {
    case NcclCollective::all_reduce: return net::CollectiveOp::all_reduce;
    case NcclCollective::all_gather: return net::CollectiveOp::all_gather;
    case NcclCollective::reduce_scatter: return net::CollectiveOp::reduce_scatter;
    case NcclCollective::all_to_all: return net::CollectiveOp::all_to_all;
    case NcclCollective::send_recv: return net::CollectiveOp::send_recv;
    case NcclCollective::broadcast: return net::CollectiveOp::broadcast;
    case NcclCollective::reduce: return net::CollectiveOp::reduce;
  }
  return std::nullopt;
}

TableGroup table_group(const NcclTable& table, const net::TopologySpec& topo, std::optional<int> ranks,
                       std::optional<int> nodes) {
  TableGroup g;
  const std::optional<int> r = ranks ? ranks : table.ranks;
  if (!r)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: the file does not say how many ranks ran it; give --ranks", table.file));
  if (*r < 2) throw core::Error(core::ErrorKind::input, fmt::format("{}: {} rank(s); a collective needs two", table.file, *r));
  const int k = topo.devices_per_node;
  g.ranks = *r;
  g.nodes = nodes ? *nodes : (*r + k - 1) / k;
  if (g.nodes < 1 || *r % g.nodes != 0 || *r / g.nodes > k)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: {} ranks do not fill {} node(s) of {} devices evenly; give --nodes", table.file, *r,
                                  g.nodes, k));
  g.per_node = *r / g.nodes;
  for (int n = 0; n < g.nodes; ++n)
    for (int j = 0; j < g.per_node; ++j) g.members.push_back(n * k + j);
  return g;
}

TableCheck check_table(const NcclTable& table, const net::TopologySpec& spec, const TableGroup& group) {
  TableCheck out;
  out.group = group;
  const net::Topology topo(spec, group.nodes);
  const net::CollectiveTuning base = net::CollectiveTuning::of(spec);
  for (const NcclRow& row : table.rows) {
    const auto op = model_op(row.kind);
    if (!op) {
      out.skipped.push_back(fmt::format("line {}: {} is not modelled", row.line, to_string(row.kind)));
      continue;
    }
    const auto time = nccl_row_time(row, group.ranks);
    if (!time || !(time->value() > 0)) {
      out.skipped.push_back(fmt::format("line {}: no time (nor a positive busbw) to compare", row.line));
      continue;
    }
    net::CollectiveTuning tuning = base;
    RowCheck c;
    if (!row.algorithm.empty()) {
      tuning.algorithm = net::parse_algorithm(row.algorithm);
      if (!tuning.algorithm) {
        out.skipped.push_back(fmt::format("line {}: measured with algorithm '{}', which the model does not know", row.line,
                                          row.algorithm));
        continue;
      }
      c.forced = true;
    }
    // nccl-tests' sendrecv runs a ring of pairs; one pair of neighbours loads its links the same way.
    std::vector<net::DeviceId> members = group.members;
    if (*op == net::CollectiveOp::send_recv) members = {group.members[0], group.members[1]};
    const net::LoweredCollective l = net::lower_collective(*op, members, row.size, topo, tuning);
    c.line = row.line;
    c.op = *op;
    c.size = row.size;
    c.measured = *time;
    c.simulated = net::estimate_time(l, topo);
    c.algorithm = l.algorithm;
    c.protocol = l.protocol;
    out.rows.push_back(c);
  }
  return out;
}

}  // namespace inflect::calib
