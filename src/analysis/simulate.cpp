#include "inflect/analysis/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "inflect/core/error.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/hw/power_model.hpp"
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

plan::CompileOptions compile_options(const plan::Experiment& e, const SimulateOptions& o) {
  plan::CompileOptions co;
  // Devices that differ thermally are not interchangeable: only full fidelity is faithful.
  co.fidelity = e.cluster.thermal.any() ? plan::Fidelity::full : o.fidelity;
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

// Each simulated device's cooling for one step of training.steps (docs/power.md, "Steps").
// Step 1 starts every device at the temperature its idle power settles at (the node idled before
// the job). Every later step starts at the steady state of the step before — a step lasts seconds,
// the RC constant tens of seconds, so this is the state a long run of such steps reaches:
//   - a device whose average power settles below its slowdown temperature starts there;
//   - one that would settle above it is regulated, as the driver's thermal slowdown does: it
//     starts at the slowdown temperature, hot, and its kernels may draw a budget that the next
//     steps correct until its average power is what the cooling removes there,
//     P_th = (T_slowdown - T_coolant) / R (the budget's part above idle scaled by the ratio of
//     the wanted to the measured average above idle);
//   - a regulated device whose budget would exceed board power is no longer limited by heat.
std::vector<sim::DeviceCooling> cooling(const plan::Experiment& e, const hw::PowerModel& pm,
                                        const workload::ExecutionGraph& graph, const sim::EngineResult* previous,
                                        const std::vector<sim::DeviceCooling>* before) {
  const std::size_t slots = graph.simulated_ranks().size();
  const auto& th = e.cluster.device.thermal;
  sim::DeviceCooling c;
  c.coolant_c = e.cluster.inlet();
  c.resistance_c_per_w = e.cluster.topology.cooling.kind == net::CoolingKind::air ? th.resistance_air_c_per_w
                                                                                  : th.resistance_liquid_c_per_w;
  c.capacitance_j_per_c = th.capacitance_j_per_c;
  std::vector<sim::DeviceCooling> out(slots, c);
  const auto& sim_ranks = graph.simulated_ranks();
  const int per_node = e.cluster.topology.devices_per_node;
  for (std::size_t i = 0; i < slots; ++i) {
    const int device = static_cast<int>(sim_ranks[i]);
    out[i].resistance_c_per_w *= e.cluster.thermal.resistance_scale(device, per_node);
    out[i].coolant_c = e.cluster.thermal.inlet_c(device / per_node, c.coolant_c);
    out[i].start_c = hw::rc_steady(out[i].coolant_c, pm.idle_w(), out[i].resistance_c_per_w);
  }
  if (!previous || !before || !(previous->makespan > core::Time::zero())) return out;
  const double idle = pm.idle_w(), board = pm.board_w();
  for (std::size_t i = 0; i < slots; ++i) {
    sim::DeviceCooling& d = out[i];
    const double avg = previous->power[i].energy_j / previous->makespan.seconds();
    const double steady = hw::rc_steady(d.coolant_c, avg, d.resistance_c_per_w);
    const double p_th = (th.slowdown_c - d.coolant_c) / d.resistance_c_per_w;
    const double budget = (*before)[i].hot_budget_w;
    if (budget <= 0) {
      if (steady < th.slowdown_c) {
        d.start_c = steady;
        continue;
      }
      d.hot_budget_w = std::max(p_th, idle);  // first guess: kernels draw what the cooling removes
    } else {
      d.hot_budget_w = avg > idle && budget > idle ? idle + (budget - idle) * (p_th - idle) / (avg - idle) : budget;
      d.hot_budget_w = std::max(d.hot_budget_w, idle);
      if (d.hot_budget_w >= board) {  // heat no longer binds
        d.hot_budget_w = 0;
        d.start_c = th.slowdown_c - th.hysteresis_c;
        continue;
      }
    }
    d.start_c = th.slowdown_c;
    d.start_hot = true;
  }
  return out;
}

// Power and thermal figures of one engine run, over all devices (a simulated rank weighs as the
// ranks it represents).
void report_power(const plan::Experiment& e, const hw::PowerModel& pm, const workload::ExecutionGraph& graph,
                  const sim::EngineResult& res, double tokens_per_step, PowerReport& p, ThermalReport& t) {
  const double step = res.makespan.seconds();
  double devices = 0, energy = 0, clock = 0, kernel = 0, power_lim = 0, thermal_lim = 0;
  for (std::size_t i = 0; i < res.power.size(); ++i) {
    const double w = graph.represents()[i];
    const auto& d = res.power[i];
    devices += w;
    energy += w * d.energy_j;
    clock += w * d.clock_mhz_s;
    kernel += w * d.kernel_s;
    power_lim += w * d.power_limited_s;
    thermal_lim += w * d.thermal_limited_s;
    p.peak_device_w = std::max(p.peak_device_w, d.peak_w);
    p.peak_avg_device_w = std::max(p.peak_avg_device_w, d.peak_avg_w);
    t.peak_temp_c = std::max(t.peak_temp_c, d.peak_c);
    t.reached_shutdown = t.reached_shutdown || d.reached_shutdown;
  }
  if (!(devices > 0) || !(step > 0)) return;
  const auto& topo = e.cluster.topology;
  p.modeled = t.modeled = true;
  p.cap_w = e.cluster.power_cap();
  p.avg_device_w = energy / (devices * step);
  p.avg_node_w = topo.devices_per_node * p.avg_device_w + topo.power.other.value() + topo.power.fabric_per_node.value();
  p.cluster_avg_w = e.cluster.nodes * p.avg_node_w;
  p.facility_avg_w = p.cluster_avg_w * topo.power.pue;
  p.energy_per_step_j = p.cluster_avg_w * step;
  p.facility_energy_per_step_j = p.facility_avg_w * step;
  p.energy_per_token_j = tokens_per_step > 0 ? p.energy_per_step_j / tokens_per_step : 0;
  p.avg_clock_mhz = kernel > 0 ? clock / kernel : 0;
  p.max_clock_mhz = pm.clock_mhz(pm.top_level());
  t.cooling = topo.cooling.kind == net::CoolingKind::air ? "air" : "liquid";
  t.inlet_c = e.cluster.inlet();
  t.power_throttled_fraction = power_lim / (devices * step);
  t.thermal_throttled_fraction = thermal_lim / (devices * step);
  t.throttled_fraction = t.power_throttled_fraction + t.thermal_throttled_fraction;
  t.limiter = t.throttled_fraction == 0 ? "none" : (thermal_lim > power_lim ? "thermal" : "power");
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
  if (e.cluster.thermal.any() && static_cast<int>(graph.simulated_ranks().size()) != devices)
    throw core::Error(core::ErrorKind::input,
                      "cluster.thermal makes devices differ, but this execution graph simulates one rank per class "
                      "(symmetric); export it with --fidelity full to replay it with thermal variation",
                      core::SourceLocation{e.file, 0, 0, "cluster.thermal"});
  net::Topology topo(e.cluster.topology, e.cluster.nodes);
  hw::ComputeModel compute(e.cluster.device);
  sim::EngineOptions eo;
  eo.observer = options.observer;
  eo.tuning.software_overhead = e.cluster.topology.collective_overhead;
  eo.comm_interference = e.cluster.device.comm_interference;
  const hw::PowerModel power(e.cluster.device);
  eo.power.model = &power;
  eo.power.cap_w = e.cluster.power_cap();
  eo.power.comm_interference = eo.comm_interference;
  auto te = std::chrono::steady_clock::now();
  auto meta = [&](const char* k) {
    auto it = graph.meta().find(k);
    return it == graph.meta().end() ? 0.0 : it->second;
  };
  const double tokens_per_step = meta("tokens_per_step");
  // training.steps: see cooling() for where each step starts. The observer sees the last step
  // only; the report's power and thermal figures are the last step's.
  std::vector<StepRecord> steps;
  sim::EngineResult res;
  PowerReport power_report;
  ThermalReport thermal_report;
  std::uint64_t events = 0;
  for (int step = 1; step <= e.training.steps; ++step) {
    eo.power.devices = cooling(e, power, graph, step == 1 ? nullptr : &res, step == 1 ? nullptr : &eo.power.devices);
    eo.observer = step == e.training.steps ? options.observer : nullptr;
    res = sim::run_engine(graph, topo, compute, eo);
    events += res.events;
    power_report = {};
    thermal_report = {};
    report_power(e, power, graph, res, tokens_per_step, power_report, thermal_report);
    steps.push_back({res.makespan.seconds(), thermal_report.peak_temp_c, power_report.avg_device_w});
  }
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
  r.tokens_per_step = tokens_per_step;
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
    r.breakdown.compute_throttle_s = c.throttle.seconds();
    r.breakdown.exposed_comm_s.dp = c.exposed[static_cast<std::size_t>(workload::ParallelDim::dp)].seconds();
    r.breakdown.exposed_comm_s.tp = c.exposed[static_cast<std::size_t>(workload::ParallelDim::tp)].seconds();
    r.breakdown.exposed_comm_s.pp = c.exposed[static_cast<std::size_t>(workload::ParallelDim::pp)].seconds();
    r.breakdown.exposed_comm_s.cp = c.exposed[static_cast<std::size_t>(workload::ParallelDim::cp)].seconds();
    r.breakdown.exposed_comm_s.ep = c.exposed[static_cast<std::size_t>(workload::ParallelDim::ep)].seconds();
    r.breakdown.bubble_s = c.bubble.seconds();
    r.breakdown.other_s = c.other.seconds();
    r.breakdown.critical_rank_note = fmt::format("rank {}", c.rank);
  }
  r.power = std::move(power_report);
  r.thermal = std::move(thermal_report);
  r.steps = std::move(steps);
  r.simulator.engine_s = engine_s;
  r.simulator.events = events;
  r.simulator.ops = graph.op_count();
  r.simulator.simulated_ranks = static_cast<int>(graph.simulated_ranks().size());
  r.simulator.stored_ranks = r.simulator.simulated_ranks - static_cast<int>(graph.replicas().size());
  r.simulator.rank_classes = static_cast<int>(res.classes);
  r.simulator.fidelity =
      plan::fidelity_name(static_cast<int>(graph.simulated_ranks().size()) == devices ? plan::Fidelity::full : plan::Fidelity::symmetric);
  if (e.cluster.thermal.any() && options.fidelity == plan::Fidelity::symmetric)
    r.simulator.fidelity_note = "full: cluster.thermal makes devices differ, so no rank stands for another";
  r.simulator.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

workload::ExecutionGraph build_graph(const plan::Experiment& e, const SimulateOptions& options) {
  if (!e.workload.model) return load_trace(e.workload.trace_file);
  return plan::compile(e, compile_options(e, options)).graph;
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
    plan::CompiledPlan cp = plan::compile(e, compile_options(e, options));
    const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r = simulate_graph(e, cp.graph, &cp.memory, cp.summary, options);
    r.simulator.compile_s = compile_s;
  }
  r.simulator.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace inflect::analysis
