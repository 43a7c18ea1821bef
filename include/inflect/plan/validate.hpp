#pragma once
// Plan legality, written once: whether a parallelism plan can run this model on this cluster with
// these training settings. The experiment loader reports the first problem at the line of its
// key, the plan search drops every candidate that has one, and the compiler refuses to compile a
// plan that has one (plan::check_plan).
#include <string>
#include <vector>

#include "inflect/plan/experiment.hpp"

namespace inflect::plan {

/// One broken rule.
struct Problem {
  std::string key;      // the dotted experiment key it is about, e.g. "parallel.tp"
  std::string message;  // the sentence for the user; it names the allowed values when there are any
  std::string allowed;  // those values alone ("1, 2, 4, 8"), or "" when no list helps
};

/// The rules grouped by the last plan knob they read, in the order the search chooses its knobs.
/// A rule of one stage reads only knobs of its own stage and of earlier ones, so a search can set
/// the knobs one loop level at a time and drop a combination at the first stage it fails.
enum class Stage : unsigned char {
  tensor_parallel,    // the cluster's shape; tp against the node and the attention heads
  context_parallel,   // cp against the sequence
  pipeline_parallel,  // pp against the layers; tp*pp*cp(*dp) against the devices (dp is known after it)
  expert_parallel,    // ep against the model's experts and dp
  micro_batch,        // micro_batch and global_batch against dp
  zero,               // the ZeRO stage, fsdp, shard_group; DiLoCo's workers (training.diloco) against dp
  schedule,           // the pipeline schedule against the micro-batch count and the layers
  sequence_parallel,  // sequence parallelism and TP communication overlap
};
inline constexpr Stage kStages[] = {Stage::tensor_parallel, Stage::context_parallel, Stage::pipeline_parallel,
                                    Stage::expert_parallel, Stage::micro_batch,      Stage::zero,
                                    Stage::schedule,        Stage::sequence_parallel};

/// The problems of `e`'s plan: those of the first stage that has any (a later stage's rules read
/// what a broken earlier one leaves meaningless, such as dp when tp*pp*cp does not divide the
/// devices), in a fixed order. Empty when the plan can run. A trace replay (no model) is checked
/// only against the cluster and the batch.
std::vector<Problem> validate(const Experiment& e);

/// Whether `e` passes the rules of `stage`, writing no message (the search's filter). Assumes the
/// earlier stages pass.
bool passes(const Experiment& e, Stage stage);

}  // namespace inflect::plan
