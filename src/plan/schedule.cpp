#include "inflect/plan/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <tuple>

#include "inflect/core/error.hpp"

namespace inflect::plan {
namespace {

using Steps = std::vector<ScheduleStep>;

bool one_chunk(Schedule s) {
  return s == Schedule::one_f_one_b || s == Schedule::gpipe || s == Schedule::zero_bubble || s == Schedule::custom;
}

/// The letter of a step kind as a custom schedule writes it.
char kind_letter(StepKind k) {
  switch (k) {
    case StepKind::forward: return 'F';
    case StepKind::backward: return 'B';
    case StepKind::backward_input: return 'I';
    case StepKind::backward_weight: return 'W';
  }
  return '?';
}

// Stage s runs p - s - 1 forwards before its first backward (the backward of micro-batch 0 comes
// back from the last stage no sooner). `lookahead` more on every stage but the last keeps that
// many more micro-batches in flight across each boundary: the round trip over a slow link (a
// WAN between sites) then overlaps forwards instead of idling the stage, for their activations'
// memory (peak_activation_layers reads the same steps).
Steps one_f_one_b(int s, int p, int m, int lookahead = 0) {
  Steps out;
  const int warmup = std::min(p - s - 1 + (s < p - 1 ? lookahead : 0), m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({f, s, StepKind::forward});
  while (f < m) {
    out.push_back({f++, s, StepKind::forward});
    out.push_back({b++, s, StepKind::backward});
  }
  while (b < m) out.push_back({b++, s, StepKind::backward});
  return out;
}

Steps gpipe(int s, int m) {
  Steps out;
  for (int i = 0; i < m; ++i) out.push_back({i, s, StepKind::forward});
  for (int i = 0; i < m; ++i) out.push_back({i, s, StepKind::backward});
  return out;
}

// ZB-H1: in step x, F(x), B(x-(p-1-s)), W(x-(p-1)), each when it names a micro-batch in [0, m).
Steps zero_bubble(int s, int p, int m) {
  Steps out;
  for (int x = 0; x < m + p - 1; ++x) {
    if (x < m) out.push_back({x, s, StepKind::forward});
    if (const int b = x - (p - 1 - s); b >= 0 && b < m) out.push_back({b, s, StepKind::backward_input});
    if (const int w = x - (p - 1); w >= 0 && w < m) out.push_back({w, s, StepKind::backward_weight});
  }
  return out;
}

// Megatron's interleaved 1F1B (forward_backward_pipelining_with_interleaving).
Steps interleaved(int s, int p, int m, int v) {
  const int total = m * v;
  const int group = p * v;
  auto mb = [&](int k) { return (k / group) * p + k % p; };
  auto fwd_chunk = [&](int k) { return ((k % group) / p) * p + s; };
  auto bwd_chunk = [&](int k) { return (v - 1 - (k % group) / p) * p + s; };
  const int warmup = std::min((p - s - 1) * 2 + (v - 1) * p, total);
  Steps out;
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({mb(f), fwd_chunk(f), StepKind::forward});
  while (f < total) {
    out.push_back({mb(f), fwd_chunk(f), StepKind::forward});
    ++f;
    out.push_back({mb(b), bwd_chunk(b), StepKind::backward});
    ++b;
  }
  for (; b < total; ++b) out.push_back({mb(b), bwd_chunk(b), StepKind::backward});
  return out;
}

// DualPipe and DualPipeV, phase for phase as deepseek-ai/DualPipe runs them. A rank has two
// "phases" (its two chunks); phase 0 is the chunk of the direction in whose first half the rank
// sits. Forwards and backwards of each phase run their micro-batches in ascending order; weight
// gradients deferred by a split backward run first-in first-out.
class DualPipeBuilder {
 public:
  DualPipeBuilder(bool v, int rank, int p, int m) : v_(v), rank_(rank), p_(p), m_(m) {}

  Steps build() {
    // DualPipe: the rank's position in its half; DualPipeV: the rank itself (no second half).
    const int ranks = v_ ? p_ : p_ / 2;
    const int h = v_ ? rank_ : std::min(rank_, p_ - 1 - rank_);
    const int per_phase = v_ ? m_ : m_ / 2;  // micro-batches through each of the rank's chunks
    const bool middle = h == ranks - 1;      // the turn of the V / the meeting of the two halves
    for (int i = 0; i < (ranks - h - 1) * 2; ++i) forward(0);
    for (int i = 0; i < h + 1; ++i) {
      forward(0);
      forward(1);
    }
    for (int i = 0; i < ranks - h - 1; ++i) {
      backward(1, true);
      weight();
      forward(1);
    }
    const int main_steps = per_phase - 2 * ranks + h + 1;
    for (int i = 0; i < main_steps; ++i) {
      // The reference does not overlap the middle rank's first pair, to shorten the bubble.
      forward(0, !(i == 0 && middle));
      backward(1);
      forward(1, true);
      backward(0);
    }
    for (int i = 0; i < ranks - h - 1; ++i) {
      backward(1);
      forward(1, true);
      backward(0);
    }
    const int tail = h + 1;
    bool zb = false;
    for (int i = 0; i < tail; ++i) {
      if (i == tail / 2 && h % 2 == 1) zb = true;
      backward(1, zb);
      if (i == tail / 2 && h % 2 == 0) zb = true;
      backward(0, zb);
    }
    for (int i = 0; i < ranks - h - 1; ++i) {
      weight();
      backward(0, true);
    }
    while (!deferred_.empty()) weight();
    return std::move(out_);
  }

 private:
  // The chunk and micro-batch offset of phase `ph` on this rank.
  std::pair<int, int> chunk_of(int ph) const {
    if (v_) return {ph == 0 ? rank_ : 2 * p_ - 1 - rank_, 0};
    const bool second_half = rank_ >= p_ / 2;
    const int direction = ph ^ static_cast<int>(second_half);
    if (direction == 0) return {rank_, 0};                 // chunk at position rank in direction 0
    return {p_ + (p_ - 1 - rank_), m_ / 2};                // position p-1-rank in direction 1
  }
  void forward(int ph, bool overlap_next = false) {
    auto [c, off] = chunk_of(ph);
    out_.push_back({off + next_f_[ph]++, c, StepKind::forward, overlap_next});
  }
  void backward(int ph, bool split = false) {
    auto [c, off] = chunk_of(ph);
    const int mb = off + next_b_[ph]++;
    out_.push_back({mb, c, split ? StepKind::backward_input : StepKind::backward});
    if (split) deferred_.push_back({mb, c});
  }
  void weight() {
    auto [mb, c] = deferred_.front();
    deferred_.pop_front();
    out_.push_back({mb, c, StepKind::backward_weight});
  }

  bool v_;
  int rank_, p_, m_;
  int next_f_[2] = {0, 0}, next_b_[2] = {0, 0};
  std::deque<std::pair<int, int>> deferred_;
  Steps out_;
};

}  // namespace

const char* schedule_name(Schedule s) {
  switch (s) {
    case Schedule::one_f_one_b: return "1f1b";
    case Schedule::gpipe: return "gpipe";
    case Schedule::interleaved: return "interleaved";
    case Schedule::zero_bubble: return "zero-bubble";
    case Schedule::dualpipe: return "dualpipe";
    case Schedule::dualpipev: return "dualpipev";
    case Schedule::custom: return "custom";
  }
  return "?";
}

std::optional<Schedule> schedule_from_name(std::string_view name) {
  for (Schedule s : {Schedule::one_f_one_b, Schedule::gpipe, Schedule::interleaved, Schedule::zero_bubble, Schedule::dualpipe,
                     Schedule::dualpipev, Schedule::custom})
    if (name == schedule_name(s)) return s;
  return std::nullopt;
}

std::string schedule_label(Schedule s, int virtual_stages, int lookahead) {
  if (s == Schedule::interleaved) return fmt::format("interleaved(v{})", virtual_stages);
  if (lookahead > 0) return fmt::format("{}(lookahead {})", schedule_name(s), lookahead);
  return std::string(schedule_name(s));
}

std::string schedule_problem(Schedule s, const ScheduleShape& x) {
  const int p = x.stages, m = x.micro_batches, v = x.virtual_stages;
  if (p < 1 || m < 1) return "needs at least one stage and one micro-batch";
  if (x.lookahead < 0) return fmt::format("pipeline_lookahead must be >= 0 (got {})", x.lookahead);
  if (x.lookahead > 0 && s != Schedule::one_f_one_b)
    return fmt::format("pipeline_lookahead ({}) applies to the 1f1b schedule only", x.lookahead);
  if (s != Schedule::interleaved && s != Schedule::custom && v != 1)
    return fmt::format("virtual_stages ({}) apply only to the interleaved and custom schedules", v);
  int chunks = p;
  switch (s) {
    case Schedule::interleaved:
      if (v < 2) return fmt::format("interleaved needs virtual_stages >= 2 (got {})", v);
      if (m % p != 0) return fmt::format("interleaved needs micro-batches ({}) divisible by pp ({})", m, p);
      chunks = p * v;
      break;
    case Schedule::dualpipe:
      if (p % 2 != 0 || m % 2 != 0) return fmt::format("dualpipe needs an even pp and micro-batch count (pp {}, m {})", p, m);
      if (m < 2 * p) return fmt::format("dualpipe needs micro-batches >= 2*pp ({} < {})", m, 2 * p);
      break;
    case Schedule::dualpipev:
      if (m < 2 * p) return fmt::format("dualpipev needs micro-batches >= 2*pp ({} < {})", m, 2 * p);
      chunks = 2 * p;
      break;
    case Schedule::custom: {
      if (!x.custom) return "custom needs parallel.custom_schedule (one list of steps per pipeline rank)";
      if (static_cast<int>(x.custom->size()) != p)
        return fmt::format("custom_schedule lists {} ranks but pp is {}", x.custom->size(), p);
      if (v < 1) return fmt::format("virtual_stages must be >= 1 (got {})", v);
      for (int r = 0; r < p; ++r)
        for (const auto& st : (*x.custom)[static_cast<std::size_t>(r)]) {
          if (st.micro_batch >= m)
            return fmt::format("custom_schedule rank {}: {}{} names micro-batch {}, but a step has {} micro-batches (0..{})", r,
                               kind_letter(st.kind), st.micro_batch, st.micro_batch, m, m - 1);
          if (st.chunk / p >= v)
            return fmt::format("custom_schedule rank {}: {}{}.{} names local chunk {}, but virtual_stages is {} (chunks 0..{})", r,
                               kind_letter(st.kind), st.micro_batch, st.chunk / p, st.chunk / p, v, v - 1);
        }
      chunks = p * v;
      break;
    }
    default: break;
  }
  if (!x.layers_per_stage.empty()) {
    if (chunks != p || s == Schedule::dualpipev)
      return fmt::format("layers_per_stage splits layers over pipeline ranks holding one model chunk each "
                         "(1f1b, gpipe, zero-bubble, custom without virtual stages); {} has {} chunks",
                         schedule_name(s), chunks);
    if (static_cast<int>(x.layers_per_stage.size()) != p)
      return fmt::format("layers_per_stage has {} entries but pp is {}", x.layers_per_stage.size(), p);
    int sum = 0;
    for (int n : x.layers_per_stage) {
      if (n < 1) return "layers_per_stage: every stage needs at least one layer";
      sum += n;
    }
    if (sum != x.layers) return fmt::format("layers_per_stage sums to {} but the model has {} layers", sum, x.layers);
    return "";
  }
  if (x.layers % chunks != 0)
    return fmt::format("layers ({}) are not divisible into the schedule's {} model chunks", x.layers, chunks);
  return "";
}

int PipelineLayout::position(int chunk) const {
  for (const auto& r : routes)
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r[i] == chunk) return static_cast<int>(i);
  return -1;
}
int PipelineLayout::prev(int chunk) const {
  for (const auto& r : routes)
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r[i] == chunk) return i == 0 ? -1 : r[i - 1];
  return -1;
}
int PipelineLayout::next(int chunk) const {
  for (const auto& r : routes)
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r[i] == chunk) return i + 1 == r.size() ? -1 : r[i + 1];
  return -1;
}
std::vector<int> PipelineLayout::chunks_of(int rank) const {
  std::vector<int> out;
  for (int c = 0; c < chunks; ++c)
    if (owner[static_cast<std::size_t>(c)] == rank) out.push_back(c);
  return out;
}

