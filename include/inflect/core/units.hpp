#pragma once
// Strong unit types for quantities that cross module boundaries.
//
// Each is a double in SI base units (bytes, FLOPs, bytes/s, FLOP/s, watts, joules, seconds; degrees
// Celsius for temperature) wrapped in its own type so that dimensions cannot be mixed by accident:
// Bytes / Bandwidth is Seconds, Flops / FlopRate is Seconds, Joules / Seconds is Watts, and adding
// Bytes to Flops does not compile. Parsing "400Gbps", "80GiB", "3.35TB/s" happens once, at the edge
// (io), into these types; writing them out as plain numbers happens once too (the report field
// table, io/report_fields.hpp). Simulated time is integer picoseconds (core::Time, time.hpp):
// Time::from(Seconds) rounds a computed duration into it.
//
// Every operator is the one floating-point operation on the values it wraps, so moving a formula
// onto these types does not move a result in the last bit (outputs are compared byte for byte).
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
struct MetersTag {};      // distance (a fiber route's length)
struct JoulesTag {};
/// Degrees Celsius, for temperatures and for differences of them (the RC model works in both).
struct CelsiusTag {};
struct ThermalResistanceTag {};  // degrees C per watt (die to coolant)
struct HeatCapacityTag {};       // joules per degree C

using Bytes = Quantity<BytesTag>;
using Flops = Quantity<FlopsTag>;
using Bandwidth = Quantity<BandwidthTag>;
using FlopRate = Quantity<FlopRateTag>;
using Watts = Quantity<WattsTag>;
using Seconds = Quantity<SecondsTag>;
using Meters = Quantity<MetersTag>;
using Joules = Quantity<JoulesTag>;
using Celsius = Quantity<CelsiusTag>;
using ThermalResistance = Quantity<ThermalResistanceTag>;
using HeatCapacity = Quantity<HeatCapacityTag>;

constexpr Seconds operator/(Bytes b, Bandwidth bw) { return Seconds(b.value() / bw.value()); }
constexpr Seconds operator/(Flops f, FlopRate r) { return Seconds(f.value() / r.value()); }
constexpr Bytes operator*(Bandwidth bw, Seconds s) { return Bytes(bw.value() * s.value()); }
constexpr Joules operator*(Watts w, Seconds s) { return Joules(w.value() * s.value()); }
constexpr Watts operator/(Joules e, Seconds s) { return Watts(e.value() / s.value()); }
/// A power through a thermal resistance: the temperature it holds the die above its coolant.
constexpr Celsius operator*(Watts p, ThermalResistance r) { return Celsius(p.value() * r.value()); }
/// The power a temperature difference drives through a thermal resistance.
constexpr Watts operator/(Celsius d, ThermalResistance r) { return Watts(d.value() / r.value()); }
/// The RC time constant.
constexpr Seconds operator*(ThermalResistance r, HeatCapacity c) { return Seconds(r.value() * c.value()); }

/// Literal helpers for code and tests; user input is parsed by core::parse_* (units_parse.hpp).
constexpr Bytes gib(double v) { return Bytes(v * 1073741824.0); }
constexpr Bytes gb(double v) { return Bytes(v * 1e9); }
constexpr Bandwidth gb_per_s(double v) { return Bandwidth(v * 1e9); }
constexpr Bandwidth gbit_per_s(double v) { return Bandwidth(v * 1e9 / 8.0); }
constexpr FlopRate tflop_per_s(double v) { return FlopRate(v * 1e12); }

}  // namespace inflect::core
