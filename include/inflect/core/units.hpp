#pragma once
// Strong unit types for quantities that cross module boundaries.
//
// Each is a double in SI base units (bytes, FLOPs, bytes/s, FLOP/s, watts, seconds) wrapped in its
// own type so that dimensions cannot be mixed by accident: Bytes / Bandwidth is Seconds, Flops /
// FlopRate is Seconds, and adding Bytes to Flops does not compile. Parsing "400Gbps", "80GiB",
// "3.35TB/s" happens once, at the edge (io), into these types.
#include <compare>

namespace inflect::core {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : v_(v) {}
  constexpr double value() const { return v_; }
  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  constexpr double operator/(Quantity o) const { return v_ / o.v_; }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double v_ = 0;
};

template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) { return q * k; }

struct BytesTag {};
struct FlopsTag {};
struct BandwidthTag {};  // bytes per second
struct FlopRateTag {};   // FLOP per second
struct WattsTag {};
struct SecondsTag {};
struct JoulesTag {};

using Bytes = Quantity<BytesTag>;
using Flops = Quantity<FlopsTag>;
using Bandwidth = Quantity<BandwidthTag>;
using FlopRate = Quantity<FlopRateTag>;
using Watts = Quantity<WattsTag>;
using Seconds = Quantity<SecondsTag>;
using Joules = Quantity<JoulesTag>;

constexpr Seconds operator/(Bytes b, Bandwidth bw) { return Seconds(b.value() / bw.value()); }
constexpr Seconds operator/(Flops f, FlopRate r) { return Seconds(f.value() / r.value()); }
constexpr Bytes operator*(Bandwidth bw, Seconds s) { return Bytes(bw.value() * s.value()); }
constexpr Joules operator*(Watts w, Seconds s) { return Joules(w.value() * s.value()); }

/// Literal helpers for code and tests; user input is parsed by core::parse_* (units_parse.hpp).
constexpr Bytes gib(double v) { return Bytes(v * 1073741824.0); }
constexpr Bytes gb(double v) { return Bytes(v * 1e9); }
constexpr Bandwidth gb_per_s(double v) { return Bandwidth(v * 1e9); }
constexpr Bandwidth gbit_per_s(double v) { return Bandwidth(v * 1e9 / 8.0); }
constexpr FlopRate tflop_per_s(double v) { return FlopRate(v * 1e12); }

}  // namespace inflect::core
