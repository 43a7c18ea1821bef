#pragma once
// The engine's indices, each a type of its own: a slot passed where a template op is meant, or a
// stream key where a slot is, does not compile. Each is one uint32 with explicit construction and
// no arithmetic beyond what its use names, so it costs nothing (passed in a register, compared as
// an integer). The default value is none(), the engine's "no such thing".
#include <compare>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "inflect/core/event_queue.hpp"
#include "inflect/core/free_slots.hpp"

namespace inflect::sim {

/// `kSequential`: the index also steps to the next one and measures how far it is after another
/// (TemplateOp, whose stream's ops are a contiguous range); the others have no arithmetic at all.
template <class Tag, bool kSequential = false>
class Index {
 public:
  constexpr Index() = default;
  constexpr explicit Index(std::uint32_t v) : v_(v) {}
  static constexpr Index none() { return Index(); }
  constexpr std::uint32_t value() const { return v_; }
  constexpr bool is_none() const { return v_ == kNone; }
  constexpr auto operator<=>(const Index&) const = default;
  /// The index after this one.
  constexpr Index next() const requires kSequential { return Index(v_ + 1); }
  /// How far after `from` this index is.
  constexpr std::uint32_t operator-(Index from) const requires kSequential { return v_ - from.v_; }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t v_ = kNone;
};

/// A simulated rank: its index in ExecutionGraph::simulated_ranks() (and in workload::RankOps).
using Slot = Index<struct SlotTag>;
/// A (rank, stream) pair as one index (StreamKeys lays them out).
using StreamKey = Index<struct StreamKeyTag>;
/// An open collective instance: the k-th call of every member on a group (Collectives).
using InstanceId = Index<struct InstanceTag>;
/// A collective's phase in progress: waiting its latency, or moving its transfer (Collectives).
using ActivePhaseId = Index<struct ActivePhaseTag>;
/// A collective's lowering, shared by every call of its kind and size on its group (CollectiveLowering).
using LoweringId = Index<struct LoweringTag>;

/// An op of a class template (RankTemplates). The templates are stored back to back, so one index
/// names an op of any class; a stream's ops are a contiguous range, so its head is one of these and
/// an op is done when its stream's head has passed it. next() is the op after it in template order
/// (the next of its stream, or one past the stream); `t - first` is t's position in a stream whose
/// first op is `first`.
using TemplateOp = Index<struct TemplateOpTag, true>;

/// Stream keys are slot << shift | stream: the hot path splits them with a shift and a mask
/// instead of a division (streams padded to a power of two; the padding streams are empty).
class StreamKeys {
 public:
  StreamKeys() = default;
  explicit StreamKeys(std::uint32_t streams) : streams_(streams) {
    while ((1u << shift_) < streams_) ++shift_;
    mask_ = (1u << shift_) - 1;
  }
  /// The graph's streams (at least one).
  std::uint32_t streams() const { return streams_; }
  /// Keys of `slots` ranks, padding included: keys are [0, count(slots)).
  std::uint32_t count(std::size_t slots) const { return static_cast<std::uint32_t>(slots << shift_); }
  StreamKey key(Slot s, std::uint32_t stream) const { return StreamKey((s.value() << shift_) | stream); }
  Slot slot(StreamKey k) const { return Slot(k.value() >> shift_); }
  std::uint32_t stream(StreamKey k) const { return k.value() & mask_; }

 private:
  std::uint32_t streams_ = 1, shift_ = 0, mask_ = 0;
};

/// A vector indexed by one kind of index only.
template <class Id, class T, class Alloc = std::allocator<T>>
class IdVector : private std::vector<T, Alloc> {
  using Base = std::vector<T, Alloc>;

 public:
  using Base::Base;
  using Base::assign;
  using Base::back;
  using Base::begin;
  using Base::clear;
  using Base::data;
  using Base::emplace_back;
  using Base::empty;
  using Base::end;
  using Base::push_back;
  using Base::reserve;
  using Base::resize;
  using Base::size;
  T& operator[](Id i) { return Base::operator[](i.value()); }
  const T& operator[](Id i) const { return Base::operator[](i.value()); }
};

/// A table whose entries are recycled through a free list (open collective instances, active
/// phases; core::take_slot): entries keep their allocations between uses.
template <class Id, class T>
class Recycled {
 public:
  /// An entry to reuse: the last one given back, else a new default-constructed one. The caller
  /// resets what it needs.
  Id take() { return Id(core::take_slot(free_, table_)); }
  void give_back(Id i) { free_.push_back(i.value()); }
  T& operator[](Id i) { return table_[i]; }
  const T& operator[](Id i) const { return table_[i]; }

 private:
  IdVector<Id, T> table_;
  std::vector<std::uint32_t> free_;  // indices given back
};

/// What an event in the engine's queue means (core::Event::kind); its id is the key, active phase,
/// transfer or instance it names.
enum class EventKind : std::uint32_t {
  compute_done,        // id: the stream key whose head kernel finishes (stale under interference)
  phase_latency_done,  // id: the active phase whose transfer starts now
  transfer_done,       // id: the flow network's transfer (stale unless its stamp is current)
  collective_done,     // id: an instance with no phases, complete as soon as it starts
};

inline void push_event(core::EventQueue& q, core::Time at, EventKind kind, std::uint32_t id, std::uint32_t stamp = 0) {
  q.push(at, static_cast<std::uint32_t>(kind), id, stamp);
}

}  // namespace inflect::sim
