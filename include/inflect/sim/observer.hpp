#pragma once
// Observers decouple the engine from its outputs (after Taskflow's ObserverInterface): the engine
// announces each op as it finishes; io turns that into a Perfetto trace. The engine never includes
// a JSON library.
#include "inflect/core/time.hpp"
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
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_begin(const workload::ExecutionGraph& /*graph*/) {}
  virtual void on_op(const workload::ExecutionGraph& graph, const OpSpan& span) = 0;
  virtual void on_end(const workload::ExecutionGraph& /*graph*/, core::Time /*makespan*/) {}
};

}  // namespace inflect::sim
