// `inflect collective KIND SIZE --topology T --nodes N`: one collective's modelled time, algorithm
// bandwidth and bus bandwidth (nccl-tests' definitions), or with --sweep a table in nccl-tests'
// own layout, so that a measured table and the model can be laid side by side.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "inflect/calib/collective_check.hpp"
#include "inflect/calib/nccl_tests.hpp"
#include "inflect/core/error.hpp"
#include "inflect/core/units_parse.hpp"
#include "inflect/io/topology_loader.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"

namespace inflect::cli {
namespace {

// The collective as nccl-tests names it, in any of the spellings a results file may use (the one
// reader of them, calib::parse_nccl_collective), and the model's collective for it.
net::CollectiveOp parse_kind(const std::string& s) {
  const auto kind = calib::parse_nccl_collective(s);
  const auto op = kind ? calib::model_op(*kind) : std::nullopt;
  if (!op)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{} collective '{}'; allowed: all_reduce, reduce_scatter, all_gather, all_to_all, sendrecv, "
                                  "broadcast, reduce",
                                  kind ? "unmodelled" : "unknown", s));
  return *op;
}

double parse_size(const std::string& s, const char* what) {
  // A bare number is bytes here, as in nccl-tests' -b/-e, whose sizes this command takes.
  const auto b = core::is_bare_number(s) ? core::parse_bytes(s + "B") : core::parse_bytes(s);
  if (!b || !(b->value() > 0))
    throw core::Error(core::ErrorKind::input, fmt::format("{} '{}' is not a positive size (e.g. 8B, 64MiB, 16GiB)", what, s));
  return b->value();
}

const char* redop_of(net::CollectiveOp op) {
  return op == net::CollectiveOp::all_reduce || op == net::CollectiveOp::reduce_scatter || op == net::CollectiveOp::reduce
             ? "sum"
             : "none";
}

// nccl-tests prints the root of the rooted collectives (0 by default, the first member here) and -1
// for the others.
int root_of(net::CollectiveOp op) {
  return op == net::CollectiveOp::broadcast || op == net::CollectiveOp::reduce ? 0 : -1;
}

}  // namespace

int cmd_collective(const CollectiveArgs& a) {
  const net::CollectiveOp op = parse_kind(a.kind);
  net::TopologySpec spec = io::load_topology(a.topology);
  if (a.nodes < 1) throw core::Error(core::ErrorKind::input, "--nodes must be at least 1");
  const int k = a.devices_per_node > 0 ? a.devices_per_node : spec.devices_per_node;
  if (k > spec.devices_per_node)
    throw core::Error(core::ErrorKind::input, fmt::format("--devices-per-node {} exceeds the topology's {} devices per node",
                                                          k, spec.devices_per_node));
  net::CollectiveTuning tuning = net::CollectiveTuning::of(spec);
  if (!a.algorithm.empty()) {
    tuning.algorithm = net::parse_algorithm(a.algorithm);
    if (!tuning.algorithm)
      throw core::Error(core::ErrorKind::input, fmt::format("unknown algorithm '{}'; allowed: {}", a.algorithm, net::algorithm_names()));
  }
  if (!a.protocol.empty()) {
    tuning.protocol = net::parse_protocol(a.protocol);
    if (!tuning.protocol)
      throw core::Error(core::ErrorKind::input, fmt::format("unknown protocol '{}'; allowed: {}", a.protocol, net::protocol_names()));
  }
  const net::Topology topo(spec, a.nodes);
  std::vector<net::DeviceId> members;
  for (int n = 0; n < a.nodes; ++n)
    for (int j = 0; j < k; ++j) members.push_back(n * spec.devices_per_node + j);
  if (op == net::CollectiveOp::send_recv) members = {members.front(), members.size() > 1 ? members[1] : members.front()};
  const int p = static_cast<int>(members.size());
  if (p < 2) throw core::Error(core::ErrorKind::input, "a collective needs at least two devices (--nodes, --devices-per-node)");

  std::vector<double> sizes;
  if (!a.sweep.empty()) {
    const auto colon = a.sweep.find(':');
    if (colon == std::string::npos)
      throw core::Error(core::ErrorKind::input, fmt::format("--sweep '{}' must be LO:HI, e.g. 8B:16GiB", a.sweep));
    const double lo = parse_size(a.sweep.substr(0, colon), "--sweep start");
    const double hi = parse_size(a.sweep.substr(colon + 1), "--sweep end");
    if (hi < lo) throw core::Error(core::ErrorKind::input, "--sweep end is below its start");
    if (!(a.step_factor > 1)) throw core::Error(core::ErrorKind::input, "--step-factor must be above 1");
    for (double s = lo; s <= hi * (1 + 1e-12); s *= a.step_factor) sizes.push_back(s);
  } else {
    if (a.size.empty()) throw core::Error(core::ErrorKind::input, "give a SIZE (e.g. 1GiB) or --sweep LO:HI");
    sizes.push_back(parse_size(a.size, "SIZE"));
  }

  std::printf("# %s over %d devices (%d node%s x %d) on %s, library %s\n", net::to_string(op), p, a.nodes,
              a.nodes == 1 ? "" : "s", op == net::CollectiveOp::send_recv ? 1 : k, spec.name.c_str(),
              spec.collectives.library.name.c_str());
  if (!a.sweep.empty())
    std::printf("#%12s  %12s  %8s  %6s  %6s  %9s  %7s  %7s  %s\n#%12s  %12s  %8s  %6s  %6s  %9s  %7s  %7s\n", "size", "count",
                "type", "redop", "root", "time", "algbw", "busbw", "algorithm", "(B)", "(elements)", "", "", "", "(us)",
                "(GB/s)", "(GB/s)");
  for (double bytes : sizes) {
    const net::LoweredCollective c = net::lower_collective(op, members, core::Bytes(bytes), topo, tuning);
    const double t = net::estimate_time(c, topo).value();
    const double algbw = bytes / t / 1e9;
    const double busbw = algbw * net::busbw_factor(op, p);
    if (a.sweep.empty()) {
      std::printf("  size        %.0f B\n  algorithm   %s\n  protocol    %s\n  time        %.2f us\n  algbw       %.2f GB/s\n"
                  "  busbw       %.2f GB/s\n",
                  bytes, c.algorithm, c.protocol, t * 1e6, algbw, busbw);
    } else {
      std::printf(" %12.0f  %12.0f  %8s  %6s  %6d  %9.2f  %7.2f  %7.2f  %s/%s\n", bytes, bytes / 4, "float", redop_of(op), root_of(op),
                  t * 1e6, algbw, busbw, c.algorithm, c.protocol);
    }
  }
  return 0;
}

}  // namespace inflect::cli
