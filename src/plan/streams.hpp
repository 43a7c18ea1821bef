#pragma once
// The streams a rank's ops run on, registered with the graph once, in a fixed order (stream ids
// are part of the graph). Separate from the context because registering them writes the graph;
// every part that places ops reads the ids from here.
#include <cstdint>

#include "inflect/workload/exec_graph.hpp"
#include "plan/plan_context.hpp"

namespace inflect::plan::compiler {

struct Streams {
  Streams(const PlanContext& ctx, workload::ExecutionGraph& g) {
    const ParallelPlan& p = ctx.plan;
    compute = g.stream("compute");
    tp = g.stream("tp");
    // plan::validate: tp_comm_overlap needs tp > 1 and sequence parallelism.
    if (p.tp_comm_overlap && ctx.options.fidelity == Fidelity::full) tp_recv = g.stream("tp_recv");
    if (p.cp > 1) {
      cp_send = g.stream("cp_send");
      cp_recv = g.stream("cp_recv");
    }
    if (p.pp > 1) {
      recv_act_down = g.stream("pp_recv_act");
      send_act_down = g.stream("pp_send_act");
      recv_grad_up = g.stream("pp_recv_grad");
      send_grad_up = g.stream("pp_send_grad");
      if (p.schedule == Schedule::dualpipe || p.schedule == Schedule::dualpipev) {
        recv_act_up = g.stream("pp_recv_act_up");
        send_act_up = g.stream("pp_send_act_up");
        recv_grad_down = g.stream("pp_recv_grad_down");
        send_grad_down = g.stream("pp_send_grad_down");
      }
    }
    dp = g.stream("dp");
    if (p.ep > 1) ep = g.stream("ep");
    // ZeRO-3's per-layer gathers, and ZeRO-1/2's parameter gathers under the first forward.
    if (p.zero >= 3 || (p.overlap_param_gather && p.zero >= 1)) dp_gather = g.stream("dp_gather");
    // DiLoCo's outer all-reduce (a sync step only): its own stream, so that a streamed fragment
    // runs beside the step's data-parallel reduction instead of queueing behind it.
    if (ctx.diloco_sync) diloco_outer = g.stream("diloco_outer");
  }

  std::uint8_t compute = 0, tp = 0, tp_recv = 0, cp_send = 0, cp_recv = 0, dp = 0, ep = 0, dp_gather = 0, diloco_outer = 0;
  // PP streams by what they carry and which way: activations and gradients, towards rank + 1
  // ("down") and rank - 1 ("up"); one stream per peer and kind, so a send to one peer never
  // waits behind a send to another.
  std::uint8_t recv_act_down = 0, send_act_down = 0, recv_grad_up = 0, send_grad_up = 0;
  std::uint8_t recv_act_up = 0, send_act_up = 0, recv_grad_down = 0, send_grad_down = 0;
};

}  // namespace inflect::plan::compiler
