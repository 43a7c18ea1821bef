#include "inflect/calib/gemm_sweep.hpp"

#include <cmath>

#include "calib/table_text.hpp"
#include "inflect/core/error.hpp"

namespace inflect::calib {

using detail::fail;
using detail::quote;

std::optional<core::Precision> parse_gemm_dtype(std::string_view s) {
  std::string d = detail::lower(detail::trim(s));
  if (d.starts_with("torch.")) d.erase(0, 6);
  if (auto p = core::parse_precision(d)) return p;
  if (d.starts_with("float8") || d.starts_with("fp8") || d.starts_with("e4m3") || d.starts_with("e5m2"))
    return core::Precision::fp8;
  if (d == "float32" || d == "float" || d == "f32") return core::Precision::fp32;
  if (d == "bfloat16") return core::Precision::bf16;
  if (d == "float16" || d == "half" || d == "f16") return core::Precision::fp16;
  return std::nullopt;
}

namespace {

constexpr std::string_view kExpected =
    "a header row naming M, N, K, dtype and the time (time_us, time_ms, time_s, or time [us]) or tflops";

// Seconds per unit of a time column's unit; 0 if it is no time unit.
double seconds_per(std::string_view unit) {
  if (unit == "s" || unit == "sec") return 1;
  if (unit == "ms") return 1e-3;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "usec") return 1e-6;
  if (unit == "ns") return 1e-9;
  return 0;
}

struct Columns {
  std::optional<std::size_t> m, n, k, dtype, time, tflops;
  double time_unit = 0;  // seconds per unit of the time column
};

Columns find_columns(const std::vector<std::string>& header, std::string_view file, int line) {
  Columns c;
  for (std::size_t i = 0; i < header.size(); ++i) {
    auto name = detail::column_name(header[i]);
    if (name.unit.empty()) {  // the unit as a suffix: time_us
      const std::size_t us = name.base.rfind('_');
      if (us != std::string::npos && seconds_per(std::string_view(name.base).substr(us + 1)) > 0) {
        name.unit = name.base.substr(us + 1);
        name.base.resize(us);
      }
    }
    const std::string& b = name.base;
    if (b == "m" && !c.m)
      c.m = i;
    else if (b == "n" && !c.n)
      c.n = i;
    else if (b == "k" && !c.k)
      c.k = i;
    else if ((b == "dtype" || b == "precision" || b == "type" || b == "data_type" || b == "datatype") && !c.dtype)
      c.dtype = i;
    else if ((b == "tflops" || b == "tflop/s" || b == "tflops/s" || name.unit == "tflop/s" || name.unit == "tflops") &&
             !c.tflops)
      c.tflops = i;
    else if ((b == "time" || b == "latency" || b == "duration" || b == "elapsed" || b == "runtime") && !c.time) {
      c.time_unit = seconds_per(name.unit);
      if (c.time_unit == 0)
        fail(file, line,
             "time column " + quote(header[i]) +
                 " does not say its unit: name it time_us, time_ms, time_s or 'time [us]'");
      c.time = i;
    }
  }
  std::string missing;
  if (!c.m) missing += ", M";
  if (!c.n) missing += ", N";
  if (!c.k) missing += ", K";
  if (!c.time && !c.tflops) missing += ", time (time_us, time_ms, time_s) or tflops";
  if (!missing.empty())
    fail(file, line, "the header has no column " + missing.substr(2) + "; expected " + std::string(kExpected));
  return c;
}

std::int64_t dimension(const std::string& cell, const char* name, std::string_view file, int line) {
  const auto v = detail::parse_number(cell);
  if (!v) fail(file, line, std::string(name) + " " + quote(cell) + " is not a number");
  if (*v <= 0 || *v != std::floor(*v) || *v > 1e15)
    fail(file, line, std::string(name) + " " + quote(cell) + " is not a whole number > 0");
  return static_cast<std::int64_t>(*v);
}

double positive(const std::string& cell, const char* name, std::string_view file, int line) {
  const auto v = detail::parse_number(cell);
  if (!v) fail(file, line, std::string(name) + " " + quote(cell) + " is not a number");
  if (*v <= 0) fail(file, line, std::string(name) + " " + quote(cell) + " is not > 0");
  return *v;
}

/// The header row's separator, as the files are written: a tab when the line has tabs and no comma.
char separator_of(std::string_view header) {
  return header.find(',') == std::string_view::npos && header.find('\t') != std::string_view::npos ? '\t' : ',';
}

}  // namespace

