#pragma once
// The cost description of one kernel: the vocabulary shared by the workload layer (which kernels a
// model runs) and the hw layer (how long a device takes for them). Lives in core so that neither
// of those layers depends on the other.
#include <cstdint>

#include "inflect/core/precision.hpp"
#include "inflect/core/units.hpp"

namespace inflect::core {

enum class KernelClass : unsigned char {
  gemm,       // tensor-core matrix multiply; shape in m, n, k, batch
  attention,  // fused flash-style attention, forward; flops and bytes
  memory,     // bandwidth-bound (elementwise, norms, softmax, optimizer); bytes dominate
  attention_backward,  // fused flash-style attention, backward (its own curve where a device has one)
};

/// Either pass of fused attention.
constexpr bool is_attention(KernelClass c) { return c == KernelClass::attention || c == KernelClass::attention_backward; }

/// What the compute model needs to know about one kernel.
struct KernelCost {
  KernelClass cls = KernelClass::memory;
  Precision precision = Precision::bf16;
  Flops flops;
  Bytes bytes;                                  // HBM traffic (reads + writes)
  std::int64_t m = 0, n = 0, k = 0, batch = 1;  // GEMM C[m,n] = A[m,k] B[k,n], `batch` times
};

/// One GEMM C[m,n] = A[m,k] B[k,n]: 2mnk FLOPs; HBM traffic is the compulsory read of A and B and
/// write of C (tiles are re-read from L2, not HBM, for the shapes of a transformer). A and B are
/// in `p`; C in activation_precision(p): an FP8 GEMM writes its output in BF16 (cuBLASLt's FP8
/// matmul with a BF16 D, as Transformer Engine and torch._scaled_mm call it).
inline KernelCost gemm_cost(double m, double n, double k, Precision p) {
  KernelCost c;
  c.cls = KernelClass::gemm;
  c.precision = p;
  c.flops = Flops(2 * m * n * k);
  c.bytes = Bytes((m * k + k * n) * bytes_per_element(p) + m * n * bytes_per_element(activation_precision(p)));
  c.m = static_cast<std::int64_t>(m);
  c.n = static_cast<std::int64_t>(n);
  c.k = static_cast<std::int64_t>(k);
  return c;
}

}  // namespace inflect::core
