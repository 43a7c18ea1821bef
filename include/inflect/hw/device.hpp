#pragma once
// A device's specification: the figures a user might dispute, loaded from calibration/devices/*.yaml.
// Every figure carries its source in `sources` (key = field name, value = citation).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "inflect/core/precision.hpp"
#include "inflect/core/units.hpp"

namespace inflect::hw {

/// A measured efficiency (fraction of a peak, 0..1] as a function of a size variable x (FLOPs of a
/// GEMM, bytes of a memory-bound op). Interpolated linearly in log10(x), clamped at both ends.
struct EfficiencyCurve {
  struct Point {
    double x = 0;
    double efficiency = 0;
  };
  std::vector<Point> points;  // sorted by x, at least one
  /// Efficiency at x: linear in log10(x) between points, clamped to the end points outside them
  /// (and for x <= 0). Throws core::Error(internal) on an empty curve: loaders never build one.
  double at(double x) const;
  /// True when x / at(x) never decreases in x, i.e. a bigger kernel is never predicted to finish
  /// sooner than a smaller one of the same kind. Loaders reject curves for which this is false.
  bool work_monotone() const;
};

/// What the device draws, by what it does, and how its clock follows (hw/power_model.hpp; every
/// figure's source is in DeviceSpec::sources under "power.<key>"; docs/power.md).
struct PowerSpec {
  /// Board power with nothing running (clocks idle, memory allocated).
  core::Watts idle;
  /// The calibration point that pins the energy per FLOP: a GEMM rate measured at the default
  /// power limit (board power), at a precision, and the clock that GEMM held there. Dense GEMMs
  /// on these devices are power-limited, so that GEMM drew the board power.
  core::FlopRate calibration_rate;
  core::Precision calibration_precision = core::Precision::bf16;
  double calibration_clock_mhz = 0;
  /// Its shape (M, N, K): its HBM traffic (A and B read, C written once) is charged at the
  /// per-byte energies, and only the rest of board - idle to its FLOPs.
  std::int64_t calibration_m = 0, calibration_n = 0, calibration_k = 0;
  /// Energy per byte of HBM traffic: DRAM and PHY (does not follow the core clock), and on-chip
  /// (L2, NoC, SMs; at the max clock's voltage, scales with V^2).
  double hbm_pj_per_byte = 0;
  double onchip_pj_per_byte = 0;
  /// Added while one of the device's collectives moves data (link SerDes, NCCL/RCCL kernels).
  core::Watts communication;
  /// The clock grid the power limiter chooses from: max_clock_mhz down in steps to the minimum.
  double min_clock_mhz = 0;
  double clock_step_mhz = 0;
  /// Supply voltage against clock, as a fraction of the voltage at max clock: `voltage_floor` up
  /// to `voltage_knee_mhz`, then linear to 1 at max clock.
  double voltage_floor = 0;
  double voltage_knee_mhz = 0;
  /// Share of a memory-bound kernel's time that still scales with the core clock (issue, address
  /// generation); the rest waits on HBM, whose clock the limiter does not lower.
  double memory_clock_share = 0;
  /// The lowest power limit the device accepts (nvidia-smi / amd-smi range).
  core::Watts min_power_cap;
  /// Static (leakage) power added per degree above the calibration temperature (the steady
  /// temperature of the device at board power in an air-cooled node with a 25 C inlet, where the
  /// calibration measurements are taken to have run): a hotter device has less of its limit left
  /// for switching, so it clocks lower under the same cap.
  double leakage_w_per_c = 0;
};

/// A lumped RC model of the device: C dT/dt = P - (T - T_coolant) / R.
struct ThermalSpec {
  double resistance_air_c_per_w = 0;     // die to inlet air, air-cooled node
  double resistance_liquid_c_per_w = 0;  // die to coolant, liquid-cooled node
  double capacitance_j_per_c = 0;
  double slowdown_c = 0;    // clock throttles above this
  double shutdown_c = 0;    // the device would shut down: reported, never simulated past
  double hysteresis_c = 0;  // throttling ends this far below slowdown
};

/// What a training process cannot use of the memory the driver reports (docs/devices.md, "Memory").
/// Every figure carries its source in DeviceSpec::sources under "memory_reserve.<field>".
struct MemoryReserve {
  /// Reported by the driver (nvidia-smi's FB total, amd-smi's VRAM total) but not offered to the
  /// runtime: nvidia-smi's "Reserved", the difference to CUDA's totalGlobalMem. 0 where the
  /// runtime's total equals the reported one (HIP on AMD).
  core::Bytes driver;
  /// The CUDA/HIP context of the one process a rank runs: driver state and the kernels it loads.
  core::Bytes context;
  /// The collective library's buffers one communicator holds on the device (NCCL/RCCL: the LL,
  /// LL128 and Simple FIFOs of each connection, for its ring and tree connections at the channel
  /// count the library picks on this device's node).
  core::Bytes per_communicator;
  /// driver + context + communicators * per_communicator.
  core::Bytes total(int communicators) const {
    return driver + context + per_communicator * static_cast<double>(communicators);
  }
};

/// One attention kernel's measured efficiency (a named implementation: a FlashAttention release,
/// cuDNN's fused attention, PyTorch's SDPA of a given year). Sources in DeviceSpec::sources under
/// "attention.<name>" (and "attention.<name>.backward").
struct AttentionImplementation {
  std::string name;         // e.g. "fa3", "fa2", "cudnn-2024", "sdpa-2026"
  std::string description;  // what the kernel is and where the curve comes from
  EfficiencyCurve forward;
  EfficiencyCurve backward;  // empty: the forward curve times the backward too
};

struct DeviceSpec {
  std::string name;          // catalog key, e.g. "h100-sxm"
  std::string display_name;  // e.g. "NVIDIA H100 SXM5 80GB"
  std::string vendor;        // "nvidia" | "amd"
  /// Dense (no sparsity) tensor peak per precision; a precision missing here is unsupported.
  std::map<core::Precision, core::FlopRate> peak_dense;
  /// Non-tensor (vector) FP32 rate, for elementwise work that is not memory bound.
  core::FlopRate vector_fp32;
  /// Device memory as the driver reports it (nvidia-smi's FB total, amd-smi's VRAM total), not
  /// the marketing figure: an H100 SXM "80GB" reports 81,559 MiB.
  core::Bytes hbm_capacity;
  /// What a framework cannot use of it (usable_memory).
  MemoryReserve memory_reserve;
  core::Bandwidth hbm_bandwidth;
  core::Watts board_power;
  /// Scale-up (NVLink / Infinity Fabric) bandwidth per direction, whole device.
  core::Bandwidth scale_up_bandwidth;
  int compute_units = 0;  // SMs or CUs
  double max_clock_mhz = 0;
  /// Fixed cost added to every kernel (launch + tail), seconds.
  core::Seconds kernel_launch_overhead;
  /// Slowdown of compute that overlaps communication on the device (the collective's kernels
  /// hold SMs/CUs and HBM bandwidth): a kernel overlapped takes (1 + this) times as long.
  double comm_interference = 0;
  /// Fraction of the dense peak a GEMM's launched tiles reach, keyed by the FLOPs those tiles
  /// execute (the GEMM's FLOPs / wave_quantization). Tile and wave effects come on top: see
  /// ComputeModel and docs/devices.md.
  EfficiencyCurve gemm_efficiency;
  /// Per-precision GEMM curves where the catalog gives one (it gives one for every supported
  /// precision); a precision missing here falls back to `gemm_efficiency`. Keyed like the above.
  std::map<core::Precision, EfficiencyCurve> gemm_efficiency_by_precision;
  /// Fraction of the dense peak a fused (flash-style) attention kernel reaches, by its FLOPs: the
  /// selected implementation's (`attention`), the one ComputeModel times attention kernels with.
  EfficiencyCurve attention_efficiency;
  /// The same for the backward pass, where the implementation has measurements of it; empty: the
  /// forward curve times the backward too (at its own, larger FLOP count).
  EfficiencyCurve attention_backward_efficiency;
  /// The attention implementation whose curves are selected above (the device's default until
  /// with_attention picks another) and every implementation the device file measures, the default
  /// (`default_attention`) among them.
  std::string attention;
  std::string default_attention;
  std::vector<AttentionImplementation> attention_implementations;
  /// Fraction of HBM bandwidth a streaming kernel reaches, by bytes moved.
  EfficiencyCurve memory_efficiency;
  /// GEMM tile edge (elements) used for wave-quantization: a GEMM launches ceil(M/t)*ceil(N/t)
  /// tiles over `compute_units` units.
  int gemm_tile = 128;
  PowerSpec power;
  ThermalSpec thermal;
  std::map<std::string, std::string> sources;
  std::string file;  // where it was loaded from ("<embedded>/h100-sxm.yaml" or a path)

  /// Dense peak at `p`; throws core::Error(input) if the device does not support it.
  core::FlopRate peak(core::Precision p) const;
  /// The GEMM efficiency curve for `p`: gemm_efficiency_by_precision[p] if present, else
  /// gemm_efficiency.
  const EfficiencyCurve& gemm_curve(core::Precision p) const;
  /// Memory a training process can use: hbm_capacity - memory_reserve.total(communicators), the
  /// communicators being those the rank runs collectives on. Never below 0.
  core::Bytes usable_memory(int communicators) const;
  /// This device with attention implementation `name`'s curves selected (attention_efficiency,
  /// attention_backward_efficiency, `attention`, sources["attention_efficiency"]). Throws
  /// core::Error(input) "device 'h100-sxm' has no attention implementation 'fa4'; it has: ..." when
  /// the device measures none of that name.
  DeviceSpec with_attention(std::string_view implementation) const;
  /// The implementation of that name, or nullptr when the device has none.
  const AttentionImplementation* find_attention(std::string_view implementation) const;
};

}  // namespace inflect::hw
