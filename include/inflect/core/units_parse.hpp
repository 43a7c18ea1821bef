#pragma once
// Parsing of quantities with units, once, at the edge: "80GiB", "3.35TB/s", "400Gbps", "1.5us".
#include <optional>
#include <string_view>

#include "inflect/core/units.hpp"

namespace inflect::core {

/// "80GB", "80 GiB", "512MiB", "1e9" (plain numbers are bytes). Decimal (k, M, G, T) and binary
/// (Ki, Mi, Gi, Ti) prefixes; B = byte.
std::optional<Bytes> parse_bytes(std::string_view s);
/// "900GB/s", "400Gbps" or "400Gb/s" (bits), "3.35TB/s"; plain numbers are bytes per second.
std::optional<Bandwidth> parse_bandwidth(std::string_view s);
/// "1.5us", "300ns", "2ms", "1s"; plain numbers are seconds.
std::optional<Seconds> parse_duration(std::string_view s);
/// "989TFLOP/s", "989 TFLOPS", "1.3PFLOP/s"; plain numbers are FLOP/s.
std::optional<FlopRate> parse_flop_rate(std::string_view s);
/// "700W", "0.7kW"; plain numbers are watts.
std::optional<Watts> parse_watts(std::string_view s);

}  // namespace inflect::core
