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

core::Seconds fiber_latency(core::Meters distance, double detour) {
  const double m = distance.value();
  if (!(m >= 0) || !std::isfinite(m)) bad(fmt::format("fiber distance {} m: expected a distance >= 0", m));
  if (!(detour >= 1) || !std::isfinite(detour))
    bad(fmt::format("route detour {}: expected a factor >= 1 (the fiber's length over the route's)", detour));
  return core::Seconds(m * detour * kFiberGroupIndex / kSpeedOfLight);
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

double go_back_n_efficiency(double packets, double loss) {
  if (!(loss >= 0 && loss < 1)) bad(fmt::format("loss {}: expected a probability in [0, 1)", loss));
  if (!(packets >= 1)) bad(fmt::format("{} packets in flight: expected at least 1", packets));
  return (1 - loss) / (1 + (packets - 1) * loss);
}

const char* to_string(WanTransportKind k) {
  switch (k) {
    case WanTransportKind::ideal: return "ideal";
    case WanTransportKind::tcp: return "tcp";
    case WanTransportKind::rdma: return "rdma";
  }
  return "?";
}

core::Bandwidth transport_limit(const WanTransport& t, core::Seconds one_way, double loss) {
  const core::Seconds rtt = one_way * 2.0;
  switch (t.kind) {
    case WanTransportKind::ideal: return core::Bandwidth(std::numeric_limits<double>::infinity());
    case WanTransportKind::tcp: {
      TcpTransport tcp;
      tcp.window = t.window;
      tcp.mss = t.segment;
      tcp.streams = t.streams;
      tcp.loss = loss;
      return tcp_throughput(tcp, rtt, core::Bandwidth(std::numeric_limits<double>::infinity()));
    }
    case WanTransportKind::rdma: {
      if (!(t.segment.value() > 0)) bad(fmt::format("RDMA MTU {} B: expected more than 0", t.segment.value()));
      const double packets = std::max(1.0, std::ceil(t.window.value() / t.segment.value()));
      return window_limited(t.window, rtt, t.streams) * go_back_n_efficiency(packets, loss);
    }
  }
  return core::Bandwidth(std::numeric_limits<double>::infinity());
}

}  // namespace inflect::net