std::vector<int> embedding_pipeline_split(int layers, int stages) {
  if (stages < 2) return {};
  const int units = layers + 2;
  std::vector<int> out(static_cast<std::size_t>(stages), units / stages);
  for (int i = 0; i < units % stages; ++i) ++out[static_cast<std::size_t>(i)];
  --out.front();
  --out.back();
  for (int n : out)
    if (n < 1) return {};
  return out;
}

PipelineLayout pipeline_layout(Schedule s, const ScheduleShape& x) {
  if (auto why = schedule_problem(s, x); !why.empty())
    throw core::Error(core::ErrorKind::input, fmt::format("schedule {}: {}", schedule_name(s), why));
  const int p = x.stages;
  PipelineLayout l;
  l.stages = p;
  if (s == Schedule::dualpipe) {
    l.chunks = 2 * p;
    l.duplicated_params = true;
    l.split_micro_batch = x.micro_batches / 2;
    l.routes.resize(2);
    for (int k = 0; k < p; ++k) l.routes[0].push_back(k);
    for (int k = 0; k < p; ++k) l.routes[1].push_back(p + k);
    l.owner.resize(static_cast<std::size_t>(2 * p));
    for (int k = 0; k < p; ++k) {
      l.owner[static_cast<std::size_t>(k)] = k;
      l.owner[static_cast<std::size_t>(p + k)] = p - 1 - k;
    }
    const int per = x.layers / p;
    for (int c = 0; c < 2 * p; ++c) {
      l.layers.push_back(per);
      l.first_layer.push_back((c % p) * per);  // each copy holds every layer once
    }
    return l;
  }
  // A custom schedule with virtual_stages V uses the interleaved layout (V = 1: one chunk per rank).
  l.chunks = s == Schedule::interleaved || s == Schedule::custom ? p * x.virtual_stages : s == Schedule::dualpipev ? 2 * p : p;
  l.routes.resize(1);
  for (int c = 0; c < l.chunks; ++c) {
    l.routes[0].push_back(c);
    int owner = c % p;
    if (s == Schedule::dualpipev) owner = c < p ? c : 2 * p - 1 - c;
    l.owner.push_back(owner);
    if (x.layers_per_stage.empty()) {
      l.layers.push_back(x.layers / l.chunks);
      l.first_layer.push_back(c * (x.layers / l.chunks));
    } else {  // one chunk per rank (schedule_problem checked)
      l.layers.push_back(x.layers_per_stage[static_cast<std::size_t>(c)]);
      l.first_layer.push_back(c == 0 ? 0 : l.first_layer.back() + l.layers[static_cast<std::size_t>(c - 1)]);
    }
  }
  return l;
}

