// calib::parse_telemetry: nvidia-smi (the H200 trace's smi.csv and inline), dcgmi dmon, amd-smi
// (MI300X and MI250 power fields), a plain log (the H200 trace's telemetry.csv), and errors.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "inflect/calib/telemetry.hpp"
#include "inflect/core/error.hpp"

using inflect::calib::parse_telemetry;
using inflect::core::Error;
using inflect::core::ErrorKind;

namespace {

constexpr double kRel = 1e-12;

std::string read(const std::string& path) {
  std::ifstream in(std::string(INFLECT_SOURCE_DIR) + "/" + path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing " << path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_telemetry(text, "log.csv");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    return inflect::core::format_error(e);
  }
  return "";
}

}  // namespace

TEST_CASE("telemetry: nvidia-smi csv, the H200 trace (calibration/traces/h200/2026-12-04/smi.csv)") {
  // 1008 lines: the header and 1007 samples, every 200 ms.
  const auto t = parse_telemetry(read("calibration/traces/h200/2026-12-04/smi.csv"), "smi.csv");
  CHECK(t.format == "nvidia-smi csv");
  CHECK(t.samples.size() == 1007);
  CHECK(t.columns.power == "power.draw [W]");
  CHECK(t.columns.sm_clock == "clocks.current.sm [MHz]");
  CHECK(t.columns.temperature == "temperature.gpu");
  CHECK(t.columns.utilization == "utilization.gpu [%]");
  CHECK(t.columns.time == "timestamp");
  CHECK(t.columns.device.empty());
  // Line 2: 2026/12/04 02:08:57.258, 79.74, 345, 3201, 40, 39, 0x0000000000000001, 0
  const auto& s = t.samples.front();
  CHECK(s.line == 2);
  CHECK(s.power->value() == doctest::Approx(79.74).epsilon(kRel));
  CHECK(*s.sm_clock_mhz == 345);
  CHECK(s.temperature->value() == 40);
  CHECK(*s.utilization_pct == 0);
  CHECK_FALSE(s.device);
  // 2026-12-04 is day 20791 after 1970-01-01; 02:08:57.258 adds 7737.258 s.
  CHECK(s.time->value() == doctest::Approx(20791.0 * 86400 + 7737.258).epsilon(kRel));
  CHECK(t.samples[1].time->value() - s.time->value() == doctest::Approx(0.208).epsilon(1e-6));
}

TEST_CASE("telemetry: a plain log with units in the names (the H200 trace's telemetry.csv)") {
  // 9969 lines: the header and 9968 samples, every 20 ms; power in mW.
  const auto t = parse_telemetry(read("calibration/traces/h200/2026-12-04/telemetry.csv"), "telemetry.csv");
  CHECK(t.format == "csv");
  CHECK(t.samples.size() == 9968);
  // NVML's instantaneous power (mW) is preferred to power_mw, its 1 s average, which lags the load.
  CHECK(t.columns.power == "NVML_FI_DEV_POWER_INSTANT");
  // Line 2: 32.4627,79735,2963623,345,3201,40,0,1,80203,39,79735
  const auto& s = t.samples.front();
  CHECK(s.time->value() == doctest::Approx(32.4627).epsilon(kRel));
  CHECK(s.power->value() == doctest::Approx(80.203).epsilon(kRel));
  CHECK(*s.sm_clock_mhz == 345);
  CHECK(s.temperature->value() == 40);
  CHECK(*s.utilization_pct == 0);
}

TEST_CASE("telemetry: nvidia-smi values with units, [N/A], ISO time with an offset") {
  const auto t = parse_telemetry(
      "timestamp, index, power.draw [W], clocks.current.sm [MHz], temperature.gpu, utilization.gpu [%]\n"
      "2024/08/29 16:44:05.490, 0, 350.12 W, 1980 MHz, 65, 99 %\n"
      "2024/08/29 16:44:05.690, 1, [N/A], 1.98 GHz, 66, [Not Supported]\n"
      "2024-08-29T16:44:05.490+02:00, 2, 351 W, 1980 MHz, 64, 98 %\n",
      "smi.csv");
  REQUIRE(t.samples.size() == 3);
  CHECK(t.samples[0].device == 0);
  CHECK(t.samples[0].power->value() == doctest::Approx(350.12).epsilon(kRel));
  CHECK(*t.samples[0].utilization_pct == 99);
  CHECK(t.samples[1].device == 1);
  CHECK_FALSE(t.samples[1].power);
  CHECK_FALSE(t.samples[1].utilization_pct);
  CHECK(*t.samples[1].sm_clock_mhz == doctest::Approx(1980).epsilon(kRel));
  // The same wall time written at UTC+2 is two hours earlier in UTC.
  CHECK(t.samples[0].time->value() - t.samples[2].time->value() == doctest::Approx(7200).epsilon(kRel));
}

