#pragma once
// The network's name for a graph's collective kind: one mapping, for the lowering and for anything
// above the engine that lowers a graph's collectives itself (analysis/jobs_explain).
#include "inflect/net/collective.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::sim {

inline net::CollectiveOp to_net(workload::CollectiveKind k) {
  switch (k) {
    case workload::CollectiveKind::all_reduce: return net::CollectiveOp::all_reduce;
    case workload::CollectiveKind::reduce_scatter: return net::CollectiveOp::reduce_scatter;
    case workload::CollectiveKind::all_gather: return net::CollectiveOp::all_gather;
    case workload::CollectiveKind::all_to_all: return net::CollectiveOp::all_to_all;
    case workload::CollectiveKind::send_recv: return net::CollectiveOp::send_recv;
    case workload::CollectiveKind::broadcast: return net::CollectiveOp::broadcast;
    case workload::CollectiveKind::reduce: return net::CollectiveOp::reduce;
  }
  return net::CollectiveOp::all_reduce;
}

}  // namespace inflect::sim
