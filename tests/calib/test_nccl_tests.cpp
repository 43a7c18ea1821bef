// calib::parse_nccl_tests on the shipped measurements (calibration/traces/nccl/, each file's rows
// counted by hand below) and on small inline files for the rules and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "inflect/calib/nccl_tests.hpp"
#include "inflect/core/error.hpp"
#include "inflect/net/collective.hpp"

using inflect::calib::NcclCollective;
using inflect::calib::NcclRow;
using inflect::calib::NcclTable;
using inflect::calib::parse_nccl_tests;
using inflect::core::Bytes;
using inflect::core::Error;
using inflect::core::ErrorKind;

namespace {

// Figures are read from decimal text and scaled once (us -> s, GB/s -> B/s): a few ulps.
constexpr double kRel = 1e-12;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string trace(const std::string& name) {
  std::ifstream in(std::string(INFLECT_SOURCE_DIR) + "/calibration/traces/nccl/" + name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing trace " << name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

NcclTable shipped(const std::string& name) { return parse_nccl_tests(trace(name), name); }

double us(const std::optional<inflect::core::Seconds>& t) { return t ? t->value() * 1e6 : -1; }
double gbs(const std::optional<inflect::core::Bandwidth>& b) { return b ? b->value() / 1e9 : -1; }

// The located message parse_nccl_tests throws for `text`, or "" if it parses.
std::string error_of(const std::string& text, const std::string& file = "bad_allreduce.txt") {
  try {
    (void)parse_nccl_tests(text, file);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::input);
    return inflect::core::format_error(e);
  }
  return "";
}

const std::string kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
    "#wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";

}  // namespace

TEST_CASE("nccl-tests text: DGX H100 all-reduce, 8 ranks") {
  // 38 lines: the provenance comment, 3 header lines, 32 rows (8 B .. 16 GiB, 2^3 .. 2^34), 2 footer lines.
  const auto t = shipped("h100x8_allreduce_nvidia-dgxc-benchmarking.txt");
  CHECK(t.format == "nccl-tests text");
  CHECK(t.rows.size() == 32);
  CHECK(t.ranks == 8);  // "GPU count: 8" in the comment
  CHECK(t.source_comment.starts_with("source: NVIDIA/dgxc-benchmarking"));
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    CHECK(t.rows[i].kind == NcclCollective::all_reduce);  // all_reduce_perf in the comment
    CHECK(t.rows[i].size.value() == std::exp2(3.0 + static_cast<double>(i)));
  }
  // Line 36: 17179869184 4294967296 float sum -1  62648 274.23 479.90 0  62636 274.28 479.99 0
  const NcclRow& last = t.rows.back();
  CHECK(last.line == 36);
  CHECK(last.size.value() == 17179869184.0);
  CHECK(last.count == 4294967296.0);
  CHECK(last.type == "float");
  CHECK(last.redop == "sum");
  CHECK(last.root == -1);
  CHECK(us(last.out_of_place.time) == doctest::Approx(62648).epsilon(kRel));
  CHECK(gbs(last.out_of_place.algbw) == doctest::Approx(274.23).epsilon(kRel));
  CHECK(gbs(last.out_of_place.busbw) == doctest::Approx(479.90).epsilon(kRel));
  CHECK(us(last.in_place.time) == doctest::Approx(62636).epsilon(kRel));
  CHECK(&last.best() == &last.out_of_place);
}

