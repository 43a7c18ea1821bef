#pragma once
// What the engine tests build graphs from: a memory-bound kernel whose time is its bytes on the
// toy device, and the toy cluster's topology and compute model (tests/support/toy_cluster.hpp).
#include <cstdint>

#include "inflect/hw/compute_model.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/workload/exec_graph.hpp"
#include "toy_cluster.hpp"

namespace inflect::test {

// A memory-bound kernel of `bytes` on the toy device (1 TB/s, no launch cost): bytes / 1e12 s.
inline std::uint32_t mem_kernel(workload::ExecutionGraph& g, double bytes, const char* name = "k") {
  core::KernelCost c;
  c.cls = core::KernelClass::memory;
  c.bytes = core::Bytes(bytes);
  return g.add_kernel(workload::Kernel{name, c, {}});
}

struct Rig {
  net::Topology topo;
  hw::ComputeModel compute;
  explicit Rig(int nodes = 1, double latency = 0) : topo(toy_topology(8, latency), nodes), compute(toy_device()) {}
};

}  // namespace inflect::test
