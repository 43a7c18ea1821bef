#pragma once
// A search file: an experiment (cluster, model, training) without the plan, plus `search:` —
// the values each plan knob may take and how many plans to simulate (docs/search.md):
//
//   search:
//     top: 10                       plans simulated with the engine (--top overrides)
//     tp: [1, 2, 4, 8]              degrees; tp, pp and ep default to every allowed value
//     cp: [1, 2]
//     pp: [1, 2, 4, 8, 16]
//     ep: [1, 8]
//     zero: [0, 1, 2, 3]
//     schedule: [1f1b, interleaved, zero-bubble, dualpipe, dualpipev]
//     virtual_stages: [2, 4]        for interleaved
//     micro_batch: [1, 2, 4, 8]
//     recompute: [none, selective, full]
//     sequence_parallel: [true]     for plans with tp > 1
//
// `parallel:` may hold the settings the search does not vary (grad_bucket, overlap_grad_reduce,
// order, reshard_after_forward, moe_shared_expert_overlap); a knob the search varies there is an
// error, as is training.micro_batch, so that no plan comes from two places.
#include <string>

#include "inflect/io/device_catalog.hpp"
#include "inflect/plan/experiment.hpp"
#include "inflect/search/space.hpp"

namespace inflect::search {

struct SearchSpec {
  std::string name;
  std::string file;
  plan::Experiment base;  // dp = 0 and the default plan: the search fills the plan in
  SearchSpace space;
  int top = 10;
};

/// Parses a search file's text; `name` stands in for the file in messages and `base_dir` is
/// where relative paths resolve first; device names are looked up in `catalog`. Throws
/// core::Error(input) located at the offending key.
SearchSpec parse_search(const std::string& text, const std::string& name, const std::string& base_dir,
                        const io::DeviceCatalog& catalog = {});
SearchSpec load_search(const std::string& path, const io::DeviceCatalog& catalog = {});
/// The same search on `nodes` nodes (`inflect search --nodes`): the device count is the one thing
/// a user varies most between searches of one model and cluster.
void set_nodes(SearchSpec& spec, int nodes);

}  // namespace inflect::search