bool looks_like_gemm_sweep(std::string_view text) {
  for (const auto& l : detail::split_lines(text)) {
    const std::string_view t = detail::trim(l.text);
    if (t.empty() || t.front() == '#') continue;
    bool m = false, n = false, k = false;
    try {
      for (const auto& field : detail::split_csv(t, separator_of(t), false, "", l.number)) {
        const std::string base = detail::column_name(field).base;
        m = m || base == "m";
        n = n || base == "n";
        k = k || base == "k";
      }
    } catch (const core::Error&) {
      return false;  // not a CSV header this parser can read
    }
    return m && n && k;
  }
  return false;
}

GemmSweep parse_gemm_sweep(std::string_view text, std::string_view file_name, std::optional<core::Precision> dtype) {
  GemmSweep sweep;
  sweep.file = std::string(file_name);
  std::optional<Columns> cols;
  std::size_t width = 0;
  char sep = ',';
  int last = 1;
  for (const auto& l : detail::split_lines(text)) {
    last = l.number;
    const std::string_view t = detail::trim(l.text);
    if (t.empty() || t.front() == '#') continue;
    if (!cols) {
      sep = separator_of(t);
      const auto header = detail::split_csv(t, sep, false, file_name, l.number);
      cols = find_columns(header, file_name, l.number);
      if (!cols->dtype && !dtype)
        fail(file_name, l.number,
             "the header has no dtype column (bf16, fp16, ...) and no precision was given for the file");
      width = header.size();
      continue;
    }
    const auto f = detail::split_csv(t, sep, false, file_name, l.number);
    if (f.size() != width)
      fail(file_name, l.number,
           "a row of " + std::to_string(f.size()) + " fields; the header has " + std::to_string(width));
    GemmPoint p;
    p.line = l.number;
    p.m = dimension(f[*cols->m], "M", file_name, l.number);
    p.n = dimension(f[*cols->n], "N", file_name, l.number);
    p.k = dimension(f[*cols->k], "K", file_name, l.number);
    if (cols->dtype) {
      const auto d = parse_gemm_dtype(f[*cols->dtype]);
      if (!d)
        fail(file_name, l.number,
             "dtype " + quote(f[*cols->dtype]) + " is not a precision; valid: " + std::string(core::kPrecisionNames) +
                 " (or bfloat16, float16, float32, float8_e4m3fn, ...)");
      p.dtype = *d;
    } else {
      p.dtype = *dtype;
    }
    const double flop = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
    if (cols->time) {
      p.time = core::Seconds(positive(f[*cols->time], "time", file_name, l.number) * cols->time_unit);
      p.tflops = flop / p.time.value() / 1e12;
      if (cols->tflops) {
        const double given = positive(f[*cols->tflops], "tflops", file_name, l.number);
        if (std::abs(given - p.tflops) > 0.05 * p.tflops + 0.01)
          fail(file_name, l.number,
               "tflops " + quote(f[*cols->tflops]) + " disagrees with the time: 2MNK / time is " +
                   std::to_string(p.tflops) + " TFLOP/s (is the time column's unit right?)");
      }
    } else {
      p.tflops = positive(f[*cols->tflops], "tflops", file_name, l.number);
      p.time = core::Seconds(flop / (p.tflops * 1e12));
    }
    if (!(p.time.value() > 0) || !std::isfinite(p.tflops) || !(p.tflops > 0))
      fail(file_name, l.number, "the time and TFLOP/s of this row are out of any plausible range");
    sweep.points.push_back(p);
  }
  if (!cols) fail(file_name, 1, "the file is empty: expected " + std::string(kExpected));
  if (sweep.points.empty()) fail(file_name, last, "no rows under the header");
  return sweep;
}

}  // namespace inflect::calib
