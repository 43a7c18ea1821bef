#pragma once
// The one label of a plan, as report.json's `plan`, scan rows and search.json write it.
#include <string>

#include "inflect/plan/experiment.hpp"

namespace inflect::plan {

/// "tp8 pp16 dp8 cp1 sp zero1 1f1b recompute=full mb1 m=192": the degrees (tp, pp, dp, cp), then
/// sequence parallelism (and TP overlap), EP and the sharding (zeroN, fsdp, hybrid shard x
/// replicas), the schedule, recomputation, the micro-batch size and the micro-batches per step,
/// and an uneven layer split when there is one. The order is the one every report has always had;
/// scripts compare these strings, so it does not change.
std::string plan_label(const Experiment& e);

}  // namespace inflect::plan
