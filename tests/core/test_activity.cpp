#include <doctest/doctest.h>

#include <cmath>

#include "inflect/core/activity.hpp"

using inflect::core::Activity;
using inflect::core::Time;

namespace {

// Work in bytes, rate in bytes per picosecond, completion rounded up (a transfer's way).
struct BytesPerPs {
  double v = 0;
  double work_in(Time span) const { return v * static_cast<double>(span.count_ps()); }
  Time time_for(double work) const {
    if (!(v > 0)) return Time::max();
    return Time::ps(static_cast<Time::rep>(std::ceil(work / v)));
  }
};

}  // namespace

TEST_CASE("an activity whose rate changes ends when its remaining work is done at the new rate") {
  // 1,000 bytes at 10 B/ps from t = 0 would end at 100 ps. At t = 30, 300 bytes have moved; the
  // rate drops to 4 B/ps, so the remaining 700 take 175 ps: it ends at 30 + 175 = 205 ps. At
  // t = 130 (100 ps x 4 = 400 more moved, 300 left) the rate rises to 20 B/ps: 300 / 20 = 15 ps
  // more, so it ends at 145 ps.
  Activity<BytesPerPs> a;
  a.start(Time::zero(), 1000, BytesPerPs{10});
  CHECK(a.end() == Time::ps(100));
  a.set_rate(Time::ps(30), BytesPerPs{4});
  CHECK(a.remaining == doctest::Approx(700));
  CHECK(a.end() == Time::ps(205));
  a.set_rate(Time::ps(130), BytesPerPs{20});
  CHECK(a.remaining == doctest::Approx(300));
  CHECK(a.end() == Time::ps(145));
}

TEST_CASE("an activity that makes no progress never ends, and settling never leaves negative work") {
  Activity<BytesPerPs> a;
  a.start(Time::ps(5), 100, BytesPerPs{0});
  CHECK(a.end() == Time::max());
  a.set_rate(Time::ps(10), BytesPerPs{1});
  CHECK(a.end() == Time::ps(110));
  a.settle(Time::ps(1000));  // settled late (the owner's event was stale): nothing is left
  CHECK(a.remaining == 0);
  CHECK(a.end() == Time::ps(1000));
}
