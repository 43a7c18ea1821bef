#pragma once
// GPU telemetry logs: samples of power, temperature, SM clock and utilization over time, as three
// tools write them (docs/calibration.md, "File formats", lists every column name read):
//   - nvidia-smi --query-gpu=... --format=csv: a header row with units in brackets
//     (`timestamp, index, power.draw [W], clocks.current.sm [MHz], temperature.gpu`) and values
//     with their units (`350.12 W`, `1980 MHz`) or `[N/A]`, or bare numbers (`nounits`);
//   - dcgmi dmon: space-aligned columns under `#Entity  POWER  TMPTR  SMCLK  GPUTL`, rows
//     `GPU 0  350.123  65  1980  99` (rows of other entities, e.g. switches, are skipped);
//   - amd-smi metric --csv: `gpu,socket_power,...,hotspot,...,gfx_0_clk,...`. amd-smi fills its
//     `socket_power` from current_socket_power on MI300 and later and from average_socket_power on
//     MI200 and earlier (amdsmi_power_info_t); files that carry those fields by their own names are
//     read too, in that order. MI300X reports no edge temperature (N/A): the hotspot (junction)
//     temperature is read first, the edge one where there is no hotspot value.
// Any other CSV whose header uses the names below (e.g. `t_mono,power_mw,sm_mhz,temp_c,util_pct`)
// reads the same way. Lines before the header (a tool's banner) and repeated header lines are
// skipped.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "inflect/core/units.hpp"

namespace inflect::calib {

/// One sample of one device. Each figure is there only if the file has it for this line.
struct TelemetrySample {
  int line = 0;                       // 1-based line of the file
  std::optional<core::Seconds> time;  // on the file's clock: a number as written (its unit
                                      // applied); a date-time as seconds since 1970-01-01T00:00
                                      // of the time as written (UTC when it gives an offset)
  std::optional<int> device;          // the device index (nvidia-smi index, amd-smi gpu, dcgmi GPU id)
  std::optional<core::Watts> power;
  std::optional<core::Celsius> temperature;
  std::optional<double> sm_clock_mhz;     // graphics/SM clock, MHz
  std::optional<double> utilization_pct;  // busy percentage, 0-100
};

/// The column each field was read from (the first of its names the file has; empty: none).
struct TelemetryColumns {
  std::string time, device, power, temperature, sm_clock, utilization;
};

/// Names of TelemetryTable::format.
inline constexpr std::string_view kTelemetryNvidiaSmi = "nvidia-smi csv";
inline constexpr std::string_view kTelemetryDcgmi = "dcgmi dmon";
inline constexpr std::string_view kTelemetryAmdSmi = "amd-smi csv";
inline constexpr std::string_view kTelemetryCsv = "csv";

struct TelemetryTable {
  std::string file;
  std::string format;  // one of the kTelemetry* names
  TelemetryColumns columns;
  std::vector<TelemetrySample> samples;  // in file order; never empty
};

/// Parses a telemetry log in any of the forms above. Throws core::Error(input) at file:line for a
/// header that names no known column, a row of the wrong width, a value that is not a number (or
/// N/A), a unit that does not fit its column, or a negative power, clock or utilization.
TelemetryTable parse_telemetry(std::string_view text, std::string_view file_name);

}  // namespace inflect::calib
