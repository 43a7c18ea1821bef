#pragma once
// Pipeline schedules as data: which model chunks each pipeline rank holds (the layout) and the
// order of (micro-batch, chunk, phase) steps each rank runs. The compiler only walks them.
//
// A model is cut into `chunks` pieces of consecutive layers; a micro-batch's forward visits the
// chunks of its route in order and its backward visits them in reverse. Layouts:
//   1f1b, gpipe, zero-bubble  p chunks, chunk c on rank c.
//   interleaved               p*V chunks, chunk c on rank c mod p (Megatron's virtual pipeline).
//   dualpipev                 2p chunks in a V: chunk c on rank c for c < p, else on 2p-1-c; the
//                             turn at rank p-1 stays on the device; loss on rank 0.
//   dualpipe                  two copies of the model in opposite directions (parameters held
//                             twice): direction 0 is chunk k on rank k, direction 1 chunk p+k on
//                             rank p-1-k; the first m/2 micro-batches go down, the rest up.
// Orders:
//   1f1b         PipeDream-Flush / Megatron: stage s warms up with min(p-s-1, m) forwards, then
//                alternates one forward and one backward, then drains.
//   gpipe        every forward, then every backward.
//   interleaved  Megatron's interleaved 1F1B (Narayanan et al. 2021): forward k of a rank runs
//                virtual micro-batch k = micro-batch (k/(pV))*p + k%p on local chunk (k%(pV))/p,
//                backward k the same micro-batch on local chunk V-1-(k%(pV))/p; warm-up
//                (p-s-1)*2 + (V-1)*p forwards. Needs m % p == 0.
//   zero-bubble  ZB-H1 (Qi et al. 2024): backward split into B (input gradient) and W (weight
//                gradient); in step x stage s runs F(x), B(x-(p-1-s)), W(x-(p-1)), each if in
//                range. Same activation memory as 1F1B on stage 0, about a third of its bubble.
//   dualpipe(v)  DeepSeek-V3's DualPipe and its cut-in-half DualPipeV, step for step as the
//                reference implementation (deepseek-ai/DualPipe) runs them: eight phases of
//                F0 / F0F1 / B1W1F1 / F0B1-F1B0 / B1-F1B0 / B1B0 / WB0 / W, where the pairs of the
//                main phase run a forward and a backward of two micro-batches overlapped (one's
//                communication hidden behind the other's compute). Needs m >= 2p; DualPipe also
//                needs p and m even.
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "inflect/plan/experiment.hpp"

namespace inflect::plan {

enum class StepKind : unsigned char {
  forward,
  backward,         // input and weight gradients together
  backward_input,   // B: input gradient only (the weight gradient is a later W step)
  backward_weight,  // W: weight gradient of an earlier B
};

struct ScheduleStep {
  int micro_batch = 0;
  int chunk = 0;  // global chunk index in the layout
  StepKind kind = StepKind::forward;
  /// Runs overlapped with the next step (DualPipe's forward-and-backward pairs).
  bool overlap_next = false;
};

struct PipelineLayout {
  int stages = 1;                       // pipeline ranks
  int chunks = 1;                       // model chunks in total
  std::vector<int> owner;               // chunk -> rank
  std::vector<int> layers;              // chunk -> transformer layers
  std::vector<int> first_layer;         // chunk -> global index of its first layer
  std::vector<std::vector<int>> routes; // chunk order of each direction
  int split_micro_batch = 0;            // dualpipe: micro-batches from here on take route 1
  bool duplicated_params = false;       // dualpipe: every rank holds two copies' chunks

