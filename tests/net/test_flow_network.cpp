#include <doctest/doctest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "inflect/core/time.hpp"
#include "inflect/core/units.hpp"
#include "inflect/net/flow_network.hpp"

using inflect::core::Bandwidth;
using inflect::core::Seconds;
using inflect::core::Time;
using namespace inflect::net;

namespace {

// Completion times are integer picoseconds: every expected time below is worked out to the
// picosecond and compared exactly (tolerance 0 ps), because the figures are chosen so that
// bytes / rate is a whole number of picoseconds.
constexpr Time::rep kExactPs = 0;

using Reschedule = std::vector<std::pair<FlowNetwork::TransferId, Time>>;
using Weights = std::vector<std::pair<LinkId, double>>;

std::vector<Link> links(std::initializer_list<double> caps) {
  std::vector<Link> out;
  for (double c : caps) out.push_back({Bandwidth(c), Seconds(0), LinkClass::scale_up});
  return out;
}

Time ms(double v) { return Time::ps(static_cast<Time::rep>(v * 1e9 + 0.5)); }

// The completion time reported for `id` in `r` (max() if not reported).
Time when(const Reschedule& r, FlowNetwork::TransferId id) {
  for (const auto& [t, at] : r)
    if (t == id) return at;
  return Time::max();
}

bool close_ps(Time a, Time b) {
  const Time::rep d = a.count_ps() - b.count_ps();
  return (d < 0 ? -d : d) <= kExactPs;
}

}  // namespace

TEST_CASE("flow network: one transfer finishes at bytes / capacity, to the picosecond") {
  // 1 MiB = 1048576 B over a 25 GB/s link: 1048576 / 25e9 = 41.94304 us = 41943040 ps exactly.
  // It must complete at that tick, neither a tick early (bytes not yet moved) nor late.
  FlowNetwork net(links({25e9}));
  Weights w{{0, 1.0}};
  auto t = net.start(Time::zero(), w, 1048576.0);
  Reschedule r;
  net.resolve(Time::zero(), r);
  REQUIRE(r.size() == 1);
  CHECK(r[0].first == t);
  CHECK(r[0].second.count_ps() == 41943040);
  CHECK(net.active() == 1);

  // Started later, the same transfer ends the same span later: 10 ns + 41943040 ps.
  FlowNetwork later(links({25e9}));
  auto u = later.start(Time::ns(10), w, 1048576.0);
  Reschedule r2;
  later.resolve(Time::ns(10), r2);
  CHECK(when(r2, u).count_ps() == 10000 + 41943040);

  // A duration that is not a whole tick rounds up, never down: 1000 B at 3 GB/s is
  // 333333.33 ps, so completion is at 333334 ps.
  FlowNetwork odd(links({3e9}));
  auto v = odd.start(Time::zero(), w, 1000.0);
  Reschedule r3;
  odd.resolve(Time::zero(), r3);
  CHECK(when(r3, v).count_ps() == 333334);

  // Beyond the ~106 days int64 picoseconds can hold, completion saturates at Time::max() rather
  // than wrapping: 1e30 B at 1 B/s, started at 1 ms.
  FlowNetwork slow(links({1.0}));
  auto x = slow.start(ms(1), w, 1e30);
  Reschedule r4;
  slow.resolve(ms(1), r4);
  REQUIRE(r4.size() == 1);
  CHECK(r4[0].first == x);
  CHECK(r4[0].second == Time::max());
}

TEST_CASE("flow network: two transfers that start together share the link") {
  // Link 1 GB/s; A = 1e6 B and B = 3e6 B start at 0. Each gets 0.5 GB/s: A would finish at
  // 1e6 / 5e8 = 2 ms, B at 6 ms. At 2 ms A finishes; B has moved 5e8 * 2e-3 = 1e6 B and has 2e6 B
  // left, now at the full 1e9 B/s: 2 ms more, done at 4 ms (4e6 B over 1 GB/s: work-conserving).
  FlowNetwork net(links({1e9}));
  Weights w{{0, 1.0}};
  auto a = net.start(Time::zero(), w, 1e6);
  auto b = net.start(Time::zero(), w, 3e6);
  Reschedule r;
  net.resolve(Time::zero(), r);
  CHECK(r.size() == 2);
  CHECK(close_ps(when(r, a), ms(2)));
  CHECK(close_ps(when(r, b), ms(6)));
  net.finish(a);
  r.clear();
  net.resolve(ms(2), r);
  REQUIRE(r.size() == 1);
  CHECK(close_ps(when(r, b), ms(4)));
}