TEST_CASE("nccl-tests text: the other shipped tables") {
  SUBCASE("Nebius 2x8 H100 all-reduce: header without '#', 16 ranks") {
    // 37 lines: comment, 3 header lines (no leading '#'), 31 rows (8 B .. 8 GiB, 2^3 .. 2^33), 2 footer lines.
    const auto t = shipped("h100x16_allreduce_nebius-ib_dstack.txt");
    CHECK(t.rows.size() == 31);
    CHECK(t.rows.front().kind == NcclCollective::all_reduce);
    CHECK(t.ranks == 16);
    // Line 35: 8589934592 2147483648 float sum -1  34448.4 249.36 467.54 0  34381.0 249.85 468.46 0
    CHECK(t.rows.back().line == 35);
    CHECK(t.rows.back().size.value() == 8.0 * kGiB);
    CHECK(us(t.rows.back().out_of_place.time) == doctest::Approx(34448.4).epsilon(kRel));
    CHECK(gbs(t.rows.back().out_of_place.busbw) == doctest::Approx(467.54).epsilon(kRel));
    CHECK(us(t.rows.front().out_of_place.time) == doctest::Approx(45.72).epsilon(kRel));  // line 5, 8 B
  }
  SUBCASE("GCP A3 Mega 2x8 H100 all-gather: banner line, 16 ranks") {
    // 18 lines: comment, nThread banner, 3 header lines, 11 rows (8 MiB .. 8 GiB), 2 footer lines.
    const auto t = shipped("h100x16_allgather_gcp-a3mega-tcpxo_dstack.txt");
    CHECK(t.rows.size() == 11);
    CHECK(t.rows.front().kind == NcclCollective::all_gather);
    CHECK(t.ranks == 16);
    // Line 16: 8589934592 134217728 float none -1  42713 201.11 188.54 N/A  42701 201.16 188.59 N/A
    const NcclRow& r = t.rows.back();
    CHECK(r.line == 16);
    CHECK(r.size.value() == 8.0 * kGiB);
    CHECK(r.redop == "none");
    CHECK(us(r.out_of_place.time) == doctest::Approx(42713).epsilon(kRel));
    CHECK(gbs(r.out_of_place.busbw) == doctest::Approx(188.54).epsilon(kRel));
    CHECK(us(r.in_place.time) == doctest::Approx(42701).epsilon(kRel));
  }
  SUBCASE("li-plus A100 send/recv, N/A in #wrong, 8 ranks") {
    // 8 lines: comment, 3 header lines, 4 rows (128 MiB .. 1 GiB).
    const auto t = shipped("a100x8_sendrecv_li-plus-playground.txt");
    CHECK(t.rows.size() == 4);
    CHECK(t.rows.front().kind == NcclCollective::send_recv);
    CHECK(t.ranks == 8);  // the comment's GPU count (send/recv's busbw = algbw says nothing of n)
    // Line 5: 134217728 33554432 float sum -1  1211.2 110.81 110.81 0  1211.8 110.76 110.76 N/A
    CHECK(t.rows.front().line == 5);
    CHECK(t.rows.front().size.value() == 134217728.0);
    CHECK(us(t.rows.front().out_of_place.time) == doctest::Approx(1211.2).epsilon(kRel));
    CHECK(gbs(t.rows.front().out_of_place.busbw) == doctest::Approx(110.81).epsilon(kRel));
    CHECK(us(t.rows.front().in_place.time) == doctest::Approx(1211.8).epsilon(kRel));
  }
  SUBCASE("MI300X rccl-tests all-reduce, asterisk note in the footer, 8 ranks") {
    // 38 lines: comment, 3 header lines, 31 rows (8 B .. 8 GiB), 3 footer lines.
    const auto t = shipped("mi300x_x8_allreduce_hisohara-ai-scripts-aac8.txt");
    CHECK(t.rows.size() == 31);
    CHECK(t.rows.front().kind == NcclCollective::all_reduce);
    CHECK(t.ranks == 8);
    // Line 22: 1048576 262144 float sum -1  28.39 36.94 64.64 0  28.04 37.40 65.45 0
    const NcclRow& r = t.rows[17];
    CHECK(r.line == 22);
    CHECK(r.size.value() == 1048576.0);
    CHECK(us(r.out_of_place.time) == doctest::Approx(28.39).epsilon(kRel));
    CHECK(gbs(r.out_of_place.busbw) == doctest::Approx(64.64).epsilon(kRel));
  }
}

