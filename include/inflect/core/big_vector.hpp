#pragma once
// BigVector<T>: a std::vector whose large buffers are backed by transparent huge pages.
//
// Why: a 1,024-rank full-fidelity graph holds tens of millions of ops; the engine touches them
// at a thousand places at once (one per rank), so with 4 KiB pages nearly every access misses the
// TLB. Asking the kernel for 2 MiB pages (madvise(MADV_HUGEPAGE); a no-op where unsupported)
// removes most page walks and page-fault work. Small buffers use the ordinary allocator.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace inflect::core {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < 2 * kHuge) return static_cast<T*>(::operator new(bytes));
    const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < 2 * kHuge) ::operator delete(p);
    else std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
};

template <class T>
using BigVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace inflect::core
