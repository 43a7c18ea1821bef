#pragma once
// The engine's event queue: events ordered by (time, sequence number).
//
// Deterministic tie-breaking: events at the same time pop in the order they were pushed, so a run
// never depends on heap internals or on pointer values.
//
// A 4-ary min-heap (half as deep as a binary one; its four children share one or two cache lines)
// whose entries are single events or FIFO buckets of events of one time. Why buckets: in a large
// run most events share their time with many others (the data-parallel replicas and
// tensor-parallel peers of a rank do the same work at the same instants: on 16,384 GPUs a thousand
// events per instant), and a bucket takes them for one heap entry. A push finds its time's bucket
// through a four-entry cache of the latest times pushed; the second push at a time opens a bucket
// (the first stays a plain entry, so runs without ties pay almost nothing). Order is kept because
// the heap breaks ties by each entry's first sequence number and only the newest bucket of a time,
// the one the cache names, is ever appended to. The kind rides in the low bits of the sequence
// number (which keeps the order, as sequence numbers are unique), and so does the flag that marks
// a heap entry as a bucket (whose id then names the bucket): entries stay 24 bytes.
#include <cstdint>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/core/free_slots.hpp"
#include "inflect/core/time.hpp"

namespace inflect::core {

struct Event {
  Time time;
  std::uint64_t order = 0;  // sequence number << kOrderBits | queue flag << kKindBits | kind
  std::uint32_t id = 0;     // an index into the owner's tables
  std::uint32_t stamp = 0;  // for lazy invalidation: owner compares with its current stamp

  static constexpr int kKindBits = 4;
  static constexpr int kOrderBits = kKindBits + 1;
  /// Meaning chosen by the owner of the queue; below 2^kKindBits.
  std::uint32_t kind() const { return static_cast<std::uint32_t>(order & ((1u << kKindBits) - 1)); }
  std::uint64_t seq() const { return order >> kOrderBits; }
};

class EventQueue {
 public:
  /// `kind` must be below 2^Event::kKindBits (checked).
  void push(Time t, std::uint32_t kind, std::uint32_t id, std::uint32_t stamp = 0);
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const Event& top() const {
    const Event& e = heap_.front();
    if (!(e.order & kBucketFlag)) return e;
    const Bucket& b = buckets_[e.id];
    return b.events[b.head];
  }
  Event pop();
  void reserve(std::size_t n) { heap_.reserve(n); }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  static constexpr std::uint32_t kPlain = 0xffffffffu;
  static constexpr std::uint64_t kBucketFlag = std::uint64_t{1} << Event::kKindBits;
  struct Bucket {
    std::vector<Event> events;
    std::size_t head = 0;  // next to pop
  };
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }
  /// The newest heap entry of a recent time: a plain event, or a bucket while its generation holds.
  struct Recent {
    Time time = Time::max();
    std::uint32_t bucket = kPlain;
    std::uint32_t generation = 0;
  };
  static constexpr std::size_t kRecent = 4;
  void heap_push(const Event& e);
  void heap_pop();

  std::vector<Event> heap_;  // plain events, and buckets (kBucketFlag set, id = the bucket)
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> generation_;  // per bucket: bumped when it drains
  std::vector<std::uint32_t> free_;
  Recent recent_[kRecent];
  std::size_t next_recent_ = 0;  // round-robin replacement
  std::size_t size_ = 0;
  std::uint64_t next_seq_ = 0;
};

// Inline: the engine pushes and pops every event (tens of millions per full-fidelity step).
inline void EventQueue::push(Time t, std::uint32_t kind, std::uint32_t id, std::uint32_t stamp) {
  if (kind >= (1u << Event::kKindBits)) [[unlikely]] fail_invariant("event kind out of range");
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

inline Event EventQueue::pop() {
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
