#pragma once
// The engine's event queue: a binary min-heap ordered by (time, sequence number).
//
// Deterministic tie-breaking: events at the same time pop in the order they were pushed, so a run
// never depends on heap internals or on pointer values.
#include <cstdint>
#include <vector>

#include "inflect/core/time.hpp"

namespace inflect::core {

struct Event {
  Time time;
  std::uint64_t seq = 0;
  std::uint32_t kind = 0;   // meaning chosen by the owner of the queue
  std::uint32_t id = 0;     // an index into the owner's tables
  std::uint32_t stamp = 0;  // for lazy invalidation: owner compares with its current stamp
};

class EventQueue {
 public:
  void push(Time t, std::uint32_t kind, std::uint32_t id, std::uint32_t stamp = 0);
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event pop();
  void reserve(std::size_t n) { heap_.reserve(n); }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace inflect::core
