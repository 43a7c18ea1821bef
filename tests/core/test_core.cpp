#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "inflect/core/error.hpp"
#include "inflect/core/event_queue.hpp"
#include "inflect/core/strings.hpp"
#include "inflect/core/time.hpp"
#include "inflect/core/units.hpp"
#include "inflect/core/units_parse.hpp"

using namespace inflect::core;

TEST_CASE("time rounds once to integer picoseconds") {
  // 1.5 us = 1,500,000 ps exactly; 0.4 ps rounds down to 0 and 0.6 ps up to 1.
  CHECK(Time::us(1.5).count_ps() == 1500000);
  CHECK(Time::from_seconds(0.4e-12).count_ps() == 0);
  CHECK(Time::from_seconds(0.6e-12).count_ps() == 1);
  CHECK(Time::from_seconds(-1.0) == Time::zero());
  CHECK(Time::from_seconds(1e30) == Time::max());
  CHECK((Time::ps(3) + Time::ps(4)).count_ps() == 7);
}

TEST_CASE("time arithmetic past int64 picoseconds is refused, not wrapped") {
  // int64 ps hold 9.22e18 ps = 9.22e6 s = 106.75 days; 9e6 s + 9e6 s = 1.8e7 s does not fit. A
  // wrapped sum would be negative and put an event in the past (the engine then reported a bogus
  // "deadlock"); the refusal is an input error, since only an extreme input gets there.
  const Time big = Time::from_seconds(9e6);
  CHECK((big + Time::from_seconds(1e5)).seconds() == doctest::Approx(9.1e6));
  try {
    (void)(big + big);
    FAIL("a sum past int64 picoseconds was accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    CHECK(std::string(e.what()).find("simulated time overflow: 9e+06 s + 9e+06 s is past the 107 days") != std::string::npos);
  }
  Time t = Time::max();
  CHECK_THROWS_AS(t += Time::ps(1), Error);
  CHECK_THROWS_AS((void)(Time::zero() - Time::max() - Time::ps(2)), Error);
}

TEST_CASE("units keep dimensions: bytes over bandwidth is seconds") {
  // 900 GB over 450 GB/s = 2 s.
  Seconds s = gb(900) / gb_per_s(450);
  CHECK(s.value() == doctest::Approx(2.0));
  // 400 Gb/s = 50 GB/s.
  CHECK(gbit_per_s(400).value() == doctest::Approx(50e9));
  // Into simulated time: a 1 MiB message over one 450 GB/s NVLink port takes
  // 1,048,576 B / 450e9 B/s = 2.330168...e-6 s = 2,330,168.9 ps, rounded once to 2,330,169 ps.
  const Time t = Time::from(Bytes(1048576) / gb_per_s(450));
  CHECK(t.count_ps() == 2330169);
  // The same one division as on the bare doubles: not a bit apart.
  CHECK((Bytes(1048576) / gb_per_s(450)).value() == 1048576.0 / 450e9);
}

TEST_CASE("units: power, energy and heat") {
  // 700 W for 2 s is 1,400 J; 1,400 J over 2 s is 700 W again.
  const Joules e = Watts(700) * Seconds(2);
  CHECK(e.value() == 1400);
  CHECK((e / Seconds(2)).value() == 700);
  // 700 W through 0.055 C/W holds the die 38.5 C above its coolant; 38.5 C across the same
  // resistance drives 700 W; with 100 J/C of heat capacity the RC constant is 5.5 s.
  const ThermalResistance r(0.055);
  CHECK((Watts(700) * r).value() == 700 * 0.055);
  CHECK((Celsius(38.5) / r).value() == 38.5 / 0.055);
  CHECK((r * HeatCapacity(100)).value() == 0.055 * 100);
  CHECK(Celsius(25) + Watts(700) * r == Celsius(25 + 700 * 0.055));
}

TEST_CASE("unit parsing at the edge") {
  CHECK(parse_bytes("80GiB")->value() == doctest::Approx(80.0 * 1073741824.0));
  CHECK(parse_bytes("80 GB")->value() == doctest::Approx(80e9));
  // A bare number is refused (which unit was meant is a guess), and said to be bare so the
  // message can name the units; 0 is 0 in every unit and stands.
  CHECK_FALSE(parse_bytes("1024"));
  CHECK_FALSE(parse_bandwidth("400"));
  CHECK_FALSE(parse_duration("0.6"));
  CHECK_FALSE(parse_watts("500"));
  CHECK_FALSE(parse_flop_rate("989e12"));
  CHECK(is_bare_number("400"));
  CHECK(is_bare_number(" 0.6 "));
  CHECK_FALSE(is_bare_number("400Gb/s"));
  CHECK_FALSE(is_bare_number("0"));
  CHECK(parse_bytes("0")->value() == 0);
  CHECK(parse_duration("0")->value() == 0);
  CHECK(parse_bytes("1024B")->value() == doctest::Approx(1024));
  CHECK_FALSE(parse_bytes("80 parsecs"));
  CHECK_FALSE(parse_bytes(""));
  CHECK(parse_bandwidth("400Gbps")->value() == doctest::Approx(50e9));
  CHECK(parse_bandwidth("400Gb/s")->value() == doctest::Approx(50e9));
  CHECK(parse_bandwidth("3.35TB/s")->value() == doctest::Approx(3.35e12));
  CHECK(parse_duration("1.5us")->value() == doctest::Approx(1.5e-6));
  CHECK(parse_duration("300ns")->value() == doctest::Approx(3e-7));
  CHECK(parse_flop_rate("989TFLOP/s")->value() == doctest::Approx(989e12));
  CHECK(parse_watts("0.7kW")->value() == doctest::Approx(700));
  CHECK_FALSE(parse_watts("-5W"));
}

TEST_CASE("event queue pops by time, then in push order") {
  EventQueue q;
  q.push(Time::ps(10), 0, 1);
  q.push(Time::ps(5), 0, 2);
  q.push(Time::ps(10), 0, 3);
  q.push(Time::ps(5), 0, 4);
  q.push(Time::ps(1), 0, 5);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().id);
  CHECK(order == std::vector<std::uint32_t>{5, 2, 4, 1, 3});
}

