#include "inflect/plan/schedule.hpp"

#include <algorithm>

namespace inflect::plan {

std::vector<ScheduleStep> stage_schedule(Schedule s, int stage, int stages, int m) {
  std::vector<ScheduleStep> out;
  out.reserve(static_cast<std::size_t>(2 * m));
  if (s == Schedule::gpipe) {
    for (int i = 0; i < m; ++i) out.push_back({i, StepKind::forward});
    for (int i = 0; i < m; ++i) out.push_back({i, StepKind::backward});
    return out;
  }
  const int warmup = std::min(stages - stage - 1, m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back({f, StepKind::forward});
  while (f < m) {
    out.push_back({f++, StepKind::forward});
    out.push_back({b++, StepKind::backward});
  }
  while (b < m) out.push_back({b++, StepKind::backward});
  return out;
}

int in_flight_micro_batches(Schedule s, int stage, int stages, int m) {
  int live = 0, peak = 0;
  for (const auto& st : stage_schedule(s, stage, stages, m)) {
    live += st.kind == StepKind::forward ? 1 : -1;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace inflect::plan
