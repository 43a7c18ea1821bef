#include "inflect/analysis/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "inflect/core/error.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/sim/engine.hpp"
#include "inflect/workload/graph_json.hpp"

namespace inflect::analysis {
namespace {

workload::ExecutionGraph load_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw core::Error(core::ErrorKind::io, fmt::format("cannot open trace '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return workload::graph_from_json(ss.str(), path);
}

MemoryReport memory_report(const plan::MemoryEstimate& m) {
  MemoryReport r;
  r.peak_bytes = m.peak.value();
  r.capacity_bytes = m.capacity.value();
  r.fits = m.fits();
  r.over_by_bytes = std::max(0.0, r.peak_bytes - r.capacity_bytes);
  r.peak_stage = m.peak_stage;
  const auto& st = m.stages[static_cast<std::size_t>(m.peak_stage)];
  r.parts = {{"weights", st.weights.value()},
             {"gradients", st.gradients.value()},
             {"optimizer", st.optimizer.value()},
             {"activations", st.activations.value()},
             {"buffers", st.buffers.value()}};
  std::stable_sort(r.parts.begin(), r.parts.end(), [](const MemoryPart& a, const MemoryPart& b) { return a.bytes > b.bytes; });
  return r;
}

plan::CompileOptions compile_options(const SimulateOptions& o) {
  plan::CompileOptions co;
  co.fidelity = o.fidelity;
  co.fuse_blocks = o.fuse_blocks;
  return co;
}

// A plan whose memory does not fit: its memory and why, no timing.
RunReport not_simulated(const plan::Experiment& e, const plan::MemoryEstimate& mem) {
  plan::CompileOptions co;
  co.fidelity = plan::Fidelity::symmetric;  // only for the plan summary; cheap
  RunReport r;
  r.name = e.name;
  r.model = e.workload.model->name;
  r.device = e.cluster.device.name;
  r.topology = e.cluster.topology.name;
  r.nodes = e.cluster.nodes;
  r.devices = e.cluster.devices();
  r.plan = plan::compile(e, co).summary;
  r.simulated = false;
  r.memory = memory_report(mem);
  r.peak_tflops_per_gpu = e.cluster.device.peak(e.training.precision).value() / 1e12;
  std::string largest;
  for (std::size_t i = 0; i < r.memory.parts.size() && i < 3; ++i)
    largest += fmt::format("{}{} {:.1f} GiB", i ? ", " : "", r.memory.parts[i].name, r.memory.parts[i].bytes / 1073741824.0);
  r.not_simulated = fmt::format("peak memory {:.1f} GiB (pipeline stage {}) exceeds the {:.1f} GiB of {} by {:.1f} GiB; largest: {}",
                                r.memory.peak_bytes / 1073741824.0, r.memory.peak_stage, r.memory.capacity_bytes / 1073741824.0,
                                r.device, r.memory.over_by_bytes / 1073741824.0, largest);
  return r;
}

}  // namespace

RunReport simulate_graph(const plan::Experiment& e, const workload::ExecutionGraph& graph, const plan::MemoryEstimate* memory,
                         const std::string& plan_summary, const SimulateOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  const int devices = e.cluster.devices();
  if (graph.total_ranks() != devices)
    throw core::Error(core::ErrorKind::input, fmt::format("the execution graph has {} ranks but the cluster has {} devices",
                                                          graph.total_ranks(), devices),
                      core::SourceLocation{e.file, 0, 0, "cluster.nodes"});
  net::Topology topo(e.cluster.topology, e.cluster.nodes);
  hw::ComputeModel compute(e.cluster.device);
  sim::EngineOptions eo;
  eo.observer = options.observer;
  eo.tuning.software_overhead = e.cluster.topology.collective_overhead;
  eo.comm_interference = e.cluster.device.comm_interference;
  auto te = std::chrono::steady_clock::now();
  sim::EngineResult res = sim::run_engine(graph, topo, compute, eo);
  const double engine_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - te).count();

