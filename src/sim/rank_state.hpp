#pragma once
// What the engine tracks per simulated rank and per (rank, stream) while it runs.
//
// Each in one struct, although several parts of the engine read and write it (the event loop,
// compute, the breakdown): an event reads and writes most fields of its rank's and its stream's
// (head, busy, records, idle time, accumulators), so keeping them together costs one or two cache
// lines per event instead of one per field's array.
#include "inflect/core/activity.hpp"
#include "inflect/core/time.hpp"
#include "inflect/sim/engine.hpp"
#include "sim/ids.hpp"
#include "sim/rank_templates.hpp"

namespace inflect::sim {

/// A kernel's rate (core::Activity): work is picoseconds at full speed, and the rate the factor its
/// duration is stretched by (1 + comm_interference while its rank's collectives move data, else 1).
/// Its completion rounds to the nearest picosecond, as kernel durations do.
struct KernelSlowdown {
  double factor = 1;
  double work_in(core::Time span) const { return static_cast<double>(span.count_ps()) / factor; }
  core::Time time_for(double work) const { return core::Time::ps(static_cast<core::Time::rep>(work * factor + 0.5)); }
};

/// The compute-stream kernel in flight under interference (sim/compute).
struct RunningKernel {
  TemplateOp top;                         // none when no kernel runs
  core::Activity<KernelSlowdown> work;    // its progress
  core::Time end;                         // its predicted completion (events for other times are stale)
  core::Time base;                        // its duration without interference (at its clock)
  // Whether it is being slowed (work.rate is then 1 + interference). Kept beside the rate rather
  // than read from it: 1 + a tiny interference can round to 1, and the kernel is rescheduled
  // whenever this flag changes, as before the rate was an Activity's.
  bool slowed = false;
};

struct SlotState {
  // The breakdown's (sim/breakdown).
  RankTimes times;            // accumulators
  core::Time idle_since;      // when the compute stream last went idle
  core::Time last_end;        // when the rank's latest op finished ...
  TemplateOp last_top;        // ... and which
  // Communication as the power tracker and interference see it (sim/compute).
  std::uint32_t comm_active = 0;  // collectives moving data now
  bool comm_on = false;           // what the power tracker and interference were last told
  bool comm_pending = false;      // comm_active crossed zero this instant (Compute::comm_crossed)
  RunningKernel run;
};

struct StreamState {
  TemplateOp head;   // the next op to run
  TemplateOp end;    // one past the stream's last op
  TemplateOp first;  // the stream's first op (its records' origin)
  // Its record ring (sim/breakdown): op at stream position p is records[ring_at + (p & ring_mask)].
  std::uint32_t ring_at = 0;
  std::uint32_t ring_mask = 0;
  std::uint32_t busy = 0;  // an op is running
  core::Time started;      // when the running compute op started
};

/// Every rank's and stream's state, its streams' heads at their first ops.
struct RankState {
  RankState(const RankTemplates& t, const std::vector<workload::RankId>& simulated);
  IdVector<Slot, SlotState> slots;
  IdVector<StreamKey, StreamState> streams;  // the padding streams stay empty (head == end == none)
};

inline RankState::RankState(const RankTemplates& t, const std::vector<workload::RankId>& simulated) {
  const StreamKeys& keys = t.keys();
  slots.assign(t.slots(), SlotState{});
  streams.assign(keys.count(t.slots()), StreamState{});
  for (Slot s(0); s.value() < t.slots(); s = Slot(s.value() + 1)) {
    slots[s].times.rank = simulated[s.value()];
    for (std::uint32_t stream = 0; stream < keys.streams(); ++stream) {
      StreamState& st = streams[keys.key(s, stream)];
      st.head = st.first = t.stream_begin(s, stream);
      st.end = t.stream_begin(s, stream + 1);
    }
  }
}

}  // namespace inflect::sim
