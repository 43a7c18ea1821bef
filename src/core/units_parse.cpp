#include "inflect/core/units_parse.hpp"

#include <cctype>
#include <charconv>
#include <string>

namespace inflect::core {
namespace {

struct Split {
  double number = 0;
  std::string unit;  // whitespace removed
};

std::optional<Split> split_number(std::string_view s) {
  std::string t;
  for (char c : s) if (!std::isspace(static_cast<unsigned char>(c))) t += c;
  if (t.empty()) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr == t.data()) return std::nullopt;
  if (!(v >= 0) || v > 1e300) return std::nullopt;
  std::string unit(ptr, static_cast<std::size_t>(t.data() + t.size() - ptr));
  // A bare 0 is 0 in every unit: nothing to guess, so it stands for the base unit.
  if (unit.empty() && v == 0) unit = "zero";
  return Split{v, unit};
}

// Multiplier of a decimal or binary prefix at the start of `u`; advances past it.
double take_prefix(std::string& u) {
  struct P { const char* p; double m; };
  static const P prefixes[] = {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0},
                               {"Ti", 1099511627776.0}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6},
                               {"G", 1e9}, {"T", 1e12}, {"P", 1e15}};
  for (const auto& p : prefixes) {
    std::string_view sp(p.p);
    if (u.size() > sp.size() && u.compare(0, sp.size(), sp) == 0) {
      u.erase(0, sp.size());
      return p.m;
    }
  }
  return 1.0;
}

}  // namespace

std::optional<Bytes> parse_bytes(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return std::nullopt;
  if (sp->unit.empty()) return std::nullopt;  // a bare number: which unit was meant is a guess
  if (sp->unit == "zero") return Bytes(0);
  std::string u = sp->unit;
  double m = take_prefix(u);
  if (u != "B") return std::nullopt;
  return Bytes(sp->number * m);
}

std::optional<Bandwidth> parse_bandwidth(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return std::nullopt;
  if (sp->unit.empty()) return std::nullopt;  // 400 could be Gb/s or GB/s: refuse to guess
  if (sp->unit == "zero") return Bandwidth(0);
  std::string u = sp->unit;
  double m = take_prefix(u);
  if (u == "B/s" || u == "Bps") return Bandwidth(sp->number * m);
  if (u == "b/s" || u == "bps") return Bandwidth(sp->number * m / 8.0);
  return std::nullopt;
}

std::optional<Seconds> parse_duration(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return std::nullopt;
  const std::string& u = sp->unit;
  if (u == "s" || u == "zero") return Seconds(sp->number);  // a bare number (0.6: us? s?) is refused
  if (u == "ms") return Seconds(sp->number * 1e-3);
  if (u == "us") return Seconds(sp->number * 1e-6);
  if (u == "ns") return Seconds(sp->number * 1e-9);
  if (u == "ps") return Seconds(sp->number * 1e-12);
  return std::nullopt;
}

std::optional<FlopRate> parse_flop_rate(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return std::nullopt;
  if (sp->unit.empty()) return std::nullopt;
  if (sp->unit == "zero") return FlopRate(0);
  std::string u = sp->unit;
  double m = take_prefix(u);
  if (u == "FLOP/s" || u == "FLOPS" || u == "flop/s") return FlopRate(sp->number * m);
  return std::nullopt;
}

std::optional<Watts> parse_watts(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return std::nullopt;
  if (sp->unit.empty()) return std::nullopt;
  if (sp->unit == "zero") return Watts(0);
  std::string u = sp->unit;
  double m = take_prefix(u);
  if (u == "W") return Watts(sp->number * m);
  return std::nullopt;
}

std::optional<Meters> parse_length(std::string_view s) {
  auto sp = split_number(s);
  if (!sp) return std::nullopt;
  const std::string& u = sp->unit;
  if (u == "zero") return Meters(0);
  if (u == "m") return Meters(sp->number);
  if (u == "km") return Meters(sp->number * 1e3);
  if (u == "mi") return Meters(sp->number * 1609.344);  // the international statute mile
  return std::nullopt;
}

bool is_bare_number(std::string_view s) {
  auto sp = split_number(s);
  return sp && sp->unit.empty();
}

}  // namespace inflect::core