  RunReport r;
  r.name = e.name;
  r.model = e.workload.model ? e.workload.model->name : ("trace:" + e.workload.trace_file);
  r.device = e.cluster.device.name;
  r.topology = e.cluster.topology.name;
  r.nodes = e.cluster.nodes;
  r.devices = devices;
  r.plan = plan_summary;
  r.step_time_s = res.makespan.seconds();
  auto meta = [&](const char* k) {
    auto it = graph.meta().find(k);
    return it == graph.meta().end() ? 0.0 : it->second;
  };
  r.tokens_per_step = meta("tokens_per_step");
  r.model_flops_per_step = meta("model_flops_per_step");
  double hw_flops = 0;
  for (std::size_t i = 0; i < res.ranks.size(); ++i) hw_flops += res.ranks[i].flops * graph.represents()[i];
  r.hardware_flops_per_step = hw_flops;
  if (r.step_time_s > 0) {
    r.tokens_per_s = r.tokens_per_step / r.step_time_s;
    r.model_tflops_per_gpu = r.model_flops_per_step / r.step_time_s / devices / 1e12;
    r.hardware_tflops_per_gpu = hw_flops / r.step_time_s / devices / 1e12;
  }
  r.peak_tflops_per_gpu = e.cluster.device.peak(e.training.precision).value() / 1e12;
  r.mfu = r.peak_tflops_per_gpu > 0 ? r.model_tflops_per_gpu / r.peak_tflops_per_gpu : 0;
  if (memory) {
    r.memory = memory_report(*memory);
  } else {
    r.memory.capacity_bytes = e.cluster.device.hbm_capacity.value();
    r.memory.peak_bytes = meta("memory_peak_bytes");
    r.memory.known = r.memory.peak_bytes > 0;
    r.memory.fits = r.memory.peak_bytes <= r.memory.capacity_bytes;
    r.memory.over_by_bytes = std::max(0.0, r.memory.peak_bytes - r.memory.capacity_bytes);
  }
  // The critical rank: the one that finishes last (lowest id on ties); its parts sum to the step.
  std::size_t crit = 0;
  for (std::size_t i = 1; i < res.ranks.size(); ++i)
    if (res.ranks[i].finish > res.ranks[crit].finish) crit = i;
  if (!res.ranks.empty()) {
    const auto& c = res.ranks[crit];
    r.breakdown.compute_s = c.compute.seconds();
    r.breakdown.compute_interference_s = c.interference.seconds();
    r.breakdown.exposed_comm_s.dp = c.exposed[static_cast<std::size_t>(workload::ParallelDim::dp)].seconds();
    r.breakdown.exposed_comm_s.tp = c.exposed[static_cast<std::size_t>(workload::ParallelDim::tp)].seconds();
    r.breakdown.exposed_comm_s.pp = c.exposed[static_cast<std::size_t>(workload::ParallelDim::pp)].seconds();
    r.breakdown.exposed_comm_s.cp = c.exposed[static_cast<std::size_t>(workload::ParallelDim::cp)].seconds();
    r.breakdown.exposed_comm_s.ep = c.exposed[static_cast<std::size_t>(workload::ParallelDim::ep)].seconds();
    r.breakdown.bubble_s = c.bubble.seconds();
    r.breakdown.other_s = c.other.seconds();
    r.breakdown.critical_rank_note = fmt::format("rank {}", c.rank);
  }
  r.simulator.engine_s = engine_s;
  r.simulator.events = res.events;
  r.simulator.ops = graph.ops().size();
  r.simulator.simulated_ranks = static_cast<int>(graph.simulated_ranks().size());
  r.simulator.fidelity = static_cast<int>(graph.simulated_ranks().size()) == devices ? "full" : "symmetric";
  r.simulator.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

workload::ExecutionGraph build_graph(const plan::Experiment& e, const SimulateOptions& options) {
  if (!e.workload.model) return load_trace(e.workload.trace_file);
  return plan::compile(e, compile_options(options)).graph;
}

RunReport simulate(const plan::Experiment& e, const SimulateOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  RunReport r;
  if (!e.workload.model) {
    workload::ExecutionGraph g = load_trace(e.workload.trace_file);
    r = simulate_graph(e, g, nullptr, "trace", options);
  } else {
    plan::check_plan(e);
    const plan::MemoryEstimate mem = plan::estimate_memory(e, plan::derive_dp(e));
    if (!mem.fits() && !options.simulate_over_memory) return not_simulated(e, mem);
    plan::CompiledPlan cp = plan::compile(e, compile_options(options));
    const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r = simulate_graph(e, cp.graph, &cp.memory, cp.summary, options);
    r.simulator.compile_s = compile_s;
  }
  r.simulator.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace inflect::analysis