std::vector<ScheduleStep> stage_schedule(Schedule s, int stage, const ScheduleShape& x) {
  (void)pipeline_layout(s, x);  // validates the shape
  const int p = x.stages, m = x.micro_batches;
  switch (s) {
    case Schedule::one_f_one_b: return one_f_one_b(stage, p, m, x.lookahead);
    case Schedule::gpipe: return gpipe(stage, m);
    case Schedule::zero_bubble: return zero_bubble(stage, p, m);
    case Schedule::interleaved: return interleaved(stage, p, m, x.virtual_stages);
    case Schedule::dualpipe: return DualPipeBuilder(false, stage, p, m).build();
    case Schedule::dualpipev: return DualPipeBuilder(true, stage, p, m).build();
    case Schedule::custom: return (*x.custom)[static_cast<std::size_t>(stage)];
  }
  return {};
}

std::vector<ScheduleStep> stage_schedule(Schedule s, int stage, int stages, int micro_batches) {
  if (!one_chunk(s)) throw core::Error(core::ErrorKind::internal, "stage_schedule shorthand used for a multi-chunk schedule");
  ScheduleShape x;
  x.stages = stages;
  x.micro_batches = micro_batches;
  x.layers = stages;
  return stage_schedule(s, stage, x);
}

double peak_activation_layers(Schedule s, int stage, const ScheduleShape& x) {
  const PipelineLayout l = pipeline_layout(s, x);
  double live = 0, peak = 0;
  for (const auto& st : stage_schedule(s, stage, x)) {
    const double layers = l.layers[static_cast<std::size_t>(st.chunk)];
    if (st.kind == StepKind::forward) live += layers;
    else if (st.kind != StepKind::backward_input) live -= layers;
    peak = std::max(peak, live);
  }
  return peak;
}

