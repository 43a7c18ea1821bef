#pragma once
// A device's thermal resistance and capacitance from its own telemetry (power and die temperature
// over time, as nvidia-smi, DCGM or NVML logs write them; calib/telemetry.hpp): the RC model the
// power model uses (docs/power.md, hw::rc_step: the die approaches inlet + P R with time constant
// tau = R C after a change of power).
#include <string>
#include <vector>

#include "inflect/calib/telemetry.hpp"
#include "inflect/core/units.hpp"

namespace inflect::calib {

/// One step of power the fit found and what the die did after it.
struct ThermalStep {
  double t0_s = 0;                 // when power crossed the midpoint between idle and load
  double from_c = 0, to_c = 0;     // die temperature before the step and where it settled
  double power_w = 0;              // mean power while it settled
  double tau_s = 0;                // the fitted time constant
  bool rising = false;
};

struct ThermalFit {
  double resistance_c_per_w = 0;  // (loaded temperature - inlet) / loaded power
  double tau_s = 0;               // mean over the steps
  double capacitance_j_per_c = 0; // tau / R
  double idle_power_w = 0;        // the low level's mean power
  std::vector<ThermalStep> steps;
  std::string source;             // what it was fitted on, for the device file's sources
};

/// Fits the samples of one device (the first device index seen, or all when none is given) that
/// have a time, a power and a temperature: power levels are split at the midpoint of its 5th and
/// 95th percentiles; every stretch of at least 5 s after a crossing, itself after one of 5 s,
/// whose temperature moves by 5 C
/// or more gives a time constant (least squares of T(t) = to + (from - to) exp(-t / tau) over its
/// first 6 s, tau from 20 ms to 60 s); the loaded stretch of highest power gives R against
/// `inlet_c`. Throws core::Error(input) when the log holds no such step.
ThermalFit fit_thermal(const TelemetryTable& table, core::Celsius inlet_c);

/// `device_yaml` renamed to `name` with the fit's resistance (air or liquid, by the cooling the
/// telemetry ran under) and capacitance, and their sources saying so.
std::string device_with_thermal_fit(const std::string& device_yaml, const ThermalFit& fit, bool liquid,
                                    const std::string& name);

}  // namespace inflect::calib
