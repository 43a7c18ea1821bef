#pragma once
// Simulated time: integer picoseconds.
//
// Why picoseconds: a byte on a 450 GB/s NVLink port takes 2.2 ps and a switch hop is a few hundred
// ns, so nanoseconds would round short transfers to zero; int64 picoseconds still span 106 days of
// simulated time, far beyond any multi-step run. Time is never accumulated as a float: every
// duration is rounded once, where it is computed, and then added as integers.
#include <cstdint>
#include <cmath>
#include <compare>
#include <limits>

#include "inflect/core/units.hpp"

namespace inflect::core {

/// A point in, or span of, simulated time, in integer picoseconds.
class Time {
 public:
  using rep = std::int64_t;
  constexpr Time() = default;
  static constexpr Time ps(rep v) { return Time(v); }
  static constexpr Time ns(double v) { return from_seconds(v * 1e-9); }
  static constexpr Time us(double v) { return from_seconds(v * 1e-6); }
  /// Rounds to the nearest picosecond; saturates at max() for huge or infinite inputs.
  static constexpr Time from_seconds(double s) {
    if (!(s < 9.2e6)) return max();
    if (s <= 0) return Time(0);
    return Time(static_cast<rep>(s * 1e12 + 0.5));
  }
  /// A computed duration (Bytes / Bandwidth, Flops / FlopRate), rounded as from_seconds does.
  static constexpr Time from(Seconds s) { return from_seconds(s.value()); }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<rep>::max()); }

  constexpr rep count_ps() const { return v_; }
  constexpr double seconds() const { return static_cast<double>(v_) * 1e-12; }

  // Checked: a sum or difference past what int64 picoseconds hold (106 days) is refused rather
  // than wrapped, which would put events in the past and surface as a bogus "deadlock". Only
  // extreme inputs get there (a kernel of 1e308 FLOPs); Time::max() ("never") plus anything is
  // refused the same way, so a caller must test for max() before adding to it.
  constexpr Time operator+(Time o) const { return Time(checked(v_, o.v_, false)); }
  constexpr Time operator-(Time o) const { return Time(checked(v_, o.v_, true)); }
  constexpr Time& operator+=(Time o) { v_ = checked(v_, o.v_, false); return *this; }
  constexpr Time& operator-=(Time o) { v_ = checked(v_, o.v_, true); return *this; }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(rep v) : v_(v) {}
  static constexpr rep checked(rep a, rep b, bool subtract) {
    rep r = 0;
    if (subtract ? __builtin_sub_overflow(a, b, &r) : __builtin_add_overflow(a, b, &r)) overflow(a, b, subtract);
    return r;
  }
  /// Throws core::Error(input) naming the operation (src/core/time.cpp).
  [[noreturn, gnu::cold]] static void overflow(rep a, rep b, bool subtract);
  rep v_ = 0;
};

}  // namespace inflect::core
