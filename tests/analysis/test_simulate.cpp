#include <doctest/doctest.h>

#include "inflect/analysis/simulate.hpp"
#include "inflect/core/error.hpp"
#include "toy_cluster.hpp"

using namespace inflect;

namespace {

plan::Experiment one_node() {
  plan::Experiment e;
  e.name = "analysis-case";
  e.cluster.device = test::toy_device();
  e.cluster.topology = test::toy_topology(8);
  e.cluster.nodes = 1;
  return e;
}

// One rank computing a 1e9-byte memory-bound kernel: 1 ms on the toy device (1 TB/s).
workload::ExecutionGraph one_kernel_graph(int ranks) {
  workload::ExecutionGraph g;
  g.set_ranks(ranks, {0}, {static_cast<std::uint32_t>(ranks)});
  auto s = g.stream("compute");
  core::KernelCost c;
  c.cls = core::KernelClass::memory;
  c.bytes = core::Bytes(1e9);
  c.flops = core::Flops(2e9);
  auto k = g.add_kernel(workload::Kernel{"k", c, {}});
  std::vector<workload::OpId> none;
  g.add_op(0, s, workload::OpType::compute, k, workload::Phase::forward, 0, 0, none);
  g.facts().tokens_per_step = 1000;
  g.facts().model_flops_per_step = core::Flops(8 * 2e9);
  return g;
}

}  // namespace

TEST_CASE("simulate_graph derives throughput and FLOP rates from the step") {
  // Step = 1 ms. tokens/s = 1000 / 1e-3 = 1e6. The rank stands for all 8 devices, so hardware
  // FLOPs = 8 * 2e9 = 1.6e10 and per GPU 1.6e10 / 1e-3 / 8 = 2e12 FLOP/s = 2 TFLOP/s; MFU = 2 / 100.
  plan::Experiment e = one_node();
  workload::ExecutionGraph g = one_kernel_graph(8);
  analysis::RunReport r = analysis::simulate_graph(e, g, nullptr, "test", {});
  CHECK(r.step_time.value() == doctest::Approx(1e-3).epsilon(1e-9));
  CHECK(r.tokens_per_s.value() == doctest::Approx(1e6).epsilon(1e-9));
  CHECK(r.hardware_tflops_per_gpu == doctest::Approx(2.0).epsilon(1e-9));
  CHECK(r.model_tflops_per_gpu.value() == doctest::Approx(2.0).epsilon(1e-9));
  CHECK(r.mfu.value() == doctest::Approx(0.02).epsilon(1e-9));
  CHECK(r.breakdown.compute.value() == doctest::Approx(1e-3).epsilon(1e-9));
  CHECK_FALSE(r.memory.known);  // no memory figures in the graph
}

TEST_CASE("a trace without tokens or model FLOPs reports them unknown, not 0") {
  // The same graph with no facts at all (a trace from elsewhere): the step is still timed, but
  // tokens/s, model TFLOP/s, MFU and energy per token are unknown, as are the memory figures.
  plan::Experiment e = one_node();
  workload::ExecutionGraph g = one_kernel_graph(8);
  g.facts() = {};
  analysis::RunReport r = analysis::simulate_graph(e, g, nullptr, "test", {});
  CHECK(r.step_time.value() == doctest::Approx(1e-3).epsilon(1e-9));
  CHECK(r.hardware_tflops_per_gpu == doctest::Approx(2.0).epsilon(1e-9));
  CHECK_FALSE(r.tokens_per_step.has_value());
  CHECK_FALSE(r.tokens_per_s.has_value());
  CHECK_FALSE(r.model_flops_per_step.has_value());
  CHECK_FALSE(r.model_tflops_per_gpu.has_value());
  CHECK_FALSE(r.mfu.has_value());
  CHECK(r.power.modeled);
  CHECK_FALSE(r.power.energy_per_token.has_value());
  CHECK(r.power.energy_per_step.value() > 0);
  CHECK_FALSE(r.memory.known);
}

TEST_CASE("a graph for another device count is an input error") {
  plan::Experiment e = one_node();
  workload::ExecutionGraph g = one_kernel_graph(16);
  CHECK_THROWS_AS(analysis::simulate_graph(e, g, nullptr, "test", {}), core::Error);
}