TEST_CASE("markdown busbw: Azure ND A100 v4, sizes snapped to powers of two") {
  // 27 lines: comment, header, separator, 24 rows (1K .. 8G).
  const auto t = shipped("a100x8_allreduce_busbw-only_azure-nd_a100_v4.txt");
  CHECK(t.format == "markdown busbw");
  CHECK(t.rows.size() == 24);
  CHECK(t.ranks == 8);
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const NcclRow& r = t.rows[i];
    CHECK(r.kind == NcclCollective::all_reduce);  // "allreduce" in the file name
    // 1K, 2K, ... 65K, 132K, 256K, 524K, 1M, ... 33M, 67M, ... 1G ... 8G: 2^10 .. 2^33.
    CHECK(r.size.value() == std::exp2(10.0 + static_cast<double>(i)));
    // The comment says "in-place bus bandwidth": the values are the in-place measure, busbw only.
    CHECK(r.out_of_place.empty());
    CHECK(r.in_place.busbw);
    CHECK_FALSE(r.in_place.time);
    CHECK(&r.best() == &r.in_place);
    CHECK(r.note == "ND A100 V4 (GB/s)");
  }
  // Line 11: | 132K | 5.15 |  -> 131072 bytes.
  CHECK(t.rows[7].line == 11);
  CHECK(t.rows[7].size.value() == 131072.0);
  CHECK(gbs(t.rows[7].in_place.busbw) == doctest::Approx(5.15).epsilon(kRel));
  // Time from busbw: all-reduce over 8 ranks, factor 2*7/8 = 1.75; 8 GiB at 231.58 GB/s busbw is
  // 8 GiB / (231.58e9 / 1.75) = 0.0649130... s.
  const auto time = inflect::calib::nccl_row_time(t.rows.back(), t.ranks);
  REQUIRE(time);
  CHECK(time->value() == doctest::Approx(8.0 * kGiB * 1.75 / 231.58e9).epsilon(kRel));
  CHECK_FALSE(inflect::calib::nccl_row_time(t.rows.back(), std::nullopt));  // the factor needs n
}

TEST_CASE("markdown summary: H200 at 16 GiB, collective per row, algorithm and environment kept") {
  // 7 lines: comment, header, separator, 4 rows; the size is the comment's -b 16G -e 16G.
  const auto t = shipped("h200x8_allreduce-allgather-reducescatter_16GiB_ml-engineering.txt");
  CHECK(t.format == "markdown summary");
  REQUIRE(t.rows.size() == 4);
  CHECK(t.ranks == 8);
  const NcclCollective kinds[] = {NcclCollective::all_reduce, NcclCollective::all_reduce, NcclCollective::all_gather,
                                  NcclCollective::reduce_scatter};
  const char* algos[] = {"nvls", "ring", "ring", "ring"};
  const char* notes[] = {"NCCL_NVLS_ENABLE=1", "NCCL_NVLS_ENABLE=0", "", ""};
  const double busbw[] = {480.0, 367.2, 361.4, 362.9};
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(t.rows[i].line == 4 + i);
    CHECK(t.rows[i].size.value() == 16.0 * kGiB);
    CHECK(t.rows[i].kind == kinds[i]);
    CHECK(t.rows[i].algorithm == algos[i]);
    CHECK(t.rows[i].note == notes[i]);
    CHECK(gbs(t.rows[i].best().busbw) == doctest::Approx(busbw[i]).epsilon(kRel));
  }
}

TEST_CASE("nccl-tests json: the constructed example") {
  const std::string name = "examples/h100x8_all_reduce_perf_constructed.json";
  const auto t = shipped(name);
  CHECK(t.format == "nccl-tests json");
  REQUIRE(t.rows.size() == 6);
  CHECK(t.ranks == 8);  // 8 devices (one per process) x nthreads 1 x ngpus 1
  for (const auto& r : t.rows) CHECK(r.kind == NcclCollective::all_reduce);  // args[0] is all_reduce_perf
  const NcclRow& r = t.rows.front();
  CHECK(r.size.value() == 1048576.0);
  CHECK(r.count == 262144.0);
  CHECK(r.type == "float");
  CHECK(r.redop == "sum");
  CHECK(r.root == -1);  // written "    -1"
  CHECK(us(r.out_of_place.time) == doctest::Approx(27.37).epsilon(kRel));
  CHECK(gbs(r.out_of_place.algbw) == doctest::Approx(38.31).epsilon(kRel));
  CHECK(gbs(r.out_of_place.busbw) == doctest::Approx(67.04).epsilon(kRel));
  CHECK(us(r.in_place.time) == doctest::Approx(26.93).epsilon(kRel));
  CHECK(t.rows.back().size.value() == kGiB);
}