TEST_CASE("event queue survives many interleaved pushes and pops in order") {
  EventQueue q;
  std::uint64_t x = 12345;
  Time last = Time::zero();
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    q.push(last + Time::ps(static_cast<std::int64_t>(x >> 50)), 0, static_cast<std::uint32_t>(i));
    if (i % 3 == 0) {
      Event e = q.pop();
      CHECK(e.time >= last);
      last = e.time;
    }
  }
  while (!q.empty()) {
    Event e = q.pop();
    CHECK(e.time >= last);
    last = e.time;
  }
}

TEST_CASE("event queue pops ties in push order however its buckets are opened") {
  // Times drawn from 300 values (many ties, and more times than the queue's cache of recent
  // times, so buckets of one time get reopened), pushes interleaved with pops; the reference is
  // a stable sort by time of the events still pending, which is what (time, push order) means.
  EventQueue q;
  std::vector<std::pair<std::int64_t, std::uint32_t>> pending;  // (time, id) in push order
  std::uint64_t x = 987654321;
  std::int64_t now = 0;
  std::uint32_t next = 0;
  int mismatches = 0;
  auto pop_one = [&] {
    std::stable_sort(pending.begin(), pending.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const Event e = q.pop();
    if (e.time.count_ps() != pending.front().first || e.id != pending.front().second) ++mismatches;
    now = e.time.count_ps();
    pending.erase(pending.begin());
  };
  for (int i = 0; i < 6000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::int64_t t = now + static_cast<std::int64_t>((x >> 33) % 300);
    q.push(Time::ps(t), 0, next);
    pending.push_back({t, next++});
    if ((x >> 20) % 3 == 0) pop_one();
  }
  while (!q.empty()) pop_one();
  CHECK(mismatches == 0);
  CHECK(pending.empty());
}

TEST_CASE("event queue keeps each event's kind and stamp, and push order across kinds") {
  // The kind rides in the sequence number's low bits: a later push of a smaller kind at the same
  // time must still pop after an earlier push of a larger kind.
  EventQueue q;
  q.push(Time::ps(7), 3, 10, 99);
  q.push(Time::ps(7), 0, 11);
  q.push(Time::ps(7), 15, 12, 5);
  Event a = q.pop(), b = q.pop(), c = q.pop();
  CHECK(a.id == 10);
  CHECK(a.kind() == 3);
  CHECK(a.stamp == 99);
  CHECK(b.id == 11);
  CHECK(b.kind() == 0);
  CHECK(c.id == 12);
  CHECK(c.kind() == 15);
  CHECK(c.stamp == 5);
  CHECK(a.seq() < b.seq());
  CHECK(b.seq() < c.seq());
  CHECK_THROWS(q.push(Time::ps(1), 16, 0));
}

TEST_CASE("did-you-mean suggestions") {
  std::vector<std::string> keys = {"schedule", "sequence_parallel", "recompute", "zero"};
  CHECK(closest_match("schedul", keys) == "schedule");
  CHECK(closest_match("recomput", keys) == "recompute");
  CHECK(closest_match("banana", keys).empty());
  CHECK(edit_distance("kitten", "sitting") == 3);
}
