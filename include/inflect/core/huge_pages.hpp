#pragma once
// An allocator that backs large arrays with 2 MiB transparent huge pages where the kernel allows
// it (Linux, THP "madvise" or "always").
//
// Why: the engine's per-op tables for a 1,024-rank graph span gigabytes and are walked by
// thousands of interleaved cursors (one per rank and stream). With 4 KiB pages nearly every step
// of a cursor misses the TLB; with 2 MiB pages the same walk touches 512x fewer pages. Measured on
// GPT-3 175B / 1,024 GPUs in full fidelity: about 25% less wall time (docs/benchmarks.md).
// Semantics are those of std::allocator; only the placement of the memory changes.
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace inflect::core {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
    const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (p == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advisory: failure just leaves 4 KiB pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHuge) ::operator delete(p);
    else std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};

}  // namespace inflect::core
