// The thermal fit from telemetry recovers a synthetic RC step, and on this project's H200 trace
// finds what its summary found by its own means (calibration/traces/h200/2026-12-04/summary.txt:
// the loaded die at 63.0 C and 688.7 W; tau heating 0.52 s, cooling 0.40 s, counted from the
// host's markers).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "inflect/calib/telemetry.hpp"
#include "inflect/calib/thermal_fit.hpp"
#include "inflect/core/error.hpp"

using namespace inflect;

TEST_CASE("calib thermal: a synthetic RC step gives back its R and tau") {
  // 10 s idle at 100 W, 20 s at 600 W, 20 s idle; R = 0.05 C/W, tau = 0.8 s, inlet 30 C, 20 ms
  // samples, temperatures exact (not rounded): the fit returns R = (30 + 600 x 0.05 - 30) / 600
  // = 0.05 and tau = 0.8 s to the search's tolerance; C = tau / R = 16 J/C.
  std::ostringstream csv;
  csv << "t_mono,power_mw,temp_c\n";
  const double r = 0.05, tau = 0.8, inlet = 30;
  double temp = inlet + 100 * r;
  for (int i = 0; i <= 2500; ++i) {
    const double t = i * 0.02;
    const double p = (t >= 10 && t < 30) ? 600 : 100;
    temp = inlet + p * r + (temp - inlet - p * r) * std::exp(-0.02 / tau);
    csv << t << "," << p * 1000 << "," << temp << "\n";
  }
  const calib::TelemetryTable table = calib::parse_telemetry(csv.str(), "synthetic.csv");
  const calib::ThermalFit f = calib::fit_thermal(table, core::Celsius(inlet));
  CHECK(f.steps.size() == 2);
  CHECK(f.resistance_c_per_w == doctest::Approx(r).epsilon(0.01));
  CHECK(f.tau_s == doctest::Approx(tau).epsilon(0.05));
  CHECK(f.capacitance_j_per_c == doctest::Approx(16).epsilon(0.06));
}

TEST_CASE("calib thermal: the H200 trace's telemetry gives the figures its summary found") {
  std::ifstream in(std::string(INFLECT_SOURCE_DIR) + "/calibration/traces/h200/2026-12-04/telemetry.csv");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const calib::TelemetryTable table = calib::parse_telemetry(text.str(), "telemetry.csv");
  const calib::ThermalFit f = calib::fit_thermal(table, core::Celsius(25));
  // Two settled steps: the 45 s heating (41 -> 63 C at ~691 W) and the cooling after it. The
  // other sections' load changes start from levels the die had not reached and are left out.
  REQUIRE(f.steps.size() == 2);
  CHECK(f.steps[0].rising);
  CHECK(f.steps[0].from_c == doctest::Approx(41).epsilon(0.01));
  CHECK(f.steps[0].to_c == doctest::Approx(63).epsilon(0.01));
  CHECK(!f.steps[1].rising);
  // R = (63.0 - 25) / 691.4 = 0.0550 C/W, the catalog's figure (summary: 63.0 C at 688.7 W).
  CHECK(f.resistance_c_per_w == doctest::Approx(0.055).epsilon(0.02));
  // tau: 0.23 s rising and 0.31 s falling from the instantaneous power's crossing; the summary's
  // 0.52 / 0.40 s count from the host's section marker, 0.1-0.2 s before the GPU's power rose.
  // Either way the die follows power within a second.
  CHECK(f.tau_s > 0.15);
  CHECK(f.tau_s < 0.6);
}
