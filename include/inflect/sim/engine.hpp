#pragma once
// The discrete-event engine: executes an execution graph over the devices' compute model and the
// network's flow model.
//
// Each simulated rank has streams that run their ops in order, one at a time; an op also waits
// for its explicit deps. A compute op takes the compute model's duration for its kernel. A
// collective op waits until every simulated member of its group has reached the matching call,
// then runs the lowered collective's phases as transfers sharing links max-min fairly with every
// other transfer in flight. In symmetric fidelity a transfer stands for itself and its mirrors
// (the same collective of the ranks it represents): it weighs on each link as all of them together.
#include <array>
#include <cstdint>
#include <vector>

#include "inflect/core/time.hpp"
#include "inflect/hw/compute_model.hpp"
#include "inflect/net/collective.hpp"
#include "inflect/net/topology.hpp"
#include "inflect/sim/device_power.hpp"
#include "inflect/sim/observer.hpp"
#include "inflect/sim/variability.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::sim {

struct EngineOptions {
  Observer* observer = nullptr;
  net::CollectiveTuning tuning;
  /// Name of the stream whose idle time is attributed in the breakdown.
  std::string compute_stream = "compute";
  /// Slowdown of a compute kernel that starts while one of its rank's collectives is moving data
  /// (the collective's kernels hold SMs and HBM bandwidth): duration x (1 + this). Device data
  /// (hw::DeviceSpec::comm_interference); 0 = none.
  double comm_interference = 0;
  /// Power, clocks and temperature (sim/device_power.hpp); without a model clocks stay fixed.
  PowerOptions power;
  /// Devices that differ in speed, and per-kernel jitter (sim/variability.hpp); none by default.
  Variability variability;
};

/// Where one rank's time went. compute + exposed + bubble + other = finish.
struct RankTimes {
  workload::RankId rank = 0;
  core::Time finish;
  core::Time compute;
  std::array<core::Time, workload::kParallelDims> exposed{};
  /// Of `exposed`: waiting on collectives whose group spans several sites (the WAN).
  core::Time exposed_across_sites;
  core::Time bubble;
  core::Time other;
  /// Part of `compute` that is the interference slowdown of overlapped communication.
  core::Time interference;
  /// Part of `compute` that is kernels running below their board-power clock.
  core::Time throttle;
  /// Part of `compute` that device variability added: the compute-stream kernels' time on this
  /// rank's device (in symmetric fidelity the slowest it stands for) less their calibrated time.
  /// Negative on a device faster than the calibrated one; 0 without EngineOptions::variability.
  core::Time device_slowdown;
  /// Part of `other`: compute-stream idle while a non-pipeline collective it waited on had not
  /// started because a member had not yet arrived (waiting for a straggler).
  core::Time peer_wait;
  double flops = 0;  // kernel FLOPs executed (incl. recompute)
};

struct EngineResult {
  core::Time makespan;
  std::vector<RankTimes> ranks;  // one per simulated rank, in graph order
  std::uint64_t events = 0;
  std::uint64_t transfers = 0;
  /// Classes of identical ranks the engine ran from one template each.
  std::uint32_t classes = 0;
  /// One per simulated rank when options.power has a model, else empty.
  std::vector<DevicePower> power;
};

/// How long the engine runs kernel `k` at the calibrated clock, before device variability, power
/// limits and interference: its recorded duration when a trace measured it, else the device
/// model's (a fused block's parts summed). The one rule, for the engine and for what reports or
/// exports a kernel's time (Chakra's duration_micros).
core::Time kernel_duration(const workload::Kernel& k, const hw::ComputeModel& model);

/// Runs the graph once. `compute` gives kernel durations for the (identical) devices.
EngineResult run_engine(const workload::ExecutionGraph& graph, const net::Topology& topo,
                        const hw::ComputeModel& compute, const EngineOptions& options = {});

}  // namespace inflect::sim
