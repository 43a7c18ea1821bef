#include "inflect/core/event_queue.hpp"

#include "inflect/core/error.hpp"
#include "inflect/core/free_slots.hpp"

namespace inflect::core {

namespace {
constexpr std::size_t kArity = 4;
}  // namespace

void EventQueue::heap_push(const Event& e) {
  heap_.push_back(e);
  std::size_t i = heap_.size() - 1;
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::heap_pop() {
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  while (true) {
    const std::size_t first = kArity * i + 1;
    if (first >= n) break;
    std::size_t m = first;
    const std::size_t end = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < end; ++c)
      if (before(heap_[c], heap_[m])) m = c;
    if (!before(heap_[m], last)) break;
    heap_[i] = heap_[m];
    i = m;
  }
  heap_[i] = last;
}

}  // namespace inflect::core
