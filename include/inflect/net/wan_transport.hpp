#pragma once
// What limits one transfer across a WAN link besides its share of the link (issue 23, part 2):
// the light's time in the fiber, and the transport. The functions are the model's pieces, pure,
// so that each is checked by hand (tests/net/test_wan_transport.cpp); the network model applies
// them to transfers that cross sites.
//
//   latency      one way: route km x detour x the fiber's group delay (c / n_g). n_g = 1.468 for
//                standard single-mode fiber (ITU-T G.652) at 1550 nm gives 4.90 us/km, the
//                figure the issue quotes ("light in fiber takes about 4.9 us per km").
//   window       a window-limited stream moves at most window / RTT (one window per round trip),
//                `streams` of them side by side.
//   rdma         an RDMA transport over a long-haul link (NCCL over RoCE): each connection keeps
//                at most its buffer in flight (NCCL's NCCL_BUFFSIZE, 4 MiB by default, split in
//                NCCL_STEPS = 8 slots), so it moves one buffer per round trip, times the channels
//                that cross; under loss RoCE's go-back-N resends what was in flight after the
//                lost packet: efficiency (1 - p) / (1 + (W - 1) p) for W packets in flight
//                (Bertsekas and Gallager, Data Networks, 2nd ed., section 2.4.2).
//   loss         TCP congestion avoidance under random loss p: at most (MSS / RTT) x C / sqrt(p),
//                C = sqrt(3/2) (Mathis, Semke, Mahdavi, Ott, "The macroscopic behavior of the TCP
//                congestion avoidance algorithm", CCR 27(3), 1997, eq. 3: periodic loss, one
//                loss per cycle, delayed ACKs off).
// A TCP-like transfer gets min(its share of the link, streams x min(window / RTT, the loss bound)).
#include "inflect/core/units.hpp"

namespace inflect::net {

/// Group delay of standard single-mode fiber: the group index n_g = 1.468 at 1550 nm (G.652).
inline constexpr double kFiberGroupIndex = 1.468;
inline constexpr double kSpeedOfLight = 299'792'458.0;  // m/s

/// One-way latency of a route `distance` long whose fiber runs `detour` times the route (>= 1).
core::Seconds fiber_latency(core::Meters distance, double detour = 1.0);

/// Throughput of `streams` window-limited streams of `window` bytes each over round trip `rtt`.
core::Bandwidth window_limited(core::Bytes window, core::Seconds rtt, int streams = 1);

/// Mathis et al.'s bound for one TCP stream with segments of `mss` bytes, round trip `rtt`, loss
/// probability `loss` (0 < loss < 1): (mss / rtt) x sqrt(3/2) / sqrt(loss). Unbounded (infinity)
/// at loss 0.
core::Bandwidth mathis_limit(core::Bytes mss, core::Seconds rtt, double loss);

struct TcpTransport {
  core::Bytes window;  // per stream (the socket buffer, or the receiver's advertised window)
  core::Bytes mss = core::Bytes(1448);  // a 1500-byte MTU less IP and TCP headers with timestamps
  int streams = 1;
  double loss = 0;  // packet loss probability on the path
};

/// What a TCP-like transfer moves at: the least of its share of the link, the window limit and
/// the loss bound (the last two per stream, times its streams).
core::Bandwidth tcp_throughput(const TcpTransport& t, core::Seconds rtt, core::Bandwidth link_share);

/// Go-back-N's goodput fraction with `packets` in flight and per-packet loss `loss` (0 <= loss < 1):
/// (1 - loss) / (1 + (packets - 1) loss).
double go_back_n_efficiency(double packets, double loss);

/// How transfers cross one WAN link (`cluster.wan[].transport`).
enum class WanTransportKind : unsigned char {
  ideal,  // only the link's share limits a transfer
  tcp,    // window-limited TCP streams, Mathis et al.'s bound under loss
  rdma,   // NCCL over long-haul RoCE: one buffer per connection per round trip, go-back-N under loss
};
const char* to_string(WanTransportKind k);

struct WanTransport {
  WanTransportKind kind = WanTransportKind::ideal;
  core::Bytes window;    // tcp: per stream; rdma: per connection (NCCL_BUFFSIZE)
  int streams = 1;       // tcp: parallel streams per transfer; rdma: connections (NCCL channels) per transfer
  core::Bytes segment;   // tcp: the MSS (1448 B); rdma: the MTU's payload (4096 B)
};

/// The most one transfer moves across a link of one-way latency `one_way` (the round trip is twice
/// that) and packet loss `loss` with transport `t`: infinity for ideal.
core::Bandwidth transport_limit(const WanTransport& t, core::Seconds one_way, double loss);

}  // namespace inflect::net
