#include "inflect/study/thresholds.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <system_error>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/io/report_fields.hpp"

namespace inflect::study {

namespace {

constexpr std::string_view kForm =
    "METRIC:CHANGE, e.g. step_time_s:+2% (fails above +2%), tokens_per_s:-1% (below -1%), mfu:1% (either way), "
    "memory.peak_bytes:+0 (any increase; an amount without % is in the metric's unit)";

// The numeric figures of report.json and their aliases: what a threshold may name.
std::vector<std::string> metric_names() {
  std::vector<std::string> names;
  for (const auto& f : io::report_fields()) {
    if (f.unit.empty() || f.identity) continue;
    names.emplace_back(f.key);
    for (const auto& a : f.aliases) names.emplace_back(a.name);
  }
  return names;
}

[[noreturn]] void fail(std::string_view where, std::string_view text, const std::string& why) {
  throw core::Error(core::ErrorKind::input, fmt::format("{} '{}': {}; expected {}", where, text, why, kForm));
}

}  // namespace

Threshold parse_threshold(std::string_view text, std::string_view where) {
  Threshold t;
  t.text = std::string(text);
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) fail(where, text, "no ':' between the metric and the change");
  t.metric = std::string(text.substr(0, colon));
  const io::FieldName field = io::find_field(t.metric);
  if (!field.field) {
    const auto names = metric_names();
    const auto near = core::closest_match(t.metric, names);
    throw core::Error(core::ErrorKind::input,
                      fmt::format("{} '{}': unknown metric '{}'{}; a metric is a numeric key of report.json "
                                  "(docs/report.md), e.g. step_time_s, tokens_per_s, mfu, memory.peak_bytes, "
                                  "power.avg_device_w, power.energy_per_step_j",
                                  where, text, t.metric, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
  }
  if (field.field->unit.empty() || field.field->identity)
    fail(where, text, fmt::format("'{}' is not a measured figure (it has no unit)", t.metric));

  std::string_view change = text.substr(colon + 1);
  if (change.starts_with("+-")) {
    change.remove_prefix(2);
  } else if (change.starts_with("\u00b1")) {
    change.remove_prefix(std::string_view("\u00b1").size());
  } else if (change.starts_with('+')) {
    t.direction = Direction::increase;
    change.remove_prefix(1);
  } else if (change.starts_with('-')) {
    t.direction = Direction::decrease;
    change.remove_prefix(1);
  }
  t.relative = change.ends_with('%');
  if (t.relative) change.remove_suffix(1);
  if (change.empty()) fail(where, text, "no amount after the metric");
  double amount = 0;
  const auto [end, ec] = std::from_chars(change.data(), change.data() + change.size(), amount);
  if (ec != std::errc{} || end != change.data() + change.size() || !std::isfinite(amount) || amount < 0)
    fail(where, text, fmt::format("'{}' is not a non-negative number", change));
  t.amount = t.relative ? amount / 100 : amount;
  return t;
}

std::vector<Threshold> read_thresholds(const io::Node& fail_on) {
  std::vector<Threshold> out;
  const auto where = [](const io::Node& n) {
    const auto w = n.where();
    return fmt::format("{}:{}: fail_on", w.file, w.line);
  };
  if (fail_on.is_map()) {
    for (const auto& kv : fail_on.raw()) {
      // A null or non-text key (`: 5%`, `[a]: 1%`) names no metric; child() could not find it again.
      if (!kv.first.IsScalar() || kv.first.Scalar().empty())
        fail_on.fail("every fail_on key is a metric name (a report.json key such as step_time_s)");
      const io::Node value = fail_on.child(kv.first.Scalar());
      if (!value.is_scalar()) value.fail("expected a change such as +2%, -1%, 1% or +0");
      out.push_back(parse_threshold(fmt::format("{}:{}", kv.first.Scalar(), value.as_string()), where(value)));
    }
  } else if (fail_on.is_sequence()) {
    for (const auto& item : fail_on.items()) {
      if (!item.is_scalar()) item.fail("expected METRIC:CHANGE, e.g. step_time_s:+2%");
      out.push_back(parse_threshold(item.as_string(), where(item)));
    }
  } else {
    fail_on.fail("fail_on is a map (metric: change) or a list of METRIC:CHANGE strings");
  }
  return out;
}

std::vector<Threshold> load_thresholds_file(const std::string& path) {
  const io::Node root = io::load_yaml_file(path);
  io::MapReader m(root);
  auto out = read_thresholds(m.required("fail_on"));
  m.finish();
  return out;
}

std::optional<double> relative_change(double base, double now) {
  if (base == 0) return now == 0 ? std::optional<double>(0.0) : std::nullopt;
  return (now - base) / std::abs(base);
}

bool crosses(const Threshold& t, double base, double now) {
  double move = now - base;  // in the metric's unit
  if (t.relative) {
    const auto rel = relative_change(base, now);
    move = rel ? *rel : (now > base ? INFINITY : -INFINITY);
  }
  switch (t.direction) {
    case Direction::increase: return move > t.amount;
    case Direction::decrease: return move < -t.amount;
    case Direction::either: return std::abs(move) > t.amount;
  }
  return false;
}

}  // namespace inflect::study
