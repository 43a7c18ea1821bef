// DeviceSpec's memory reserve: what a process can use of the memory the driver reports.
#include <doctest/doctest.h>

#include "inflect/core/error.hpp"
#include "inflect/core/units.hpp"
#include "inflect/hw/device.hpp"

using inflect::core::Bytes;
using inflect::hw::DeviceSpec;

namespace {
constexpr double kMiB = 1048576.0;
}  // namespace

TEST_CASE("device memory: usable = reported - driver reserve - context - buffers of each communicator") {
  // An H100 SXM as the catalog gives it: nvidia-smi reports 81,559 MiB = 81,559 x 1,048,576 =
  // 85,520,809,984 B; CUDA offers 85,045,477,376 B, so the driver keeps 475,332,608 B; the context
  // is 610 MiB = 639,631,360 B; NCCL's buffers are 16 channels x 3 connections x 9,633,792 B =
  // 462,422,016 B a communicator. With 3 communicators (tp, pp, dp):
  //   85,520,809,984 - 475,332,608 - 639,631,360 - 3 x 462,422,016 = 83,018,579,968 B (77.32 GiB).
  DeviceSpec d;
  d.hbm_capacity = Bytes(81559 * kMiB);
  d.memory_reserve.driver = Bytes(475332608);
  d.memory_reserve.context = Bytes(610 * kMiB);
  d.memory_reserve.per_communicator = Bytes(16.0 * 3 * 9633792);
  CHECK(d.hbm_capacity.value() == 85520809984.0);
  CHECK(d.memory_reserve.total(3).value() == 475332608.0 + 639631360.0 + 3 * 462422016.0);
  CHECK(d.usable_memory(3).value() == 83018579968.0);
  // The driver's share leaves exactly CUDA's totalGlobalMem.
  CHECK(d.usable_memory(0).value() + d.memory_reserve.context.value() == 85045477376.0);
  // A device built in code without a reserve uses all of it.
  DeviceSpec bare;
  bare.hbm_capacity = Bytes(80e9);
  CHECK(bare.usable_memory(4).value() == 80e9);
  // Never below zero.
  bare.memory_reserve.context = Bytes(81e9);
  CHECK(bare.usable_memory(0).value() == 0.0);
}

TEST_CASE("with_attention selects an implementation's curves, and names the ones a device has when it lacks one") {
  // Two implementations: "slow" at 30% of the peak (forward only) and "fast" at 60% forward, 50%
  // backward. Selecting one copies its curves into the ones ComputeModel reads.
  DeviceSpec d;
  d.name = "toy";
  inflect::hw::AttentionImplementation slow{"slow", "30% forward", {{{1e9, 0.3}}}, {}};
  inflect::hw::AttentionImplementation fast{"fast", "60% / 50%", {{{1e9, 0.6}}}, {{{1e9, 0.5}}}};
  d.attention_implementations = {slow, fast};
  d.sources["attention.fast"] = "derived from fast points";
  const DeviceSpec f = d.with_attention("fast");
  CHECK(f.attention == "fast");
  CHECK(f.attention_efficiency.at(1e12) == 0.6);
  CHECK(f.attention_backward_efficiency.at(1e12) == 0.5);
  CHECK(f.sources.at("attention_efficiency") == "derived from fast points");
  // Back to one without backward points: the backward curve is emptied, not kept from before.
  const DeviceSpec s = f.with_attention("slow");
  CHECK(s.attention_efficiency.at(1e12) == 0.3);
  CHECK(s.attention_backward_efficiency.points.empty());
  try {
    (void)d.with_attention("fats");
    FAIL("no error");
  } catch (const inflect::core::Error& e) {
    CHECK(e.kind() == inflect::core::ErrorKind::input);
    CHECK(e.message() == "device 'toy' has no attention implementation 'fats' (did you mean 'fast'?); it has: slow, fast");
  }
}
