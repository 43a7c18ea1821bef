#include "inflect/core/event_queue.hpp"

#include <utility>

namespace inflect::core {

void EventQueue::push(Time t, std::uint32_t kind, std::uint32_t id, std::uint32_t stamp) {
  heap_.push_back(Event{t, next_seq_++, kind, id, stamp});
  std::size_t i = heap_.size() - 1;
  const Event e = heap_[i];
  while (i > 0) {
    std::size_t parent = (i - 1) / 2;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Event EventQueue::pop() {
  Event out = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return out;
  std::size_t i = 0;
  while (true) {
    std::size_t l = 2 * i + 1;
    if (l >= n) break;
    std::size_t r = l + 1;
    std::size_t m = (r < n && before(heap_[r], heap_[l])) ? r : l;
    if (!before(heap_[m], last)) break;
    heap_[i] = heap_[m];
    i = m;
  }
  heap_[i] = last;
  return out;
}

}  // namespace inflect::core