TEST_CASE("nccl-tests json: one process of 8 GPUs, nan and null measures, errors at the key") {
  const std::string one_process = R"({"version": 3, "args": ["./build/all_gather_perf", "-g", "8"],
    "config": {"nthreads": 1, "ngpus": 8},
    "devices": [{"rank": 0, "group": 0, "pid": 1, "hostname": "h", "device": 0, "device_hex": "0000:1b:00", "device_info": "NVIDIA H200"}],
    "results": [{"size": 8388608, "count": 262144, "type": "float", "redop": "none", "root": "    -1",
                 "out_of_place": null,
                 "in_place": {"time": 60.5, "alg_bw": "nan", "bus_bw": 121.3, "nwrong": null}}]})";
  const auto t = parse_nccl_tests(one_process, "run.json");
  CHECK(t.ranks == 8);
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].kind == NcclCollective::all_gather);
  CHECK(t.rows[0].out_of_place.empty());
  CHECK_FALSE(t.rows[0].in_place.algbw);
  CHECK(&t.rows[0].best() == &t.rows[0].in_place);

  CHECK(error_of("{\"results\": [1, 2,\n  oops]}", "x.json").starts_with("x.json:2: not valid JSON"));
  CHECK(error_of(R"({"version": 3})", "x.json") ==
        "x.json: results: expected the list of results nccl-tests -J writes");
  CHECK(error_of(R"({"args": ["all_reduce_perf"], "results": [{"size": -8, "in_place": {"time": 1}}]})", "x.json") ==
        "x.json: results[0].size: is negative (-8)");
  CHECK(error_of(R"({"args": ["all_reduce_perf"], "results": [{"size": 8, "in_place": {"time": "fast"}}]})",
                 "x.json") == "x.json: results[0].in_place.time: expected a number, got a string");
  CHECK(error_of(R"({"args": ["all_reduce_perf"], "results": []})", "x.json").find("no rows") != std::string::npos);
}

TEST_CASE("nccl-tests text: per-iteration columns, timestamps, missing in-place, device lines") {
  const std::string per_iter =
      "# Collective test starting: reduce_scatter_perf\n"
      "#  Rank  0 Group  0 Pid   1001 on     node-a device  0 [0000:1b:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid   1002 on     node-a device  1 [0000:43:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  2 Group  0 Pid   1003 on     node-a device  2 [0000:52:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  3 Group  0 Pid   1004 on     node-a device  3 [0000:61:00] NVIDIA H100 80GB HBM3\n"
      "#       size    count   type  redop  root    time  algbw  busbw #wrong   i_min   i_max   i_p99   i_cv%    time  "
      "algbw  busbw #wrong   i_min   i_max   i_p99   i_cv% timestamp\n"
      "    1048576   65536  float    sum    -1   30.00  34.95  26.21      0   29.10   31.20   31.00    1.10   29.00  "
      "36.16  27.12      0   28.50   30.10   30.00    0.90 2026-07-20 10:15:02\n"
      "    2097152  131072  float    sum    -1   40.00  52.43  39.32      0   39.10   41.20   41.00    1.10\n";
  const auto t = parse_nccl_tests(per_iter, "run.log");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].kind == NcclCollective::reduce_scatter);
  CHECK(t.ranks == 4);                                                         // four device lines
  CHECK(us(t.rows[0].in_place.time) == doctest::Approx(29.00).epsilon(kRel));  // past the 4 per-iteration columns
  CHECK(gbs(t.rows[0].in_place.busbw) == doctest::Approx(27.12).epsilon(kRel));
  CHECK(t.rows[1].in_place.empty());  // in-place not run
  CHECK(us(t.rows[1].out_of_place.time) == doctest::Approx(40.00).epsilon(kRel));
}

TEST_CASE("nccl-tests text behind mpirun --tag-output prefixes") {
  const auto t = parse_nccl_tests(
      "[1,0]<stdout>:# Collective test starting: all_gather_perf\n"
      "[1,0]<stdout>:#       size    count   type  redop  root    time  algbw  busbw #wrong    time  algbw  busbw #wrong\n"
      "[1,0]<stdout>:    1048576   32768  float   none    -1   30.00  34.95  30.58      0   29.00  36.16  31.64      0\n"
      "[1,3]<stderr>:node-b:123:456 [3] NCCL INFO comm 0x5555 rank 3 nranks 8\n",
      "mpi.log");
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].kind == NcclCollective::all_gather);
  CHECK(us(t.rows[0].in_place.time) == doctest::Approx(29.00).epsilon(kRel));
  CHECK(t.ranks == 8);  // 30.58 / 34.95 = 0.87496 = (n-1)/n -> n = 7.997
}