TEST_CASE("telemetry: dcgmi dmon") {
  const auto t = parse_telemetry(
      "#Entity   POWER     TMPTR    SMCLK    GPUTL\n"
      "ID        W         C        MHZ      %\n"
      "GPU 0     350.123   65       1980     99\n"
      "GPU 1     N/A       64       1965     98\n"
      "Switch 0  N/A       40       N/A      N/A\n"
      "#Entity   POWER     TMPTR    SMCLK    GPUTL\n"
      "ID        W         C        MHZ      %\n"
      "GPU 0     348.0     66       1965     99\n",
      "dmon.txt");
  CHECK(t.format == "dcgmi dmon");
  REQUIRE(t.samples.size() == 3);  // the switch row skipped
  CHECK(t.samples[0].device == 0);
  CHECK(t.samples[0].power->value() == doctest::Approx(350.123).epsilon(kRel));
  CHECK(t.samples[0].temperature->value() == 65);
  CHECK(*t.samples[0].sm_clock_mhz == 1980);
  CHECK(*t.samples[0].utilization_pct == 99);
  CHECK_FALSE(t.samples[0].time);
  CHECK(t.samples[1].device == 1);
  CHECK_FALSE(t.samples[1].power);
  CHECK(t.samples[2].line == 8);
}

TEST_CASE("telemetry: amd-smi, MI300X (socket_power, no edge temperature) and MI250 (average_socket_power)") {
  // amd-smi metric --csv on MI300X: edge N/A, the hotspot read instead; a list field quoted, one not.
  const auto mi300 = parse_telemetry(
      "gpu,gfx_activity,umc_activity,vcn_activity,socket_power,gfx_voltage,gfx_0_clk,edge,hotspot,mem\n"
      "0,97,40,\"[0, 0, 0, 0]\",742,N/A,2100,N/A,81,70\n"
      "1,96,41,[0, 0, 0, 0],738,N/A,2095,N/A,79,69\n",
      "amd.csv");
  CHECK(mi300.format == "amd-smi csv");
  REQUIRE(mi300.samples.size() == 2);
  CHECK(mi300.columns.temperature == "hotspot");
  CHECK(mi300.samples[1].device == 1);
  CHECK(mi300.samples[1].power->value() == 738);
  CHECK(mi300.samples[1].temperature->value() == 79);
  CHECK(*mi300.samples[1].sm_clock_mhz == 2095);
  CHECK(*mi300.samples[1].utilization_pct == 96);
  // MI250 through the library's field names: average_socket_power; edge where there is no hotspot.
  const auto mi250 = parse_telemetry("gpu,current_socket_power,average_socket_power,edge\n0,N/A,480,62\n", "amd.csv");
  CHECK(mi250.samples[0].power->value() == 480);
  CHECK(mi250.samples[0].temperature->value() == 62);
  // amd-smi metric -w: a banner line and the header again before every sample.
  const auto watch = parse_telemetry(
      "'CTRL' + 'C' to stop watching "
      "output:\ntimestamp,gpu,socket_power\n123,0,400\ntimestamp,gpu,socket_power\n124,0,410\n",
      "watch.csv");
  REQUIRE(watch.samples.size() == 2);
  CHECK(watch.samples[1].time->value() == 124);
  CHECK(watch.samples[1].power->value() == 410);
}

TEST_CASE("telemetry: errors name file:line") {
  CHECK(error_of("").starts_with("log.csv:1: the file is empty"));
  CHECK(error_of("a,b,c\n1,2,3\n")
            .starts_with("log.csv:1: no header row naming a telemetry column; known names: timestamp"));
  const std::string h = "index, power.draw [W], temperature.gpu\n";
  CHECK(error_of(h + "0, 350 W, 65\n0, 351 W\n") == "log.csv:3: a row of 2 fields; the header has 3");
  CHECK(error_of(h + "0, lots, 65\n") == "log.csv:2: power.draw [W] 'lots' is not a number or N/A");
  CHECK(error_of(h + "0, 350 MHz, 65\n") == "log.csv:2: power.draw [W] '350 MHz': 'mhz' is not a unit of power");
  CHECK(error_of(h + "0, -350, 65\n") == "log.csv:2: power.draw [W] '-350' is negative");
  CHECK(error_of("index, power.draw [J]\n0, 1\n") ==
        "log.csv:1: column 'power.draw [J]': power in 'j' is not a unit this reader knows");
  CHECK(error_of(h) == "log.csv:1: no samples under the header");
  CHECK(error_of("#Entity POWER TMPTR\nGPU 0 350\n") ==
        "log.csv:2: a row of 1 values after the entity; the header has 2");
  CHECK(error_of("#Entity NVLTX\nGPU 0 350\n") ==
        "log.csv:1: the dcgmi dmon header names no field this reader knows (POWER, TMPTR, SMCLK, GPUTL)");
}