int in_flight_micro_batches(Schedule s, int stage, int stages, int m) {
  int live = 0, peak = 0;
  for (const auto& st : stage_schedule(s, stage, stages, m)) {
    if (st.kind == StepKind::forward) ++live;
    else if (st.kind != StepKind::backward_input) --live;
    peak = std::max(peak, live);
  }
  return peak;
}

ScheduleReplay replay_schedule(Schedule s, const ScheduleShape& x, double f, double b, double w) {
  ScheduleReplay out;
  const PipelineLayout l = pipeline_layout(s, x);
  const int p = x.stages, m = x.micro_batches;
  const double stage_layers = static_cast<double>(x.layers) / p;
  std::vector<Steps> steps;
  for (int r = 0; r < p; ++r) steps.push_back(stage_schedule(s, r, x));

  // Completion time of each (kind, micro-batch, chunk); B of a fused backward also marks W.
  std::map<std::tuple<int, int, int>, double> done;
  auto key = [](StepKind k, int mb, int c) { return std::tuple<int, int, int>{static_cast<int>(k), mb, c}; };
  auto finished = [&](StepKind k, int mb, int c) -> const double* {
    auto it = done.find(key(k, mb, c));
    return it == done.end() ? nullptr : &it->second;
  };
  auto cost = [&](const ScheduleStep& st) {
    const double scale = l.layers[static_cast<std::size_t>(st.chunk)] / stage_layers;
    switch (st.kind) {
      case StepKind::forward: return f * scale;
      case StepKind::backward: return (b + w) * scale;
      case StepKind::backward_input: return b * scale;
      case StepKind::backward_weight: return w * scale;
    }
    return 0.0;
  };
  // Inputs of a step: the time they exist, or nullopt if not yet produced.
  auto ready = [&](const ScheduleStep& st, double& at) -> bool {
    at = 0;
    auto need = [&](StepKind k, int mb, int c) {
      const double* t = finished(k, mb, c);
      if (!t) return false;
      at = std::max(at, *t);
      return true;
    };
    const int mb = st.micro_batch, c = st.chunk;
    switch (st.kind) {
      case StepKind::forward:
        return l.prev(c) < 0 || need(StepKind::forward, mb, l.prev(c));
      case StepKind::backward:
      case StepKind::backward_input:
        if (!need(StepKind::forward, mb, c)) return false;
        return l.next(c) < 0 || need(StepKind::backward_input, mb, l.next(c));
      case StepKind::backward_weight:
        return need(StepKind::backward_input, mb, c);
    }
    return false;
  };

  std::vector<std::size_t> pc(static_cast<std::size_t>(p), 0);
  std::vector<double> clock(static_cast<std::size_t>(p), 0), busy(static_cast<std::size_t>(p), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      auto& i = pc[static_cast<std::size_t>(r)];
      const auto& mine = steps[static_cast<std::size_t>(r)];
      while (i < mine.size()) {
        // An overlapped pair starts when both are ready and ends after both computes.
        const std::size_t n = mine[i].overlap_next && i + 1 < mine.size() ? 2 : 1;
        double start = clock[static_cast<std::size_t>(r)], dur = 0;
        bool ok = true;
        for (std::size_t j = 0; j < n && ok; ++j) {
          const auto& st = mine[i + j];
          if (l.owner[static_cast<std::size_t>(st.chunk)] != r) {
            out.problem = fmt::format("rank {} runs a step of chunk {}, which rank {} holds", r, st.chunk,
                                      l.owner[static_cast<std::size_t>(st.chunk)]);
            return out;
          }
          double at = 0;
          ok = ready(st, at);
          start = std::max(start, at);
          dur += cost(st);
        }
        if (!ok) break;
        for (std::size_t j = 0; j < n; ++j) {
          const auto& st = mine[i + j];
          const double end = start + dur;
          auto mark = [&](StepKind k) {
            if (!done.emplace(key(k, st.micro_batch, st.chunk), end).second) {
              out.problem = fmt::format("rank {} repeats {}{} (chunk {})", r, kind_letter(k), st.micro_batch, st.chunk);
              return false;
            }
            return true;
          };
          bool fresh = true;
          if (st.kind == StepKind::backward) fresh = mark(StepKind::backward_input) && mark(StepKind::backward_weight);
          else fresh = mark(st.kind);
          if (!fresh) return out;
        }
        clock[static_cast<std::size_t>(r)] = start + dur;
        busy[static_cast<std::size_t>(r)] += dur;
        i += n;
        progress = true;
      }
    }
  }
  // A deadlock: name every rank that is stuck and the step it waits at.
  std::string stuck;
  for (int r = 0; r < p; ++r)
    if (pc[static_cast<std::size_t>(r)] < steps[static_cast<std::size_t>(r)].size()) {
      const auto& st = steps[static_cast<std::size_t>(r)][pc[static_cast<std::size_t>(r)]];
      stuck += fmt::format("{}rank {} at its step {} ({}{})", stuck.empty() ? "" : "; ", r, pc[static_cast<std::size_t>(r)] + 1,
                           kind_letter(st.kind), st.micro_batch);
    }
  if (!stuck.empty()) {
    out.problem = fmt::format("deadlock: {} wait for inputs that are never produced before them", stuck);
    return out;
  }
  // Every micro-batch on every chunk of its route: forward, input gradient, weight gradient.
  for (int mb = 0; mb < m; ++mb)
    for (int c : l.route_of(mb))
      for (StepKind k : {StepKind::forward, StepKind::backward_input, StepKind::backward_weight})
        if (!finished(k, mb, c)) {
          out.problem = fmt::format("micro-batch {} never runs {} on chunk {} (rank {})", mb,
                                    k == StepKind::forward ? "F" : k == StepKind::backward_input ? "B (or I)" : "B (or W)", c,
                                    l.owner[static_cast<std::size_t>(c)]);
          return out;
        }
  if (done.size() != static_cast<std::size_t>(3 * m * static_cast<int>(l.route_of(0).size()))) {
    out.problem = "a step runs a micro-batch on a chunk outside its route";
    return out;
  }
  out.valid = true;
  out.makespan = *std::max_element(clock.begin(), clock.end());
  out.busy = *std::max_element(busy.begin(), busy.end());
  double worst = 0;
  for (int r = 0; r < p; ++r) worst = std::max(worst, out.makespan - busy[static_cast<std::size_t>(r)]);
  out.bubble = worst;
  return out;
}