TEST_CASE("rank count from the busbw/algbw ratio of the largest row") {
  // The DGX table without its comment: 17179869184 ... 274.23 479.90 -> 479.90/274.23 = 1.74999 =
  // 2(n-1)/n -> n = 2/(2 - 1.74999) = 7.9994, within 2% of 8.
  std::string dgx = trace("h100x8_allreduce_nvidia-dgxc-benchmarking.txt");
  dgx.erase(0, dgx.find('\n') + 1);
  CHECK(parse_nccl_tests(dgx, "dgx_allreduce.txt").ranks == 8);
  // The A3 Mega all-gather without its comment and banner: 188.54/201.11 = 0.93750 = (n-1)/n -> n = 16.0.
  std::string a3 = trace("h100x16_allgather_gcp-a3mega-tcpxo_dstack.txt");
  a3.erase(0, a3.find("nThread"));
  CHECK(parse_nccl_tests(a3, "a3_allgather.txt").ranks == 16);
  // Send/recv: busbw = algbw whatever n is, so no rank count.
  std::string sr = trace("a100x8_sendrecv_li-plus-playground.txt");
  sr.erase(0, sr.find('\n') + 1);
  CHECK_FALSE(parse_nccl_tests(sr, "sendrecv.txt").ranks);
  // A ratio between integers (1.70 -> n = 6.67) gives none.
  CHECK_FALSE(
      parse_nccl_tests(kHeader + "  1048576 262144 float sum -1  10.0 100.00 170.00 0\n", "allreduce.txt").ranks);
}

TEST_CASE("the collective: row, explicit, header binary, file name, else an error saying how") {
  const std::string rows = kHeader + "  1048576 262144 float sum -1  27.37 38.31 67.04 0  26.93 38.94 68.14 0\n";
  CHECK(parse_nccl_tests(rows, "h100_allgather_run1.txt").rows[0].kind == NcclCollective::all_gather);
  CHECK(parse_nccl_tests(rows, "h100-reduce-scatter.txt").rows[0].kind == NcclCollective::reduce_scatter);
  CHECK(parse_nccl_tests(rows, "h100_all_reduce.txt").rows[0].kind == NcclCollective::all_reduce);
  CHECK(parse_nccl_tests(rows, "h100_alltoall.txt").rows[0].kind == NcclCollective::all_to_all);
  CHECK(parse_nccl_tests("# ./broadcast_perf -b 1M\n" + rows, "run.txt").rows[0].kind == NcclCollective::broadcast);
  CHECK(parse_nccl_tests("# ./reduce_perf -b 1M\n" + rows, "run.txt").rows[0].kind == NcclCollective::reduce);
  CHECK(parse_nccl_tests(rows, "run_allgather.txt", NcclCollective::send_recv).rows[0].kind ==
        NcclCollective::send_recv);
  const std::string e = error_of(rows, "run.txt");
  CHECK(e.starts_with("run.txt: cannot tell which collective this file measured"));
  CHECK(e.find("give the collective explicitly") != std::string::npos);
  CHECK(error_of(rows, "allgather_vs_allreduce.txt").find("the file name names several (all_reduce, all_gather)") !=
        std::string::npos);

  CHECK(inflect::calib::parse_nccl_collective("all-reduce") == NcclCollective::all_reduce);
  CHECK(inflect::calib::parse_nccl_collective("AllGather") == NcclCollective::all_gather);
  CHECK(inflect::calib::parse_nccl_collective("reduce_scatter_perf") == NcclCollective::reduce_scatter);
  CHECK(inflect::calib::parse_nccl_collective("alltoall") == NcclCollective::all_to_all);
  CHECK(inflect::calib::parse_nccl_collective("sendrecv") == NcclCollective::send_recv);
  CHECK_FALSE(inflect::calib::parse_nccl_collective("gather"));
  for (auto k :
       {NcclCollective::all_reduce, NcclCollective::all_gather, NcclCollective::reduce_scatter,
        NcclCollective::all_to_all, NcclCollective::send_recv, NcclCollective::broadcast, NcclCollective::reduce})
    CHECK(inflect::calib::parse_nccl_collective(inflect::calib::to_string(k)) == k);
}