TEST_CASE("flow network: a transfer joining halfway slows the first, completions follow settled bytes") {
  // Link 1 GB/s. A = 1e6 B starts at 0 alone: due at 1 ms.
  // At 0.5 ms B = 1e6 B starts. A has moved 1e9 * 0.5e-3 = 5e5 B, 5e5 B left at 0.5 GB/s:
  // 1 ms more, A due at 1.5 ms. B at 0.5 GB/s would be due at 0.5 + 2 = 2.5 ms.
  // At 1.5 ms A finishes. B has moved 5e8 * 1e-3 = 5e5 B, 5e5 B left at 1 GB/s: 0.5 ms more,
  // B due at 2.0 ms. (Total 2e6 B over 1 GB/s from 0: the link never idled, 2 ms.)
  FlowNetwork net(links({1e9}));
  Weights w{{0, 1.0}};
  auto a = net.start(Time::zero(), w, 1e6);
  Reschedule r;
  net.resolve(Time::zero(), r);
  CHECK(close_ps(when(r, a), ms(1)));

  auto b = net.start(ms(0.5), w, 1e6);
  r.clear();
  net.resolve(ms(0.5), r);
  CHECK(r.size() == 2);
  CHECK(close_ps(when(r, a), ms(1.5)));
  CHECK(close_ps(when(r, b), ms(2.5)));

  net.finish(a);
  r.clear();
  net.resolve(ms(1.5), r);
  REQUIRE(r.size() == 1);
  CHECK(close_ps(when(r, b), ms(2.0)));
}

TEST_CASE("flow network: link weights and multi-link routes") {
  // Link 0 = 1 GB/s, link 1 = 0.2 GB/s. T crosses both, with weight 1 on link 0 and 0.5 on
  // link 1 (half its reference bytes go there). Its rate r obeys r <= 1e9 and 0.5 r <= 2e8, so
  // r = 4e8 B/s; 1e6 reference bytes take 2.5 ms.
  FlowNetwork net(links({1e9, 2e8}));
  Weights w{{0, 1.0}, {1, 0.5}};
  auto t = net.start(Time::zero(), w, 1e6);
  Reschedule r;
  net.resolve(Time::zero(), r);
  CHECK(close_ps(when(r, t), ms(2.5)));

  // U on link 0 only joins: the two-link example in bytes. Filling raises T and U together;
  // link 1 stops T at 4e8, link 0 would stop both at 5e8: so T = 4e8 (unchanged, not reported),
  // U = 1e9 - 4e8 = 6e8 B/s; 6e5 B take 1 ms, U due at 1 ms + 1 ms = 2 ms.
  auto u = net.start(ms(1), Weights{{0, 1.0}}, 6e5);
  r.clear();
  net.resolve(ms(1), r);
  REQUIRE(r.size() == 1);
  CHECK(close_ps(when(r, u), ms(2)));
}

TEST_CASE("flow network: a transfer over no link completes at once") {
  // No link to share (a copy within one device, or zero bytes): due at the start time itself.
  FlowNetwork net(links({1e9}));
  auto t = net.start(Time::ns(5), Weights{}, 1e6);
  auto z = net.start(Time::ns(5), Weights{{0, 1.0}}, 0.0);
  Reschedule r;
  net.resolve(Time::ns(5), r);
  CHECK(when(r, t) == Time::ns(5));
  CHECK(when(r, z) == Time::ns(5));
  CHECK(net.active() == 0);
  net.finish(t);
  net.finish(z);
  r.clear();
  net.resolve(Time::ns(5), r);
  CHECK(r.empty());
}

TEST_CASE("flow network: stamps invalidate old completions") {
  // The engine keeps (transfer, stamp) with each scheduled completion and drops it when the
  // stamp has moved. A's first completion (1 ms, stamp s0) is superseded when B joins (new
  // completion at 1.5 ms, new stamp); after A finishes its stamp moves again, so even the newest
  // event for A is stale, and a transfer reusing A's id does not revive either of them.
  FlowNetwork net(links({1e9}));
  Weights w{{0, 1.0}};
  auto a = net.start(Time::zero(), w, 1e6);
  Reschedule r;
  net.resolve(Time::zero(), r);
  const auto s0 = net.stamp(a);
  auto b = net.start(ms(0.5), w, 1e6);
  r.clear();
  net.resolve(ms(0.5), r);
  const auto s1 = net.stamp(a);
  CHECK(s1 != s0);
  const auto sb = net.stamp(b);
  net.finish(a);
  const auto s2 = net.stamp(a);
  CHECK(s2 != s1);
  CHECK(s2 != s0);
  // B's rate changes when A leaves, so B's stamp moves at the resolve.
  r.clear();
  net.resolve(ms(1.5), r);
  CHECK(net.stamp(b) != sb);
  // A's id is reused; the first reschedule of the new transfer carries a stamp unlike A's old ones.
  auto c = net.start(ms(1.5), w, 1e6);
  CHECK(c == a);
  r.clear();
  net.resolve(ms(1.5), r);
  CHECK(net.stamp(c) != s0);
  CHECK(net.stamp(c) != s1);
  // Unchanged transfers keep their stamp: nothing touched, nothing rescheduled.
  const auto sc = net.stamp(c);
  r.clear();
  net.resolve(ms(1.6), r);
  CHECK(r.empty());
  CHECK(net.stamp(c) == sc);
}