  const std::vector<int>& route_of(int micro_batch) const {
    return routes[routes.size() > 1 && micro_batch >= split_micro_batch ? 1 : 0];
  }
  /// Position of `chunk` in its route, and the chunks before and after it (-1 at the ends).
  int position(int chunk) const;
  int prev(int chunk) const;
  int next(int chunk) const;
  /// Chunks held by `rank`, ascending.
  std::vector<int> chunks_of(int rank) const;
};

/// Parameters of a schedule: pipeline ranks, micro-batches per step, virtual stages (interleaved).
struct ScheduleShape {
  int stages = 1;
  int micro_batches = 1;
  int virtual_stages = 1;
  int layers = 1;  // transformer layers of the model
  /// 1f1b only: extra warm-up forwards of every stage but the last (parallel.pipeline_lookahead).
  int lookahead = 0;
  /// An uneven split (parallel.layers_per_stage): layers of each pipeline rank, summing to
  /// `layers`; one-chunk schedules only. Empty: layers / chunks each.
  std::vector<int> layers_per_stage;
  /// The custom schedule's steps per rank (Schedule::custom only; see parse_custom_schedule).
  std::shared_ptr<const std::vector<std::vector<ScheduleStep>>> custom;
};

/// A custom schedule as written in `parallel.custom_schedule`: one string per pipeline rank, of
/// whitespace-separated steps `F<m>` (forward of micro-batch m), `B<m>` (its backward), or the
/// zero-bubble split `I<m>` (input gradient) and `W<m>` (weight gradient, after its I), e.g.
/// "F0 F1 B0 F2 B1 B2" — one chunk per rank (the 1F1B layout); with virtual_stages V > 1 the
/// interleaved layout (the rank's chunk v is global chunk v*pp + rank), each step suffixed .v
/// ("F0.0 F1.0 F0.1 ..."; no suffix = .0). Throws core::Error(input) naming
/// the rank and the token on a malformed step; whether the steps form a schedule (every step once,
/// no deadlock) is replay_schedule's check (plan::validate runs it for a custom schedule).
std::vector<std::vector<ScheduleStep>> parse_custom_schedule(const std::vector<std::string>& ranks);
/// One rank's string of that list: rank `rank` of `ranks` (for messages and chunk numbering).
std::vector<ScheduleStep> parse_custom_rank(const std::string& text, int rank, int ranks);
/// Whether a schedule splits backward into input- and weight-gradient steps (zero-bubble,
/// DualPipe, a custom schedule with I/W steps).
bool splits_backward(Schedule s, const ScheduleShape& shape);

/// Why the schedule cannot run this shape ("" when it can): divisibility, m >= 2p, and so on.
std::string schedule_problem(Schedule s, const ScheduleShape& shape);
/// The chunk layout; throws core::Error(input) if schedule_problem is not empty.
PipelineLayout pipeline_layout(Schedule s, const ScheduleShape& shape);
/// Layers per stage when the embedding and the output head count as one layer each in an even
/// split (Megatron-DeepSpeed's PipelineModule with partition 'type:transformer|embedding'):
/// layers + 2 units over `stages` as DeepSpeed's partition_uniform splits them (the first
/// (units mod stages) parts one larger), then the first stage's and the last's unit for the
/// embedding and head taken off. Empty when some stage would be left without a layer.
std::vector<int> embedding_pipeline_split(int layers, int stages);
/// The steps of pipeline rank `stage`, in the order it runs them.
std::vector<ScheduleStep> stage_schedule(Schedule s, int stage, const ScheduleShape& shape);
/// Shorthand for one-chunk-per-rank schedules (1f1b, gpipe, zero-bubble).
std::vector<ScheduleStep> stage_schedule(Schedule s, int stage, int stages, int micro_batches);

/// The most activations `stage` holds at once, in layer-micro-batches (a micro-batch's forward
/// through one layer keeps one unit until that layer's backward — its W step when split — frees
/// it). For one-chunk layouts this is layers_per_stage times the in-flight micro-batches.
double peak_activation_layers(Schedule s, int stage, const ScheduleShape& shape);
/// The most micro-batches whose activations `stage` holds at once (one-chunk layouts).
int in_flight_micro_batches(Schedule s, int stage, int stages, int micro_batches);

/// Replay of every rank's steps with unit costs (forward `f`, input gradient `b`, weight gradient
/// `w`, a fused backward b+w, an overlapped pair the sum of both) and instant communication: a
/// step starts when its rank is free and its inputs exist. Checks that every micro-batch runs
/// forward once and backward once (B and W once each when split) on every chunk of its route in
/// dependency order; `valid` is false, with the reason, on a missing or repeated step or a
/// deadlock.
struct ScheduleReplay {
  bool valid = false;
  std::string problem;
  double makespan = 0;
  double busy = 0;    // compute time of one rank (all ranks do the same work)
  double bubble = 0;  // makespan - busy, of the rank that idles most
};
ScheduleReplay replay_schedule(Schedule s, const ScheduleShape& shape, double f = 1, double b = 1, double w = 1);

const char* schedule_name(Schedule s);
/// The schedule whose schedule_name() is `name` (the YAML value), or nullopt.
std::optional<Schedule> schedule_from_name(std::string_view name);
/// schedule_name(), with the virtual stages of the interleaved one ("interleaved(v2)") or 1f1b's
/// lookahead ("1f1b(lookahead 2)"). For plan
/// summaries (the compiler's, the search's).
std::string schedule_label(Schedule s, int virtual_stages, int lookahead = 0);

}  // namespace inflect::plan