TEST_CASE("markdown busbw sizes: powers of two snapped, other sizes kept") {
  const std::string table =
      "| size | busbw (GB/s) |\n|---|---|\n| 1K | 1 |\n| 65K | 1 |\n| 132K | 1 |\n| 524K | 1 |\n| 536M | 1 |\n"
      "| 1G | 1 |\n| 8G | 1 |\n| 3K | 1 |\n| 100M | 1 |\n| 48M | 1 |\n| 4KiB | 1 |\n| 512 | 1 |\n| 2 MB | 1 |\n";
  const auto t = parse_nccl_tests(table, "allreduce.md");
  const double expect[] = {1024, 65536, 131072, 524288, 536870912, kGiB,   8 * kGiB,
                           3000, 1e8,   4.8e7,  4096,   512,       2097152};
  REQUIRE(t.rows.size() == std::size(expect));
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    CAPTURE(i);
    CHECK(t.rows[i].size.value() == expect[i]);
  }
  CHECK(&t.rows[0].best() == &t.rows[0].out_of_place);  // no "in-place" said: out-of-place
}

TEST_CASE("nccl_busbw_factor and the time a busbw stands for") {
  using inflect::calib::nccl_busbw_factor;
  for (int n : {1, 2, 8, 16, 1024}) {
    CAPTURE(n);
    CHECK(nccl_busbw_factor(NcclCollective::all_reduce, n) == 2.0 * (n - 1) / n);
    CHECK(nccl_busbw_factor(NcclCollective::all_to_all, n) == static_cast<double>(n - 1) / n);
    CHECK(nccl_busbw_factor(NcclCollective::broadcast, n) == 1);
    // The same factors as the network model's, which compares its collectives with these tables.
    namespace net = inflect::net;
    CHECK(nccl_busbw_factor(NcclCollective::all_reduce, n) == net::busbw_factor(net::CollectiveOp::all_reduce, n));
    CHECK(nccl_busbw_factor(NcclCollective::all_gather, n) == net::busbw_factor(net::CollectiveOp::all_gather, n));
    CHECK(nccl_busbw_factor(NcclCollective::reduce_scatter, n) ==
          net::busbw_factor(net::CollectiveOp::reduce_scatter, n));
    CHECK(nccl_busbw_factor(NcclCollective::all_to_all, n) == net::busbw_factor(net::CollectiveOp::all_to_all, n));
    CHECK(nccl_busbw_factor(NcclCollective::send_recv, n) == net::busbw_factor(net::CollectiveOp::send_recv, n));
  }
  // 1 GiB all-reduce over 8 ranks at 350 GB/s busbw: algbw = 350 / 1.75 = 200 GB/s, time = 2^30 / 200e9.
  const auto t =
      inflect::calib::nccl_time_from_busbw(NcclCollective::all_reduce, 8, Bytes(kGiB), inflect::core::gb_per_s(350));
  CHECK(t.value() == doctest::Approx(kGiB / 200e9).epsilon(kRel));
}

