#pragma once
// Observers decouple the engine from its outputs (after Taskflow's ObserverInterface): the engine
// announces each op as it finishes; io turns that into a Perfetto trace. The engine never includes
// a JSON library.
#include "inflect/core/time.hpp"
#include "inflect/core/units.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::sim {

/// One finished op on one rank. For a collective, `posted` is when this rank reached it (its
/// stream and deps allowed it), `start` when every member had arrived and data began to move.
/// For compute ops posted == start.
struct OpSpan {
  workload::OpId op = 0;
  core::Time posted;
  core::Time start;
  core::Time end;
  /// A collective's algorithm and protocol as the lowering chose them ("ring", "simple"; static
  /// strings); null for compute ops.
  const char* algorithm = nullptr;
  const char* protocol = nullptr;
};

/// A device's power, clock and temperature from `time` on (sent whenever one of them changes:
/// a kernel starts or ends, a collective starts or stops moving data). clock_mhz is 0 while no
/// kernel runs.
struct DeviceSample {
  workload::RankId rank = 0;
  core::Time time;
  core::Watts power;
  double clock_mhz = 0;
  core::Celsius temperature;
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_begin(const workload::ExecutionGraph& /*graph*/) {}
  virtual void on_op(const workload::ExecutionGraph& graph, const OpSpan& span) = 0;
  virtual void on_device(const workload::ExecutionGraph& /*graph*/, const DeviceSample& /*sample*/) {}
  virtual void on_end(const workload::ExecutionGraph& /*graph*/, core::Time /*makespan*/) {}
};

}  // namespace inflect::sim