std::vector<ScheduleStep> parse_custom_rank(const std::string& text, int r, int ranks) {
  std::vector<ScheduleStep> steps;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    ScheduleStep st;
    const char k = tok[0];
    st.kind = k == 'F'   ? StepKind::forward
              : k == 'B' ? StepKind::backward
              : k == 'I' ? StepKind::backward_input
              : k == 'W' ? StepKind::backward_weight
                         : StepKind::forward;
    // <kind><micro-batch>[.<local chunk>]
    const std::string body = tok.substr(1);
    const auto dot = body.find('.');
    const std::string mb = body.substr(0, dot), local = dot == std::string::npos ? "0" : body.substr(dot + 1);
    auto number = [](const std::string& d) {
      return !d.empty() && d.size() <= 6 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (std::string("FBIW").find(k) == std::string::npos || !number(mb) || !number(local))
      throw core::Error(core::ErrorKind::input,
                        fmt::format("custom_schedule rank {}: '{}' is not a step; expected F<m>, B<m>, I<m> or W<m> (forward, "
                                    "backward, input gradient, weight gradient of micro-batch m), with .<v> for the rank's "
                                    "v-th chunk when virtual_stages > 1, e.g. \"F0 F1 B0 F2 B1 B2\" or \"F0.0 F0.1 B0.1 B0.0\"",
                                    r, tok));
    st.micro_batch = std::stoi(mb);
    // The interleaved layout: the rank's v-th chunk is global chunk v * pp + rank.
    st.chunk = std::stoi(local) * ranks + r;
    steps.push_back(st);
  }
  if (steps.empty())
    throw core::Error(core::ErrorKind::input, fmt::format("custom_schedule rank {}: no steps", r));
  return steps;
}

std::vector<std::vector<ScheduleStep>> parse_custom_schedule(const std::vector<std::string>& ranks) {
  std::vector<std::vector<ScheduleStep>> out;
  const int p = static_cast<int>(ranks.size());
  for (int r = 0; r < p; ++r) out.push_back(parse_custom_rank(ranks[static_cast<std::size_t>(r)], r, p));
  return out;
}

bool splits_backward(Schedule s, const ScheduleShape& shape) {
  if (s == Schedule::zero_bubble || s == Schedule::dualpipe || s == Schedule::dualpipev) return true;
  if (s != Schedule::custom || !shape.custom) return false;
  for (const auto& rank : *shape.custom)
    for (const auto& st : rank)
      if (st.kind == StepKind::backward_input || st.kind == StepKind::backward_weight) return true;
  return false;
}

}  // namespace inflect::plan
