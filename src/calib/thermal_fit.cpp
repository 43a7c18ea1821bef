#include "inflect/calib/thermal_fit.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "inflect/core/error.hpp"

namespace inflect::calib {
namespace {

struct Sample {
  double t, p, temp;
};

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

double mean_over(const std::vector<Sample>& s, std::size_t a, std::size_t b, double Sample::*field) {
  double sum = 0;
  for (std::size_t i = a; i < b; ++i) sum += s[i].*field;
  return b > a ? sum / static_cast<double>(b - a) : NAN;
}

// Least squares of T(t) = to + (from - to) exp(-(t - t0) / tau) over the samples in [a, b): a
// one-parameter fit, so by golden-section search on log(tau) (the error is unimodal in it for a
// step response), between 20 ms and 60 s.
double fit_tau(const std::vector<Sample>& s, std::size_t a, std::size_t b, double t0, double from, double to) {
  auto err = [&](double log_tau) {
    const double tau = std::exp(log_tau);
    double e = 0;
    for (std::size_t i = a; i < b; ++i) {
      const double model = to + (from - to) * std::exp(-(s[i].t - t0) / tau);
      e += (s[i].temp - model) * (s[i].temp - model);
    }
    return e;
  };
  double lo = std::log(0.02), hi = std::log(60.0);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = err(x1), f2 = err(x2);
  for (int it = 0; it < 80; ++it) {
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - g * (hi - lo);
      f1 = err(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + g * (hi - lo);
      f2 = err(x2);
    }
  }
  return std::exp((lo + hi) / 2);
}

}  // namespace

ThermalFit fit_thermal(const TelemetryTable& table, core::Celsius inlet_c) {
  std::vector<Sample> s;
  std::optional<int> device;
  for (const auto& x : table.samples) {
    if (!x.time || !x.power || !x.temperature) continue;
    if (x.device) {
      if (!device) device = x.device;
      if (*x.device != *device) continue;
    }
    s.push_back({x.time->value(), x.power->value(), x.temperature->value()});
  }
  if (s.size() < 50)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: {} samples with a time, a power and a temperature; a thermal fit needs a log of "
                                  "at least 50 (and a step of load in it)",
                                  table.file, s.size()));
  std::stable_sort(s.begin(), s.end(), [](const Sample& a, const Sample& b) { return a.t < b.t; });
  std::vector<double> powers;
  for (const auto& x : s) powers.push_back(x.p);
  const double p_lo = percentile(powers, 0.05), p_hi = percentile(powers, 0.95);
  if (p_hi - p_lo < 50)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: power stays within {:.0f}-{:.0f} W; a thermal fit needs a step of load", table.file,
                                  p_lo, p_hi));
  const double mid = (p_lo + p_hi) / 2;
  // Stretches between crossings of the midpoint.
  std::vector<std::size_t> starts = {0};
  for (std::size_t i = 1; i < s.size(); ++i)
    if ((s[i].p >= mid) != (s[i - 1].p >= mid)) starts.push_back(i);
  starts.push_back(s.size());
  constexpr double kMinStretch = 5, kFitSpan = 6, kMinSwing = 5, kSettle = 0.25;
  ThermalFit fit;
  double best_power = -1, loaded_temp = 0;
  std::vector<double> idle;
  for (std::size_t k = 1; k + 1 < starts.size(); ++k) {
    const std::size_t a = starts[k], b = starts[k + 1];
    const double t0 = s[a].t;
    // Both the stretch and the one before it must be long enough to settle: a step from a level
    // the die had not reached yet has no `from` to fit against.
    if (s[b - 1].t - t0 < kMinStretch || t0 - s[starts[k - 1]].t < kMinStretch) continue;
    // Before: the 0.2 s before the crossing; after: the last quarter of the stretch.
    std::size_t before = a;
    while (before > starts[k - 1] && s[a].t - s[before - 1].t <= 0.2) --before;
    std::size_t settle = a;
    while (settle < b && s[settle].t - t0 < (1 - kSettle) * (s[b - 1].t - t0)) ++settle;
    const double from = mean_over(s, before, a, &Sample::temp);
    const double to = mean_over(s, settle, b, &Sample::temp);
    const double power = mean_over(s, settle, b, &Sample::p);
    if (std::isnan(from) || std::abs(to - from) < kMinSwing) continue;
    std::size_t end = a;
    while (end < b && s[end].t - t0 <= kFitSpan) ++end;
    ThermalStep st{t0, from, to, power, fit_tau(s, a, end, t0, from, to), s[a].p >= mid};
    fit.steps.push_back(st);
    if (st.rising && power > best_power) {
      best_power = power;
      loaded_temp = to;
    }
    if (!st.rising) idle.push_back(power);
  }
  if (fit.steps.empty() || best_power < 0)
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: no step of load held for {} s with the die moving {} C or more; record a few "
                                  "seconds idle, then sustained load (docs/calibration.md)",
                                  table.file, kMinStretch, kMinSwing));
  fit.resistance_c_per_w = (loaded_temp - inlet_c.value()) / best_power;
  if (!(fit.resistance_c_per_w > 0))
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{}: the loaded die ({:.1f} C) is not above the inlet ({:.1f} C); check --inlet-c",
                                  table.file, loaded_temp, inlet_c.value()));
  double tau = 0;
  for (const auto& st : fit.steps) tau += st.tau_s;
  fit.tau_s = tau / static_cast<double>(fit.steps.size());
  fit.capacitance_j_per_c = fit.tau_s / fit.resistance_c_per_w;
  fit.idle_power_w = idle.empty() ? p_lo : idle.front();
  fit.source = fmt::format("{}: {} steps of load; loaded die {:.1f} C at {:.1f} W against a {:.1f} C inlet, tau {:.2f} s",
                           table.file, fit.steps.size(), loaded_temp, best_power, inlet_c.value(), fit.tau_s);
  return fit;
}

std::string device_with_thermal_fit(const std::string& device_yaml, const ThermalFit& fit, bool liquid,
                                    const std::string& name) {
  YAML::Node doc = YAML::Load(device_yaml);
  doc["name"] = name;
  const std::string r_key = liquid ? "resistance_liquid_c_per_w" : "resistance_air_c_per_w";
  doc["thermal"][r_key] = fmt::format("{:.4g}", fit.resistance_c_per_w);
  doc["thermal"]["capacitance_j_per_c"] = fmt::format("{:.4g}", fit.capacitance_j_per_c);
  doc["sources"]["thermal." + r_key] = "calibrated by inflect calibrate: " + fit.source;
  doc["sources"]["thermal.capacitance_j_per_c"] =
      fmt::format("calibrated by inflect calibrate: C = tau / R = {:.3g} s / {:.4g} C/W ({})", fit.tau_s,
                  fit.resistance_c_per_w, fit.source);
  YAML::Emitter out;
  out << doc;
  return std::string(out.c_str()) + "\n";
}

}  // namespace inflect::calib
