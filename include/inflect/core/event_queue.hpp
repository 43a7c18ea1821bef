#pragma once
// The engine's event queue: a 4-ary min-heap ordered by (time, sequence number).
//
// Deterministic tie-breaking: events at the same time pop in the order they were pushed, so a run
// never depends on heap internals or on pointer values.
//
// Why 4-ary and 24-byte entries: a large run pushes and pops tens of millions of events with
// thousands pending. A 4-ary heap is half as deep as a binary one and its four children share one
// or two cache lines, so a pop does about half the dependent loads; the kind rides in the low bits
// of the sequence number (which keeps the order, as sequence numbers are unique).
#include <cstdint>
#include <vector>

#include "inflect/core/time.hpp"

namespace inflect::core {

struct Event {
  Time time;
  std::uint64_t order = 0;  // sequence number << kKindBits | kind
  std::uint32_t id = 0;     // an index into the owner's tables
  std::uint32_t stamp = 0;  // for lazy invalidation: owner compares with its current stamp

  static constexpr int kKindBits = 4;
  /// Meaning chosen by the owner of the queue; below 2^kKindBits.
  std::uint32_t kind() const { return static_cast<std::uint32_t>(order & ((1u << kKindBits) - 1)); }
  std::uint64_t seq() const { return order >> kKindBits; }
};

class EventQueue {
 public:
  /// `kind` must be below 2^Event::kKindBits (checked).
  void push(Time t, std::uint32_t kind, std::uint32_t id, std::uint32_t stamp = 0);
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event pop();
  void reserve(std::size_t n) { heap_.reserve(n); }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace inflect::core
