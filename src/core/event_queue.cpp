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

void EventQueue::push(Time t, std::uint32_t kind, std::uint32_t id, std::uint32_t stamp) {
  check_invariant(kind < (1u << Event::kKindBits), "event kind out of range");
  const Event e{t, (next_seq_++ << Event::kOrderBits) | kind, id, stamp};
  ++size_;
  for (Recent& r : recent_) {
    if (r.time != t) continue;
    if (r.bucket != kPlain && generation_[r.bucket] == r.generation) {
      buckets_[r.bucket].events.push_back(e);
      return;
    }
    // A second event at this time: open a bucket for it and the ones to follow.
    const std::uint32_t b = take_slot(free_, buckets_);
    if (b == generation_.size()) generation_.push_back(0);
    Bucket& bk = buckets_[b];
    bk.events.clear();
    bk.head = 0;
    bk.events.push_back(e);
    r.bucket = b;
    r.generation = generation_[b];
    heap_push(Event{t, e.order | kBucketFlag, b, 0});
    return;
  }
  Recent& r = recent_[next_recent_];
  next_recent_ = (next_recent_ + 1) % kRecent;
  r.time = t;
  r.bucket = kPlain;
  heap_push(e);
}

Event EventQueue::pop() {
  const Event& top = heap_.front();
  --size_;
  if (!(top.order & kBucketFlag)) {
    const Event out = top;
    heap_pop();
    return out;
  }
  const std::uint32_t b = top.id;
  Bucket& bk = buckets_[b];
  const Event out = bk.events[bk.head++];
  if (bk.head == bk.events.size()) {
    ++generation_[b];
    free_.push_back(b);
    heap_pop();
  }
  return out;
}

}  // namespace inflect::core