TEST_CASE("broken files are errors at file:line, never crashes") {
  const std::string ok = "  1048576 262144 float sum -1  27.37 38.31 67.04 0  26.93 38.94 68.14 0\n";
  // Line 3 is the first row after the two header lines.
  CHECK(error_of(kHeader + "  1048576 262144 float sum -1  27.37 38.31\n") ==
        "bad_allreduce.txt:3: a row of 7 fields: expected the 5 leading columns, then 4 values (out-of-place) or 8 "
        "(out-of-place and in-place), time algbw busbw #wrong each");
  CHECK(error_of(kHeader + ok + "  2097152 524288 float sum -1  42.21 49.68 86.94 0 42.09 49.83 87.20 0 17 18\n")
            .starts_with("bad_allreduce.txt:4: a row of 15 fields"));
  CHECK(error_of(kHeader + "  1048576 262144 float sum -1  27.37 abc 67.04 0  26.93 38.94 68.14 0\n") ==
        "bad_allreduce.txt:3: out-of-place algbw 'abc' is not a number");
  CHECK(error_of(kHeader + ok + "  -8 2 float sum -1  13.67 0.00 0.00 0  13.03 0.00 0.00 0\n") ==
        "bad_allreduce.txt:4: size '-8' is negative");
  CHECK(error_of(kHeader + "  1048576 262144 float sum -1  27.37 38.31 -67.04 0  26.93 38.94 68.14 0\n") ==
        "bad_allreduce.txt:3: out-of-place busbw '-67.04' is negative");
  CHECK(error_of("") == "bad_allreduce.txt:1: the file is empty: expected nccl-tests output");
  CHECK(error_of("\n\n  \n").starts_with("bad_allreduce.txt:1: the file is empty"));
  CHECK(error_of("lorem ipsum\ndolor sit amet\n").starts_with("bad_allreduce.txt:2: no rows"));
  CHECK(error_of(std::string("\x00\xff\x01garbage", 10)).starts_with("bad_allreduce.txt:1: no rows"));
  CHECK(error_of("8 GPUs found\n") ==
        "bad_allreduce.txt:1: a row of 3 fields: expected the 5 leading columns, then 4 "
        "values (out-of-place) or 8 (out-of-place and in-place), time algbw busbw #wrong each");
  CHECK(error_of("# size count type redop root algbw busbw\n")
            .starts_with("bad_allreduce.txt:1: the header has no time (or cputime) column"));
  // Markdown
  const std::string md = "| Message Size (Bytes) | A (GB/s) |\n| --- | --- |\n| 1K | 0.04 |\n";
  CHECK(error_of(md + "| 2K | 0.08 | 9 |\n", "a_allreduce.md") ==
        "a_allreduce.md:4: a row of 3 cells; the header has 2");
  CHECK(error_of(md + "| 2Q | 0.08 |\n", "a_allreduce.md") ==
        "a_allreduce.md:4: message size '2Q' is not a size (e.g. 1K, 65K, 1G, 4096)");
  CHECK(error_of(md + "| 2K | fast |\n", "a_allreduce.md") ==
        "a_allreduce.md:4: A (GB/s) 'fast' is not a bandwidth (GB/s, >= 0)");
  CHECK(error_of("| a | b |\n| --- | --- |\n| 1 | 2 |\n", "a_allreduce.md")
            .starts_with("a_allreduce.md:1: a Markdown table"));
  CHECK(error_of("| collective | busbw |\n| --- | --- |\n| all-reduce | 1 |\n", "x.md")
            .starts_with("x.md:1: the table has no message-size column"));
  CHECK(
      error_of("# all_reduce_perf -b 1M -e 16G\n| collective | busbw |\n| --- | --- |\n| all-reduce | 1 |\n", "x.md") ==
      "x.md:2: the header's nccl-tests commands give more than one message size (-b 1M, -e 16G); a table without a "
      "size column needs one (-b equal to -e)");
  CHECK(error_of("# -b 1G -e 1G\n| collective | busbw |\n| --- | --- |\n| all-gatherv | 1 |\n", "x.md")
            .starts_with("x.md:4: collective 'all-gatherv' is not one of"));
}

TEST_CASE("markdown summary: a size column, bandwidth units, --minbytes=, and a busbw-only time with factor 1") {
  const auto t = parse_nccl_tests(
      "| op | size | busbw |\n|---|---|---|\n| sendrecv | 1G | 480 GB/s |\n| broadcast | 1G | 3.2Tbps |\n", "x.md");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.format == "markdown summary");
  CHECK(t.rows[0].kind == NcclCollective::send_recv);
  CHECK(t.rows[0].size.value() == kGiB);
  CHECK(gbs(t.rows[0].best().busbw) == doctest::Approx(480).epsilon(kRel));
  CHECK(gbs(t.rows[1].best().busbw) == doctest::Approx(400).epsilon(kRel));  // 3.2 Tbit/s
  CHECK_FALSE(t.ranks);
  // Send/recv's factor is 1 whatever n is: 1 GiB at 480 GB/s is 2^30 / 480e9 s without a rank count.
  const auto time = inflect::calib::nccl_row_time(t.rows[0], std::nullopt);
  REQUIRE(time);
  CHECK(time->value() == doctest::Approx(kGiB / 480e9).epsilon(kRel));

  const auto m = parse_nccl_tests("# all_gather_perf --minbytes=64M --maxbytes=64M\n| collective | busbw |\n|---|---|\n"
                                  "| all-gather | 300 |\n",
                                  "y.md");
  CHECK(m.rows[0].size.value() == 64.0 * 1024 * 1024);
}
