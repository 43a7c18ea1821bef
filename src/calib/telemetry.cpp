#include "inflect/calib/telemetry.hpp"

#include <array>
#include <cctype>
#include <cmath>

#include "calib/table_text.hpp"

namespace inflect::calib {

using detail::fail;
using detail::lower;
using detail::quote;
using detail::trim;

namespace {

enum Field { kTime, kDevice, kPower, kTemperature, kSmClock, kUtilization, kFields };
constexpr std::array<const char*, kFields> kFieldNames = {"time",        "device",   "power",
                                                          "temperature", "SM clock", "utilization"};

// The column names each field is read from, in order of preference; `unit` is the unit the name
// itself implies (power_mw) when the header gives none in brackets; `tool` is whose name it is.
enum Tool { kNvidiaSmi, kDcgmi, kAmdSmi, kPlain };
struct Name {
  std::string_view name;
  Field field;
  std::string_view unit;
  Tool tool;
};
constexpr Name kNames[] = {
    // nvidia-smi --query-gpu
    {"timestamp", kTime, "s", kNvidiaSmi},
    {"index", kDevice, "", kNvidiaSmi},
    {"power.draw", kPower, "w", kNvidiaSmi},
    {"power.draw.instant", kPower, "w", kNvidiaSmi},
    {"power.draw.average", kPower, "w", kNvidiaSmi},
    {"temperature.gpu", kTemperature, "c", kNvidiaSmi},
    {"clocks.current.sm", kSmClock, "mhz", kNvidiaSmi},
    {"clocks.sm", kSmClock, "mhz", kNvidiaSmi},
    {"clocks.current.graphics", kSmClock, "mhz", kNvidiaSmi},
    {"clocks.gr", kSmClock, "mhz", kNvidiaSmi},
    {"utilization.gpu", kUtilization, "%", kNvidiaSmi},
    // dcgmi dmon short names (fields 155, 150, 100, 203)
    {"power", kPower, "w", kDcgmi},
    {"tmptr", kTemperature, "c", kDcgmi},
    {"smclk", kSmClock, "mhz", kDcgmi},
    {"gputl", kUtilization, "%", kDcgmi},
    // amd-smi metric --csv (and monitor)
    {"gpu", kDevice, "", kAmdSmi},
    {"socket_power", kPower, "w", kAmdSmi},
    {"current_socket_power", kPower, "w", kAmdSmi},
    {"average_socket_power", kPower, "w", kAmdSmi},
    {"power_usage", kPower, "w", kAmdSmi},
    {"hotspot", kTemperature, "c", kAmdSmi},
    {"hotspot_temperature", kTemperature, "c", kAmdSmi},
    {"edge", kTemperature, "c", kAmdSmi},
    {"edge_temperature", kTemperature, "c", kAmdSmi},
    {"gfx_0_clk", kSmClock, "mhz", kAmdSmi},
    {"gfx_clk", kSmClock, "mhz", kAmdSmi},
    {"gfx_cur_clk", kSmClock, "mhz", kAmdSmi},
    {"gfx_activity", kUtilization, "%", kAmdSmi},
    {"gfx_usage", kUtilization, "%", kAmdSmi},
    {"gfx", kUtilization, "%", kAmdSmi},
    // plain logs with the unit in the name
    {"time", kTime, "s", kPlain},
    {"t", kTime, "s", kPlain},
    {"t_mono", kTime, "s", kPlain},
    {"time_s", kTime, "s", kPlain},
    {"time_ms", kTime, "ms", kPlain},
    {"device", kDevice, "", kPlain},
    {"gpu_index", kDevice, "", kPlain},
    {"gpu_id", kDevice, "", kPlain},
    // NVML's instantaneous power field (mW) before the plain averages: a 1 s average lags the load
    // by its window, which a fit in time (the die's time constant) cannot take.
    {"nvml_fi_dev_power_instant", kPower, "mw", kPlain},
    {"power_w", kPower, "w", kPlain},
    {"power_mw", kPower, "mw", kPlain},
    {"temperature", kTemperature, "c", kPlain},
    {"temp", kTemperature, "c", kPlain},
    {"temp_c", kTemperature, "c", kPlain},
    {"sm_mhz", kSmClock, "mhz", kPlain},
    {"sm_clock_mhz", kSmClock, "mhz", kPlain},
    {"sclk", kSmClock, "mhz", kPlain},
    {"utilization", kUtilization, "%", kPlain},
    {"util", kUtilization, "%", kPlain},
    {"util_pct", kUtilization, "%", kPlain},
    {"gpu_util", kUtilization, "%", kPlain}};

// A unit's factor to the field's unit (s, W, C, MHz, %); 0 if it does not fit the field.
double unit_factor(Field f, std::string_view u) {
  switch (f) {
    case kTime: return u == "s" ? 1 : u == "ms" ? 1e-3 : u == "us" ? 1e-6 : 0;
    case kPower: return u == "w" ? 1 : u == "mw" ? 1e-3 : u == "kw" ? 1e3 : 0;
    case kTemperature:
      return u == "c" ||
                     u == "\xC2\xB0"
                          "c" ||
                     u == "degc"
                 ? 1
                 : 0;
    case kSmClock: return u == "mhz" ? 1 : u == "ghz" ? 1e3 : 0;
    case kUtilization: return u == "%" ? 1 : 0;
    default: return u.empty() ? 1 : 0;
  }
}

// A column the file has that a field reads, with the factor its header's unit gives.
struct Source {
  std::size_t index = 0;
  double factor = 1;
  int rank = 0;  // position in kNames: lower is preferred
};

struct Layout {
  std::array<std::vector<Source>, kFields> sources;  // per field, in order of preference
  std::size_t width = 0;
  TelemetryColumns names;
};

// The columns of a header; nullopt when it names no known column. A known name with a unit that
// does not fit is an error.
std::optional<Layout> layout_of(const std::vector<std::string>& header, std::string_view file, int line) {
  Layout lay;
  lay.width = header.size();
  bool any = false;
  std::array<std::string*, kFields> out = {&lay.names.time,        &lay.names.device,   &lay.names.power,
                                           &lay.names.temperature, &lay.names.sm_clock, &lay.names.utilization};
  for (std::size_t i = 0; i < header.size(); ++i) {
    const auto col = detail::column_name(header[i]);
    for (int rank = 0; rank < static_cast<int>(std::size(kNames)); ++rank) {
      const Name& n = kNames[rank];
      if (col.base != n.name) continue;
      const std::string_view unit = col.unit.empty() ? n.unit : std::string_view(col.unit);
      const double factor = unit_factor(n.field, unit);
      if (factor == 0)
        fail(file, line,
             "column " + quote(header[i]) + ": " + std::string(kFieldNames[n.field]) + " in " + quote(unit) +
                 " is not a unit this reader knows");
      auto& list = lay.sources[n.field];
      Source s{i, factor, rank};
      auto at = list.begin();
      while (at != list.end() && at->rank < rank) ++at;
      list.insert(at, s);
      any = true;
    }
  }
  if (!any) return std::nullopt;
  for (int f = 0; f < kFields; ++f)
    if (!lay.sources[f].empty()) *out[f] = header[lay.sources[f].front().index];
  return lay;
}

bool missing(std::string_view v) {
  const std::string l = lower(trim(v));
  return l.empty() || l == "n/a" || l == "na" || l == "-" || l == "not supported" || l == "unknown error" ||
         (l.front() == '[' && l.back() == ']');  // nvidia-smi: [N/A], [Not Supported], [Unknown Error]
}

// Days from 1970-01-01 to a civil date (H. Hinnant's days_from_civil).
long long days_from_civil(long long y, long long m, long long d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;
  const long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "2026/12/04 02:08:57.258" (nvidia-smi), "2026-12-04T02:08:57Z", "...+01:00": seconds since 1970.
std::optional<double> date_time(std::string_view s) {
  auto digits = [&](std::size_t at, std::size_t n) -> std::optional<long long> {
    if (at + n > s.size()) return std::nullopt;
    for (std::size_t i = at; i < at + n; ++i)
      if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    return detail::parse_integer(s.substr(at, n));
  };
  if (s.size() < 19 || (s[4] != '/' && s[4] != '-') || s[7] != s[4] || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' ||
      s[16] != ':')
    return std::nullopt;
  const auto y = digits(0, 4), mo = digits(5, 2), d = digits(8, 2), h = digits(11, 2), mi = digits(14, 2),
             se = digits(17, 2);
  if (!y || !mo || !d || !h || !mi || !se || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 ||
      *se > 60)
    return std::nullopt;
  double t = static_cast<double>(days_from_civil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *se);
  std::size_t at = 19;
  if (at < s.size() && s[at] == '.') {
    std::size_t end = at + 1;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
    const auto frac = detail::parse_number(std::string("0") + std::string(s.substr(at, end - at)));
    if (!frac || end == at + 1) return std::nullopt;
    t += *frac;
    at = end;
  }
  const std::string_view zone = s.substr(at);
  if (zone.empty() || zone == "Z") return t;
  const auto zh = digits(at + 1, 2);
  const std::size_t mpos = zone.size() == 6 && zone[3] == ':' ? at + 4 : at + 3;
  const auto zm = digits(mpos, 2);
  if ((zone[0] != '+' && zone[0] != '-') || !zh || !zm || (zone.size() != 6 && zone.size() != 5)) return std::nullopt;
  const double offset = static_cast<double>(*zh * 3600 + *zm * 60);
  return zone[0] == '+' ? t - offset : t + offset;
}

// A value of a field: a number with an optional unit ("350.12 W", "45 %"), or a time as a date-time.
std::optional<double> value_of(Field f, const std::string& cell, double column_factor, std::string_view file, int line,
                               const std::string& column) {
  if (missing(cell)) return std::nullopt;
  const std::string_view v = trim(cell);
  if (f == kTime)
    if (auto t = date_time(v)) return *t;
  std::size_t n = 0;
  while (n < v.size() && (std::isdigit(static_cast<unsigned char>(v[n])) || v[n] == '.' || v[n] == '-' || v[n] == '+' ||
                          ((v[n] == 'e' || v[n] == 'E') && n > 0 && n + 1 < v.size() &&
                           (std::isdigit(static_cast<unsigned char>(v[n + 1])) || v[n + 1] == '-' || v[n + 1] == '+'))))
    ++n;
  const auto number = detail::parse_number(v.substr(0, n));
  if (!number) fail(file, line, column + " " + quote(cell) + " is not a number or N/A");
  double factor = column_factor;
  if (const auto unit = lower(trim(v.substr(n))); !unit.empty()) {
    factor = unit_factor(f, unit);
    if (factor == 0)
      fail(file, line, column + " " + quote(cell) + ": " + quote(unit) + " is not a unit of " + kFieldNames[f]);
  }
  const double x = *number * factor;
  if (x < 0 && f != kTemperature && f != kTime) fail(file, line, column + " " + quote(cell) + " is negative");
  return x;
}

TelemetrySample sample_of(const Layout& lay, const std::vector<std::string>& cells,
                          const std::vector<std::string>& header, std::string_view file, int line) {
  TelemetrySample s;
  s.line = line;
  std::array<std::optional<double>, kFields> v;
  for (int f = 0; f < kFields; ++f)
    for (const auto& src : lay.sources[f]) {
      v[f] = value_of(static_cast<Field>(f), cells[src.index], src.factor, file, line, header[src.index]);
      if (v[f]) break;  // the next column of the field only where this one has no value
    }
  if (v[kTime]) s.time = core::Seconds(*v[kTime]);
  if (v[kDevice]) {
    if (*v[kDevice] != std::floor(*v[kDevice]) || *v[kDevice] > 1e6)
      fail(file, line, "device " + quote(cells[lay.sources[kDevice].front().index]) + " is not a device index");
    s.device = static_cast<int>(*v[kDevice]);
  }
  if (v[kPower]) s.power = core::Watts(*v[kPower]);
  if (v[kTemperature]) s.temperature = core::Celsius(*v[kTemperature]);
  s.sm_clock_mhz = v[kSmClock];
  s.utilization_pct = v[kUtilization];
  return s;
}

std::string known_names() {
  std::string out;
  for (const auto& n : kNames) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

// Whose output a CSV is, by the names of its columns other than the device's ("gpu" is common).
std::string format_of(const Layout& lay) {
  for (int f = 0; f < kFields; ++f)
    for (const auto& src : lay.sources[f]) {
      if (f == kDevice) continue;
      if (kNames[src.rank].tool == kNvidiaSmi) return std::string(kTelemetryNvidiaSmi);
      if (kNames[src.rank].tool == kAmdSmi) return std::string(kTelemetryAmdSmi);
    }
  return std::string(kTelemetryCsv);
}

TelemetryTable read_dcgmi(const std::vector<detail::Line>& lines, std::string_view file) {
  TelemetryTable t;
  t.file = std::string(file);
  t.format = std::string(kTelemetryDcgmi);
  std::optional<Layout> lay;
  std::vector<std::string> header;
  for (const auto& l : lines) {
    std::string_view body = trim(l.text);
    if (body.empty()) continue;
    if (body.front() == '#') {
      auto tokens = detail::split_ws(trim(body.substr(1)));
      if (tokens.empty() || lower(tokens[0]) != "entity") continue;
      header.assign(tokens.begin() + 1, tokens.end());
      lay = layout_of(header, file, l.number);
      if (!lay)
        fail(file, l.number, "the dcgmi dmon header names no field this reader knows (POWER, TMPTR, SMCLK, GPUTL)");
      continue;
    }
    const auto tokens = detail::split_ws(body);
    if (tokens[0] != "GPU") continue;  // the units line (ID ...), other entities, messages
    if (!lay) fail(file, l.number, "a GPU row before the #Entity header");
    if (tokens.size() != header.size() + 2)
      fail(file, l.number,
           "a row of " + std::to_string(tokens.size() >= 2 ? tokens.size() - 2 : 0) +
               " values after the entity; the header has " + std::to_string(header.size()));
    std::vector<std::string> cells(tokens.begin() + 2, tokens.end());
    TelemetrySample s = sample_of(*lay, cells, header, file, l.number);
    const auto id = detail::parse_integer(tokens[1]);
    if (!id || *id < 0 || *id > 1'000'000)
      fail(file, l.number, "GPU id " + quote(tokens[1]) + " is not a device index");
    s.device = static_cast<int>(*id);
    t.samples.push_back(s);
  }
  if (lay) {
    t.columns = lay->names;
    t.columns.device = "Entity";
  }
  return t;
}

}  // namespace

TelemetryTable parse_telemetry(std::string_view text, std::string_view file_name) {
  const auto lines = detail::split_lines(text);
  std::string_view first;
  for (const auto& l : lines)
    if (!trim(l.text).empty()) {
      first = trim(l.text);
      break;
    }
  if (first.empty()) fail(file_name, 1, "the file is empty: expected nvidia-smi, dcgmi dmon or amd-smi output");
  TelemetryTable table;
  if (detail::starts_with_icase(first, "#entity") || detail::starts_with_icase(first, "# entity")) {
    table = read_dcgmi(lines, file_name);
  } else {
    table.file = std::string(file_name);
    std::optional<Layout> lay;
    std::vector<std::string> header;
    std::string_view header_text;
    for (const auto& l : lines) {
      const std::string_view t = trim(l.text);
      if (t.empty() || t.front() == '#' || t == header_text) continue;  // blank, comments, repeated headers
      const auto cells = detail::split_csv(t, ',', true, file_name, l.number);
      if (!lay) {  // before the header: a tool's banner, skipped
        lay = layout_of(cells, file_name, l.number);
        if (lay) {
          header = cells;
          header_text = t;
          table.columns = lay->names;
          table.format = format_of(*lay);
        }
        continue;
      }
      if (cells.size() != lay->width)
        fail(file_name, l.number,
             "a row of " + std::to_string(cells.size()) + " fields; the header has " + std::to_string(lay->width));
      table.samples.push_back(sample_of(*lay, cells, header, file_name, l.number));
    }
    if (!lay)
      fail(file_name, lines.front().number, "no header row naming a telemetry column; known names: " + known_names());
  }
  if (table.samples.empty()) fail(file_name, lines.back().number, "no samples under the header");
  return table;
}

}  // namespace inflect::calib
