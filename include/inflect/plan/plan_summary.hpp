#pragma once
// What a plan is, in one line (its label, as report.json's `plan`, scan rows and search.json write
// it) and in the figures of its step that the report needs (the graph's facts).
#include <string>

#include "inflect/plan/experiment.hpp"
#include "inflect/workload/exec_graph.hpp"

namespace inflect::plan {

/// "tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1 m=192": the degrees (tp, pp, dp, cp), then
/// sequence parallelism (and TP overlap), EP and the sharding (zeroN, fsdp, hybrid shard x
/// replicas), the schedule, recomputation, the micro-batch size and the micro-batches per step,
/// an uneven layer split when there is one, and DiLoCo's settings (" diloco k4 h100 int8 f2":
/// workers, sync_every, compression, fragments when more than one) when training.diloco is given.
/// The order is the one every report has always had;
/// scripts compare these strings, so it does not change.
std::string plan_label(const Experiment& e);

/// Tokens and model FLOPs per step and micro-batches per data-parallel rank: what the compiler
/// records in the graph it builds, and what a plan that is not simulated still reports. The
/// memory peak is the memory estimate's (left unset here).
workload::GraphFacts step_facts(const Experiment& e);

}  // namespace inflect::plan
