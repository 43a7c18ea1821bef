#include "inflect/net/wan_transport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "inflect/core/error.hpp"

namespace inflect::net {

namespace {
[[noreturn]] void bad(const std::string& what) { throw core::Error(core::ErrorKind::input, what); }
}  // namespace

core::Seconds fiber_latency(double km, double detour) {
  if (!(km >= 0) || !std::isfinite(km)) bad(fmt::format("fiber distance {} km: expected a distance >= 0", km));
  if (!(detour >= 1) || !std::isfinite(detour))
    bad(fmt::format("route detour {}: expected a factor >= 1 (the fiber's length over the route's)", detour));
  return core::Seconds(km * 1000.0 * detour * kFiberGroupIndex / kSpeedOfLight);
}

core::Bandwidth window_limited(core::Bytes window, core::Seconds rtt, int streams) {
  if (!(window.value() > 0)) bad(fmt::format("TCP window {} B: expected more than 0", window.value()));
  if (streams < 1) bad(fmt::format("{} streams: expected at least 1", streams));
  if (!(rtt.value() > 0)) return core::Bandwidth(std::numeric_limits<double>::infinity());
  return core::Bandwidth(streams * window.value() / rtt.value());
}

core::Bandwidth mathis_limit(core::Bytes mss, core::Seconds rtt, double loss) {
  if (!(loss >= 0 && loss < 1)) bad(fmt::format("loss {}: expected a probability in [0, 1)", loss));
  if (!(mss.value() > 0)) bad(fmt::format("MSS {} B: expected more than 0", mss.value()));
  if (loss == 0 || !(rtt.value() > 0)) return core::Bandwidth(std::numeric_limits<double>::infinity());
  return core::Bandwidth(mss.value() / rtt.value() * std::sqrt(1.5) / std::sqrt(loss));
}

core::Bandwidth tcp_throughput(const TcpTransport& t, core::Seconds rtt, core::Bandwidth link_share) {
  if (t.streams < 1) bad(fmt::format("{} streams: expected at least 1", t.streams));
  const double per_stream = std::min(window_limited(t.window, rtt).value(), mathis_limit(t.mss, rtt, t.loss).value());
  return core::Bandwidth(std::min(link_share.value(), per_stream * t.streams));
}

}  // namespace inflect::net
