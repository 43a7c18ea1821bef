// The WAN transfer's pieces, each worked out by hand (include/inflect/net/wan_transport.hpp).
#include <doctest/doctest.h>

#include <cmath>

#include "inflect/core/error.hpp"
#include "inflect/net/wan_transport.hpp"

using namespace inflect::net;
using inflect::core::Bandwidth;
using inflect::core::Bytes;
using inflect::core::Error;
using inflect::core::Meters;
using inflect::core::Seconds;

TEST_CASE("wan: latency from fiber distance is km x detour x n_g / c") {
  // 1 km: 1000 m x 1.468 / 299,792,458 m/s = 4.8967 us (the "about 4.9 us per km").
  CHECK(fiber_latency(Meters(1e3)).value() == doctest::Approx(4.8967e-6).epsilon(1e-4));
  // 1,000 km straight: 4.8967 ms one way; the route 1.5 times longer: 7.3451 ms.
  CHECK(fiber_latency(Meters(1000e3)).value() == doctest::Approx(4.8967e-3).epsilon(1e-4));
  CHECK(fiber_latency(Meters(1000e3), 1.5).value() == doctest::Approx(7.3451e-3).epsilon(1e-4));
  CHECK(fiber_latency(Meters(0)).value() == 0);
  CHECK_THROWS_AS(fiber_latency(Meters(-1e3)), Error);
  CHECK_THROWS_AS(fiber_latency(Meters(10e3), 0.5), Error);  // a fiber shorter than its route
}

TEST_CASE("wan: a window-limited stream moves one window per round trip") {
  // 16 MiB window, 20 ms RTT: 16,777,216 B / 0.02 s = 838,860,800 B/s (6.71 Gb/s); 8 streams 8x.
  CHECK(window_limited(Bytes(16 * 1048576.0), Seconds(0.02)).value() == doctest::Approx(838860800.0));
  CHECK(window_limited(Bytes(16 * 1048576.0), Seconds(0.02), 8).value() == doctest::Approx(8 * 838860800.0));
  CHECK(std::isinf(window_limited(Bytes(1), Seconds(0)).value()));
  CHECK_THROWS_AS(window_limited(Bytes(0), Seconds(0.02)), Error);
}

TEST_CASE("wan: Mathis et al.'s loss bound, by hand") {
  // MSS 1,448 B, RTT 20 ms, loss 1e-4: (1448 / 0.02) x sqrt(1.5) / sqrt(1e-4)
  //   = 72,400 B/s x 1.2247449 / 0.01 = 8,867,153 B/s (70.9 Mb/s).
  CHECK(mathis_limit(Bytes(1448), Seconds(0.02), 1e-4).value() == doctest::Approx(8867153.0).epsilon(1e-6));
  // A quarter of the loss doubles it; twice the RTT halves it.
  CHECK(mathis_limit(Bytes(1448), Seconds(0.02), 0.25e-4).value() == doctest::Approx(2 * 8867153.0).epsilon(1e-6));
  CHECK(mathis_limit(Bytes(1448), Seconds(0.04), 1e-4).value() == doctest::Approx(8867153.0 / 2).epsilon(1e-6));
  CHECK(std::isinf(mathis_limit(Bytes(1448), Seconds(0.02), 0).value()));
  CHECK_THROWS_AS(mathis_limit(Bytes(1448), Seconds(0.02), 1.0), Error);
}

TEST_CASE("wan: a TCP transfer gets the least of its share, its windows and the loss bound") {
  TcpTransport t;
  t.window = Bytes(16 * 1048576.0);
  t.streams = 8;
  t.loss = 1e-4;
  const Seconds rtt(0.02);
  // lossy: 8 x min(838.9 MB/s, 8.867 MB/s) = 70.94 MB/s, far under a 100 Gb/s (12.5 GB/s) share
  CHECK(tcp_throughput(t, rtt, Bandwidth(12.5e9)).value() == doctest::Approx(8 * 8867153.0).epsilon(1e-6));
  // clean: 8 windows per round trip, 6.71 GB/s
  t.loss = 0;
  CHECK(tcp_throughput(t, rtt, Bandwidth(12.5e9)).value() == doctest::Approx(8 * 838860800.0));
  // a 1 GB/s share is what binds
  CHECK(tcp_throughput(t, rtt, Bandwidth(1e9)).value() == doctest::Approx(1e9));
  // more streams, a larger window or less loss never slow it
  const double base = tcp_throughput(t, rtt, Bandwidth(12.5e9)).value();
  t.streams = 16;
  CHECK(tcp_throughput(t, rtt, Bandwidth(12.5e9)).value() >= base);
  t.streams = 0;
  CHECK_THROWS_AS(tcp_throughput(t, rtt, Bandwidth(1e9)), Error);
}

TEST_CASE("wan: go-back-N resends the window after a loss") {
  // W = 1,024 packets in flight, p = 1e-4: (1 - 1e-4) / (1 + 1023e-4) = 0.9999 / 1.1023 = 0.90711.
  CHECK(go_back_n_efficiency(1024, 1e-4) == doctest::Approx(0.9999 / 1.1023));
  CHECK(go_back_n_efficiency(1024, 0) == 1);
  CHECK(go_back_n_efficiency(1, 0.1) == doctest::Approx(0.9));  // stop-and-wait: only the lost packet
  CHECK_THROWS_AS(go_back_n_efficiency(0.5, 0.1), Error);
}

TEST_CASE("wan: a transport's limit on one transfer, by hand") {
  const Seconds one_way(0.005);  // 1,000 km of straight fiber, near enough: RTT 10 ms
  WanTransport ideal;
  CHECK(std::isinf(transport_limit(ideal, one_way, 0.01).value()));
  // NCCL over RoCE, 4 MiB per connection, 16 channels: 16 x 4,194,304 B / 0.01 s = 6.711 GB/s.
  WanTransport rdma{WanTransportKind::rdma, Bytes(4 * 1048576.0), 16, Bytes(4096)};
  CHECK(transport_limit(rdma, one_way, 0).value() == doctest::Approx(16 * 4194304.0 / 0.01));
  // 1e-5 loss, 1,024 packets of 4 KiB in flight: x (1 - 1e-5) / (1 + 1023e-5) = x 0.98986.
  CHECK(transport_limit(rdma, one_way, 1e-5).value() ==
        doctest::Approx(16 * 4194304.0 / 0.01 * (1 - 1e-5) / (1 + 1023e-5)));
  // TCP, 8 streams of 16 MiB, loss 1e-4: Mathis binds at 8 x (1448 / 0.01) x 1.2247 / 0.01 = 14.19 MB/s.
  WanTransport tcp{WanTransportKind::tcp, Bytes(16 * 1048576.0), 8, Bytes(1448)};
  CHECK(transport_limit(tcp, one_way, 1e-4).value() == doctest::Approx(8 * 1448 / 0.01 * std::sqrt(1.5) / 0.01));
  // Farther never helps: twice the latency halves both limits.
  CHECK(transport_limit(rdma, one_way * 2.0, 0).value() == doctest::Approx(transport_limit(rdma, one_way, 0).value() / 2));
}
