#pragma once
// Work in progress at a rate that changes: remaining work, progressing at a rate, since a time.
//
// The one notion behind a transfer in the max-min network, whose share of its links changes as
// other transfers start and end (net::FlowNetwork), and a kernel slowed while its rank's
// collectives move data (sim/compute): SimGrid's Action, for every resource. Whenever the rate
// changes, the owner settles the progress made at the old rate and continues at the new one, then
// predicts the completion from what is left; the completion it predicted before goes stale, and the
// owner recognises stale completions when they pop (a transfer by a stamp, a kernel by its time).
//
// `Rate` is the rate in its owner's own terms, because the owner's arithmetic is part of its
// results (a duration is rounded once, to picoseconds, where it is computed): a transfer's rate is
// bytes per second and its completion rounds up (never before its bytes have moved); a kernel's is
// the factor its duration is stretched by and its completion rounds to nearest, as its duration
// did. A Rate provides
//   double work_in(Time span) const   the work done in `span` at this rate
//   Time time_for(double work) const  how long `work` takes at this rate (Time::max() if never)
// Worked example (a kernel): 100 ps of work at full speed starts at t = 0; at t = 40 its rate
// becomes a stretch of 1.5. settle(40) leaves 100 - 40 = 60; end() is 40 + 60 x 1.5 = 130.
#include <algorithm>

#include "inflect/core/time.hpp"

namespace inflect::core {

template <class Rate>
struct Activity {
  double remaining = 0;  // work still to do, in Rate's unit
  Rate rate{};           // how fast it progresses since `since`
  Time since;            // when `remaining` was last settled

  void start(Time now, double work, Rate r) {
    remaining = work;
    rate = r;
    since = now;
  }
  /// Counts the work done since `since` at the current rate.
  void settle(Time now) {
    remaining = std::max(0.0, remaining - rate.work_in(now - since));
    since = now;
  }
  /// Settles, then progresses at `r` from `now`.
  void set_rate(Time now, Rate r) {
    settle(now);
    rate = r;
  }
  /// When the remaining work is done if the rate holds; Time::max() if never.
  Time end() const {
    const Time left = rate.time_for(remaining);
    return left > Time::max() - since ? Time::max() : since + left;
  }
};

}  // namespace inflect::core
