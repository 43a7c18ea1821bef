#pragma once
// Bounds on a graph's figures, one set for every reader that fills a graph (graph JSON, Chakra,
// Kineto): far past any real model and device, short of what would make simulated time (int64
// ps, 106 days) or the report's figures overflow. Llama 3 405B ("The Llama 3 Herd of Models",
// 2024: 16M-token batches, 16,384 GPUs, 3.8e25 FLOP in all) has a step of 16M x 6 x 405e9 =
// 3.9e22 FLOP, 2.4e18 per GPU; its FP32 gradient all-reduce is 1.6e12 B. Private to the workload
// layer.
#include <cstdint>

namespace inflect::workload::bounds {

/// 40x a whole 405B step's FLOPs per GPU, in one kernel.
inline constexpr double kMaxKernelFlops = 1e20;
inline constexpr const char* kKernelFlopsWhy = "40x a Llama 3 405B step's FLOPs per GPU, in one kernel";
/// 1 PB: 600x that all-reduce; 3,000x a 288 GB HBM (a kernel's traffic, a message, a copy).
inline constexpr double kMaxBytes = 1e15;
inline constexpr const char* kBytesWhy = "1 PB: 600x an FP32 all-reduce of 405B parameters";
/// A recorded duration (a kernel, a host gap): at most a day; a trace's longest kernel is seconds
/// and a profiled step minutes.
inline constexpr std::int64_t kMaxRecordedSeconds = 86'400;

}  // namespace inflect::workload::bounds
