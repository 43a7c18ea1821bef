// The Chrome trace writer: feed it a hand-made graph and spans, parse the JSON back and check the
// structure Perfetto relies on (metadata names, X slices in microseconds, wait slices, rank cap).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/io/chrome_trace.hpp"

namespace {

using inflect::core::Time;
using namespace inflect::workload;  // test file, not a header

/// Two ranks, streams "compute" and "comm": on each rank a GEMM (layer 3, micro-batch 1) then a
/// tp all-reduce of 1 MB. A third rank exists in the graph to test the rank cap.
struct Fixture {
  ExecutionGraph g;
  OpId gemm0 = 0, ar0 = 0, gemm1 = 0, ar1 = 0, gemm2 = 0;
  Fixture() {
    g.name = "unit";
    g.set_ranks(3, {0, 1, 2}, {1, 1, 1});
    auto compute = g.stream("compute");
    auto comm = g.stream("comm");
    Kernel k;
    k.name = "qkv_proj";
    k.cost.flops = inflect::core::Flops(2e12);
    k.cost.bytes = inflect::core::Bytes(3e8);
    auto kid = g.add_kernel(k);
    auto grp = g.add_group(Group{{0, 1}, {}});
    Collective c;
    c.kind = CollectiveKind::all_reduce;
    c.dim = ParallelDim::tp;
    c.group = grp;
    c.bytes = inflect::core::Bytes(1e6);
    c.name = "tp_allreduce";
    auto cid = g.add_collective(c);
    gemm0 = g.add_op(0, compute, OpType::compute, kid, Phase::forward, 3, 1, {});
    std::vector<OpId> d0{gemm0};
    ar0 = g.add_op(0, comm, OpType::collective, cid, Phase::forward, 3, 1, d0);
    gemm1 = g.add_op(1, compute, OpType::compute, kid, Phase::forward, 3, 1, {});
    std::vector<OpId> d1{gemm1};
    ar1 = g.add_op(1, comm, OpType::collective, cid, Phase::forward, 3, 1, d1);
    gemm2 = g.add_op(2, compute, OpType::compute, kid, Phase::backward, 3, 1, {});
  }
};

/// Spans: rank 0's GEMM 0..10 us, rank 1's 0..12 us; both all-reduces start at 12 us (rank 0 posted
/// at 10 us so it waited 2 us) and end at 15 us.
void replay(inflect::io::ChromeTraceWriter& w, Fixture& f, bool reversed = false) {
  std::vector<inflect::sim::OpSpan> spans = {
      {f.gemm0, Time::us(0), Time::us(0), Time::us(10)},
      {f.gemm1, Time::us(0), Time::us(0), Time::us(12)},
      {f.ar0, Time::us(10), Time::us(12), Time::us(15)},
      {f.ar1, Time::us(12), Time::us(12), Time::us(15)},
      {f.gemm2, Time::us(0), Time::us(0), Time::us(5)},
  };
  if (reversed) std::reverse(spans.begin(), spans.end());
  w.on_begin(f.g);
  for (const auto& s : spans) w.on_op(f.g, s);
  w.on_end(f.g, Time::us(15));
}

std::vector<nlohmann::json> events_named(const nlohmann::json& t, const std::string& ph) {
  std::vector<nlohmann::json> out;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("chrome_trace: metadata, slices and waits parse back") {
  Fixture f;
  inflect::io::ChromeTraceWriter w(2);
  replay(w, f);
  auto t = nlohmann::json::parse(w.json());
  REQUIRE(t.contains("traceEvents"));
  REQUIRE(t["traceEvents"].is_array());

  // Metadata: a process name per kept rank, a thread name per stream of each.
  int procs = 0, threads = 0;
  for (const auto& e : events_named(t, "M")) {
    if (e["name"] == "process_name") {
      ++procs;
      CHECK(e["args"]["name"] == "rank " + std::to_string(e["pid"].get<int>()));
    }
    if (e["name"] == "thread_name") {
      ++threads;
      std::string n = e["args"]["name"];
      CHECK(n == (e["tid"].get<int>() == 0 ? "compute" : "comm"));
    }
  }
  CHECK(procs == 2);
  CHECK(threads == 4);

  // X slices: 2 GEMMs, 2 all-reduces, 1 wait (rank 0 only). Rank 2 is cut by max_ranks = 2.
  auto xs = events_named(t, "X");
  REQUIRE(xs.size() == 5);
  int waits = 0;
  for (const auto& e : xs) {
    CHECK(e["pid"].get<int>() < 2);
    CHECK(e["ts"].is_number());
    CHECK(e["dur"].is_number());
    std::string name = e["name"];
    if (name.rfind("wait ", 0) == 0) {
      ++waits;
      CHECK(name == "wait tp_allreduce L3 mb1");
      CHECK(e["pid"] == 0);
      CHECK(e["tid"] == 1);
      CHECK(e["ts"].get<double>() == doctest::Approx(10.0));
      CHECK(e["dur"].get<double>() == doctest::Approx(2.0));
    } else if (name == "qkv_proj L3 mb1") {
      CHECK(e["tid"] == 0);
      CHECK(e["args"]["phase"] == "fwd");
      CHECK(e["args"]["flops"].get<double>() == 2e12);
      CHECK(e["args"]["bytes"].get<double>() == 3e8);
      CHECK(e["cat"] == "compute");
    } else {
      CHECK(name == "tp_allreduce L3 mb1");
      CHECK(e["tid"] == 1);
      CHECK(e["ts"].get<double>() == doctest::Approx(12.0));
      CHECK(e["dur"].get<double>() == doctest::Approx(3.0));
      CHECK(e["args"]["bytes"].get<double>() == 1e6);
      CHECK(e["args"]["collective"] == "all_reduce");
      CHECK(e["cat"] == "comm.tp");
    }
  }
  CHECK(waits == 1);
  CHECK(t["otherData"]["total_ranks"] == 3);
  CHECK(t["otherData"]["ranks_in_trace"] == 2);
}

TEST_CASE("chrome_trace: sub-microsecond times are kept as fractions") {
  Fixture f;
  inflect::io::ChromeTraceWriter w;
  w.on_begin(f.g);
  w.on_op(f.g, {f.gemm0, Time::ps(1500), Time::ps(1500), Time::ps(1'501'500)});
  w.on_end(f.g, Time::ps(1'501'500));
  auto xs = events_named(nlohmann::json::parse(w.json()), "X");
  REQUIRE(xs.size() == 1);
  CHECK(xs[0]["ts"].get<double>() == doctest::Approx(0.0015));
  CHECK(xs[0]["dur"].get<double>() == doctest::Approx(1.5));
}

TEST_CASE("chrome_trace: same spans in any order give the same bytes, all ranks when uncapped") {
  Fixture f1, f2;
  inflect::io::ChromeTraceWriter a(0), b(0);
  replay(a, f1);
  replay(b, f2, true);
  CHECK(a.json() == b.json());
  auto xs = events_named(nlohmann::json::parse(a.json()), "X");
  CHECK(xs.size() == 6);  // rank 2's backward GEMM is in
}

TEST_CASE("chrome_trace: before on_end it is an empty trace, write reports io errors") {
  inflect::io::ChromeTraceWriter w;
  auto t = nlohmann::json::parse(w.json());
  CHECK(t["traceEvents"].empty());
  CHECK_THROWS_AS(w.write("/nonexistent-dir/trace.json"), inflect::core::Error);

  Fixture f;
  replay(w, f);
  auto path = std::filesystem::temp_directory_path() / ("inflect_test_trace-" + std::to_string(::getpid()) + ".json");
  w.write(path.string());
  std::ifstream in(path);
  std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(back == w.json());
  std::filesystem::remove(path);
}

TEST_CASE("chrome_trace: power, clock and temperature counters per kept rank, in time order") {
  Fixture f;
  inflect::io::ChromeTraceWriter w(2);  // ranks 0 and 1
  w.on_begin(f.g);
  using inflect::core::Watts, inflect::core::Celsius;
  w.on_device(f.g, {0, Time::us(10), Watts(300), 0, Celsius(50)});
  w.on_device(f.g, {0, Time::us(0), Watts(100), 0, Celsius(40)});
  w.on_device(f.g, {0, Time::us(0), Watts(650), 1620, Celsius(40)});  // same instant: replaces the one before
  w.on_device(f.g, {2, Time::us(0), Watts(650), 1620, Celsius(40)});  // rank 2 is not kept
  w.on_end(f.g, Time::us(15));
  const auto t = nlohmann::json::parse(w.json());
  const auto c = events_named(t, "C");
  REQUIRE(c.size() == 6);  // two samples of rank 0, three tracks each
  CHECK(c[0]["name"] == "power (W)");
  CHECK(c[0]["ts"].get<double>() == 0);
  CHECK(c[0]["args"]["W"].get<double>() == 650);
  CHECK(c[1]["name"] == "clock (MHz)");
  CHECK(c[1]["args"]["MHz"].get<double>() == 1620);
  CHECK(c[2]["name"] == "temperature (C)");
  CHECK(c[3]["ts"].get<double>() == 10);
  CHECK(c[5]["args"]["C"].get<double>() == 50);
  for (const auto& e : c) CHECK(e["pid"] == 0);
}

TEST_CASE("chrome_trace: streamed to a file it has the bytes json() would hold, a bad path is an io error") {
  Fixture f1, f2;
  inflect::io::ChromeTraceWriter held(0), streamed(0);
  replay(held, f1);
  const auto path = std::filesystem::temp_directory_path() / "inflect_test_trace_streamed.json";
  streamed.stream_to(path.string());
  replay(streamed, f2);
  std::ifstream in(path, std::ios::binary);
  const std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(back == held.json());
  streamed.write(path.string());  // already there: a no-op, not an empty trace over it
  std::ifstream again(path, std::ios::binary);
  CHECK(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()) == held.json());
  std::filesystem::remove(path);

  Fixture f3;
  inflect::io::ChromeTraceWriter bad(0);
  bad.stream_to("/nonexistent-dir/trace.json");
  CHECK_THROWS_AS(replay(bad, f3), inflect::core::Error);
}
