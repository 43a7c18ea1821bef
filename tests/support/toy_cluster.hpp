#pragma once
// Hand-built devices and topologies with round figures for engine, plan and analysis tests, so
// expected values can be worked out by hand. These are test inputs, not calibration.
#include "inflect/core/units.hpp"
#include "inflect/hw/device.hpp"
#include "inflect/net/topology_spec.hpp"
#include "inflect/plan/experiment.hpp"

namespace inflect::test {

/// A device doing 100 TFLOP/s dense bf16 at 100% efficiency, 1 TB/s HBM at 100%, no launch cost,
/// 80 GB of HBM: a memory-bound kernel of B bytes takes B / 1e12 s.
inline hw::DeviceSpec toy_device() {
  hw::DeviceSpec d;
  d.name = "toy";
  d.display_name = "toy device";
  d.vendor = "test";
  d.peak_dense[core::Precision::bf16] = core::tflop_per_s(100);
  d.peak_dense[core::Precision::fp16] = core::tflop_per_s(100);
  d.peak_dense[core::Precision::fp32] = core::tflop_per_s(50);
  d.vector_fp32 = core::tflop_per_s(50);
  d.hbm_capacity = core::gb(80);
  d.hbm_bandwidth = core::gb_per_s(1000);
  d.board_power = core::Watts(700);
  d.scale_up_bandwidth = core::gb_per_s(100);
  d.compute_units = 1;
  d.max_clock_mhz = 1000;
  d.kernel_launch_overhead = core::Seconds(0);
  d.gemm_efficiency.points = {{1.0, 1.0}};
  d.attention_efficiency.points = {{1.0, 1.0}};
  d.memory_efficiency.points = {{1.0, 1.0}};
  d.gemm_tile = 1;
  // Power: round figures; at the default limit (board power) no kernel changes its duration.
  d.power.idle = core::Watts(100);
  d.power.calibration_rate = core::tflop_per_s(99);
  d.power.calibration_precision = core::Precision::bf16;
  d.power.calibration_clock_mhz = 1000;
  d.power.calibration_m = d.power.calibration_n = d.power.calibration_k = 8192;
  d.power.hbm_pj_per_byte = 32;
  d.power.onchip_pj_per_byte = 40;
  d.power.communication = core::Watts(50);
  d.power.min_clock_mhz = 100;
  d.power.clock_step_mhz = 50;
  d.power.voltage_floor = 0.5;
  d.power.voltage_knee_mhz = 500;
  d.power.memory_clock_share = 0.1;
  d.power.min_power_cap = core::Watts(100);
  d.power.leakage_w_per_c = 0;  // tests that want leakage set it
  d.thermal.resistance_air_c_per_w = 0.05;
  d.thermal.resistance_liquid_c_per_w = 0.03;
  d.thermal.capacitance_j_per_c = 100;
  d.thermal.slowdown_c = 90;
  d.thermal.shutdown_c = 100;
  d.thermal.hysteresis_c = 3;
  return d;
}

/// `per_node` devices on a switch with 100 GB/s ports, NICs of 10 GB/s one per device, all
/// latencies `latency` seconds, efficiency 1, one leaf for up to 64 nodes.
inline net::TopologySpec toy_topology(int per_node = 8, double latency = 0, double port_gbs = 100, double nic_gbs = 10) {
  net::TopologySpec s;
  s.name = "toy";
  s.device = "toy";
  s.devices_per_node = per_node;
  s.collective_overhead = core::Seconds(0);
  s.intra.kind = net::IntraFabricKind::switched;
  s.intra.port_bandwidth = core::gb_per_s(port_gbs);
  s.intra.hop_latency = core::Seconds(latency);
  s.intra.efficiency = 1.0;
  s.scale_out.technology = "toy";
  s.scale_out.nics_per_node = per_node;
  s.scale_out.nic_bandwidth = core::gb_per_s(nic_gbs);
  s.scale_out.nic_latency = core::Seconds(latency);
  s.scale_out.switch_latency = core::Seconds(latency);
  s.scale_out.nodes_per_leaf = 64;
  s.scale_out.oversubscription = 1.0;
  s.scale_out.rail_optimized = true;
  s.scale_out.efficiency = 1.0;
  return s;
}

/// A GPT-style toy on one 8-device toy node: h = 1024, 16 heads, ffn 4h, 8 layers, vocab 1000,
/// seq 1024, global batch 8 of micro-batch 1, tp2 pp2 dp2, ZeRO-1, full recomputation. One layer
/// has 12h^2 + 13h = 12,596,224 parameters.
inline plan::Experiment toy_gpt_experiment() {
  plan::Experiment e;
  e.name = "toy-gpt-case";
  e.cluster.device = toy_device();
  e.cluster.topology = toy_topology(8);
  e.cluster.nodes = 1;
  workload::ModelSpec m;
  m.name = "toy-gpt";
  m.layers = 8;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.mlp = workload::MlpKind::gelu;
  m.vocab = 1000;
  m.seq_len = 1024;
  e.workload.model = m;
  e.training.seq_len = 1024;
  e.training.global_batch = 8;
  e.training.micro_batch = 1;
  e.training.precision = core::Precision::bf16;
  e.parallel.tp = 2;
  e.parallel.pp = 2;
  e.parallel.dp = 2;
  e.parallel.zero = 1;
  e.parallel.recompute = plan::Recompute::full;
  return e;
}

/// The GPT toy as pure data parallelism (tp1 pp1 dp8, ZeRO-1, one micro-batch per rank) split into
/// `workers` DiLoCo workers with an outer sync every `sync_every` steps (docs/low-communication.md).
inline plan::Experiment toy_diloco_experiment(int sync_every, int workers = 2,
                                              plan::OuterCompression c = plan::OuterCompression::none, int fragments = 1) {
  plan::Experiment e = toy_gpt_experiment();
  e.parallel.tp = 1;
  e.parallel.pp = 1;
  e.parallel.dp = 8;
  plan::DilocoSpec d;
  d.sync_every = sync_every;
  d.workers = workers;
  d.compression = c;
  if (c == plan::OuterCompression::topk) d.topk_fraction = 0.01;
  d.fragments = fragments;
  e.training.diloco = d;
  return e;
}

}  // namespace inflect::test
