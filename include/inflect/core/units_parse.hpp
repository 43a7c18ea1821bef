#pragma once
// Parsing of quantities with units, once, at the edge: "80GiB", "3.35TB/s", "400Gbps", "1.5us".
#include <optional>
#include <string_view>

#include "inflect/core/units.hpp"

namespace inflect::core {

/// Every parser below refuses a plain number with no unit (is_bare_number), except 0, which is 0 in
/// any unit.
/// "80GB", "80 GiB", "512MiB", "1e9B"; a plain number (no unit) is refused. Decimal (k, M, G, T) and binary
/// (Ki, Mi, Gi, Ti) prefixes; B = byte.
std::optional<Bytes> parse_bytes(std::string_view s);
/// "900GB/s", "400Gbps" or "400Gb/s" (bits), "3.35TB/s"; a plain number is refused (400: Gb/s or GB/s?).
std::optional<Bandwidth> parse_bandwidth(std::string_view s);
/// "1.5us", "300ns", "2ms", "1s"; a plain number is refused.
std::optional<Seconds> parse_duration(std::string_view s);
/// "989TFLOP/s", "989 TFLOPS", "1.3PFLOP/s"; a plain number is refused.
std::optional<FlopRate> parse_flop_rate(std::string_view s);
/// "700W", "0.7kW"; a plain number is refused.
std::optional<Watts> parse_watts(std::string_view s);
/// "1000km", "800m", "620mi" (statute miles); a plain number is refused.
std::optional<Meters> parse_length(std::string_view s);
/// True when `s` is a positive number with no unit after it ("400", "0.6"): the parsers above
/// refuse it, and the caller's message says which units are accepted.
bool is_bare_number(std::string_view s);

}  // namespace inflect::core
