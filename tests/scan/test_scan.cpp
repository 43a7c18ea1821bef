// Scan files, point expansion, the parallel runner (determinism across --jobs, resume after an
// interruption, shards and merge) and the reports.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <unistd.h>

#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <fstream>
#include <sstream>

#include "inflect/core/error.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/scan/out_lock.hpp"
#include "inflect/scan/report.hpp"
#include "inflect/scan/runner.hpp"
#include "inflect/scan/scan_analysis.hpp"
#include "inflect/scan/svg.hpp"

using namespace inflect;
namespace fs = std::filesystem;

namespace {

const std::string kScansDir = std::string(INFLECT_SOURCE_DIR) + "/workloads/scans";

// A small scan: a 1.7B GPT on 1..4 DGX A100 nodes under two plan families (8 points, about 0.1 s).
const char* kToyScan = R"(
name: toy-scan
cluster: {topology: ../../topologies/dgx-a100.yaml, nodes: 1}
model: {preset: gpt-1.7b}
training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: bf16}
parallel: {tp: 1}
sweep:
  cluster.nodes: [1, 2, 4, 8]
plans:
  dp: {dp: auto}
  tp2: {tp: 2, dp: auto}
analysis: {min_doubling_gain: 0.5}
)";

scan::ScanSpec toy(const std::string& extra = "") {
  io::set_project_root(INFLECT_SOURCE_DIR);
  return scan::parse_scan(std::string(kToyScan) + extra, "toy.yaml", kScansDir);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path fresh_dir(const std::string& name) {
  const auto d = fs::temp_directory_path() / ("inflect-test-scan-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

std::string error_of(const std::string& text) {
  try {
    scan::parse_scan(text, "bad.yaml", kScansDir);
  } catch (const core::Error& e) {
    return core::format_error(e);
  }
  return "";
}

}  // namespace

TEST_CASE("scan file: a grid over families and axes expands in documented order") {
  const auto s = toy();
  CHECK(s.name == "toy-scan");
  REQUIRE(s.axes.size() == 1);
  CHECK(s.axes[0].labels == std::vector<std::string>{"1", "2", "4", "8"});
  const auto pts = scan::expand_points(s);
  REQUIRE(pts.size() == 8);  // 2 families x 4 node counts, families outermost
  CHECK(pts[0].key == "plan=dp;cluster.nodes=1");
  CHECK(pts[5].key == "plan=tp2;cluster.nodes=2");
  CHECK(pts[5].index == 5);
  // dp: auto removes the key (derived from the device count); the family's tp is set.
  CHECK_FALSE(scan::point_document(s, pts[0])["parallel"]["dp"].IsDefined());
  CHECK(scan::point_document(s, pts[5])["parallel"]["tp"].as<int>() == 2);
  CHECK(scan::point_document(s, pts[5])["cluster"]["nodes"].as<int>() == 2);
  CHECK_FALSE(scan::point_document(s, pts[5])["sweep"].IsDefined());
}

TEST_CASE("scan file: zip pairs axes element-wise and where filters points") {
  const std::string text = R"(
name: z
cluster: {topology: ../../topologies/dgx-a100.yaml}
model: {preset: gpt-1.7b}
training: {global_batch: 64}
sweep:
  cluster.nodes: [1, 2, 4]
  training.micro_batch: [1, 2, 4]
sweep_mode: zip
where: ["training.micro_batch <= 2", "parallel.tp == 1"]
)";
  const auto pts = scan::expand_points(scan::parse_scan(text, "z.yaml", kScansDir));
  REQUIRE(pts.size() == 2);  // (1,1), (2,2); (4,4) fails the first filter; tp defaults to 1
  CHECK(pts[1].key == "cluster.nodes=2;training.micro_batch=2");
  // A grid over the same axes has 9 points, 6 of which pass micro_batch <= 2.
  std::string grid = text;
  grid.replace(grid.find("sweep_mode: zip"), 15, "sweep_mode: grid");
  CHECK(scan::expand_points(scan::parse_scan(grid, "g.yaml", kScansDir)).size() == 6);
}

TEST_CASE("scan file: mistakes are input errors naming the key and line") {
  const std::string head = "cluster: {topology: x.yaml}\nmodel: {preset: gpt-1.7b}\n";
  CHECK(error_of(head + "sweep:\n  cluster.node: [1, 2]\n").find("did you mean 'cluster.nodes'") != std::string::npos);
  CHECK(error_of(head + "sweep:\n  cluster.node: [1, 2]\n").find("bad.yaml:4") != std::string::npos);
  CHECK(error_of(head + "sweep:\n  parallel: [1]\n").find("is a section") != std::string::npos);
  CHECK(error_of(head + "sweep:\n  cluster.nodes: []\n").find("non-empty list") != std::string::npos);
  CHECK(error_of(head + "sweep:\n  cluster.nodes: [1, 1]\n").find("appears twice") != std::string::npos);
  CHECK(error_of(head + "sweep: {cluster.nodes: [1, 2], parallel.tp: [1]}\nsweep_mode: zip\n").find("same number") != std::string::npos);
  CHECK(error_of(head + "sweep: {cluster.nodes: [1]}\nwhere: ['parallel.tp ~ 2']\n").find("key OP value") != std::string::npos);
  CHECK(error_of(head + "sweep: {parallel.tp: [1]}\nplans: {a: {tp: 2}}\n").find("also swept") != std::string::npos);
  CHECK(error_of(head + "sweep: {cluster.nodes: [1]}\nplans: {a: {tp: auto}}\n").find("only dp can be auto") != std::string::npos);
  CHECK(error_of(head + "sweep: {cluster.nodes: [1]}\nanalysis: {scale: parallel.tp}\n").find("one of the swept keys") != std::string::npos);
  CHECK(error_of(head + "sweep: {cluster.nodes: [1]}\nanalysis: {efficiency_floor: 2}\n").find("efficiency_floor") != std::string::npos);
  CHECK(error_of(head).find("needs `sweep:`") != std::string::npos);
  CHECK(error_of(head + "sweep: {cluster.nodes: [1]}\nswep: 1\n").find("unknown key 'swep'") != std::string::npos);
  // A swept or planned key under a scalar escaped as yaml-cpp's "operator[] call on a scalar".
  const std::string scalar = "cluster: g\nmodel: {preset: gpt-1.7b}\nparallel: 8\n";
  CHECK(error_of(scalar + "sweep: {cluster.topology: [.]}\n")
            .find("bad.yaml:4:27: sweep.cluster.topology: sweep cluster.topology: 'cluster' is 'g' in this file, not a map") !=
        std::string::npos);
  CHECK(error_of("cluster: {topology: x.yaml}\nmodel: {preset: gpt-1.7b}\nparallel: 8\nsweep: {cluster.nodes: [1]}\nplans: {a: {tp: 2}}\n")
            .find("plan family 'a' sets parallel.tp: 'parallel' is '8' in this file, not a map") != std::string::npos);
}

TEST_CASE("scan file: placements as an axis over parallel.mesh, the base's degree keys dropped") {
  // Two sites of two DGX H100 nodes (16 GPUs each); tp 8, pp 2, dp 2 written as short keys. Each
  // point's mesh replaces them (docs/placements.md): [dp 2, pp 2, tp 8] puts the dp pair across
  // the sites (rank = tp + 8 pp + 16 dp, site = dp), [pp 2, dp 2, tp 8] the two stages.
  const std::string text = R"(
name: placements-axis
cluster:
  sites:
    - {name: a, topology: ../../topologies/dgx-h100.yaml, nodes: 2}
    - {name: b, topology: ../../topologies/dgx-h100.yaml, nodes: 2}
  wan:
    - {between: [a, b], bandwidth: 50Gb/s, latency: 5ms, transport: ideal}
model: {preset: llama3-8b}
training: {seq_len: 4096, global_batch: 16, micro_batch: 1, precision: bf16}
parallel: {tp: 8, pp: 2, sequence_parallel: true}
sweep:
  parallel.mesh: [[dp 2, pp 2, tp 8], [pp 2, dp 2, tp 8]]
  cluster.cross_site_collectives: [flat, hierarchical]
)";
  io::set_project_root(INFLECT_SOURCE_DIR);
  const auto s = scan::parse_scan(text, "placements.yaml", kScansDir);
  const auto pts = scan::expand_points(s);
  REQUIRE(pts.size() == 4);
  CHECK(pts[2].key == "parallel.mesh=[pp 2, dp 2, tp 8];cluster.cross_site_collectives=flat");
  const auto doc = scan::point_document(s, pts[2]);
  CHECK_FALSE(doc["parallel"]["tp"].IsDefined());
  CHECK_FALSE(doc["parallel"]["pp"].IsDefined());
  CHECK(doc["parallel"]["sequence_parallel"].as<bool>());
  const auto e = io::parse_experiment(io::Node(doc, std::make_shared<const std::string>("p"), ""), kScansDir);
  CHECK(e.parallel.order == std::vector<plan::Dim>{plan::Dim::tp, plan::Dim::dp, plan::Dim::pp, plan::Dim::cp});
  CHECK(e.parallel.tp * e.parallel.pp * e.parallel.dp == 32);
  const auto d = fresh_dir("placements");
  scan::ScanOptions o;
  o.jobs = 2;
  const auto out = scan::run_scan(s, d.string(), o);
  REQUIRE(out.rows.size() == 4);
  for (const auto& r : out.rows) CHECK_MESSAGE(r.status == scan::RowStatus::ok, r.key, ": ", r.reason);
  // Where the dp pair crosses the 50 Gb/s link its gradients are exposed; stages across it are not.
  CHECK(out.rows[0].report.breakdown.exposed_comm.dp.value() > out.rows[2].report.breakdown.exposed_comm.dp.value());
  fs::remove_all(d);
  // One point cannot take its degrees from two places.
  const std::string head = "cluster: {topology: x.yaml}\nmodel: {preset: gpt-1.7b}\n";
  CHECK(error_of(head + "sweep: {parallel.tp: [1, 2], parallel.mesh: [[dp 8]]}\n").find("a mesh sets every degree") != std::string::npos);
  CHECK(error_of(head + "sweep: {parallel.mesh: [[dp 8]]}\nplans: {a: {tp: 2}}\n").find("which the swept parallel.mesh replaces") !=
        std::string::npos);
}

TEST_CASE("scan runner: results do not depend on the number of jobs") {
  const auto s = toy();
  const auto d1 = fresh_dir("jobs1"), d2 = fresh_dir("jobs2");
  scan::ScanOptions o;
  o.jobs = 1;
  const auto a = scan::run_scan(s, d1.string(), o);
  o.jobs = 2;
  const auto b = scan::run_scan(s, d2.string(), o);
  CHECK(a.ran == 8);
  CHECK(b.ran == 8);
  CHECK(slurp(d1 / "results.jsonl") == slurp(d2 / "results.jsonl"));
  CHECK(slurp(d1 / "results.csv") == slurp(d2 / "results.csv"));
  // 8 rows in point order, one CSV header.
  const auto rows = scan::read_rows((d1 / "results.jsonl").string());
  REQUIRE(rows.size() == 8);
  for (int i = 0; i < 8; ++i) CHECK(rows[static_cast<std::size_t>(i)].index == i);
  const auto csv = slurp(d1 / "results.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 9);
}

TEST_CASE("scan runner: ranks spread the points and rank 0 writes what one process writes") {
  // Three in-process "ranks" talking through a queue, as the MPI glue would: rank 0 appends every
  // rank's rows; the others write nothing. The files equal a single-process run's.
  const auto s = toy();
  const auto single = fresh_dir("peers-single"), leader = fresh_dir("peers-0"), other = fresh_dir("peers-other");
  scan::ScanOptions o;
  o.jobs = 1;
  (void)scan::run_scan(s, single.string(), o);

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> queue;
  int finished = 0;
  constexpr int kRanks = 3;
  auto peers_of = [&](int rank) {
    scan::Peers p;
    p.rank = rank;
    p.ranks = kRanks;
    p.send = [&](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(line);
      cv.notify_all();
    };
    p.finish = [&] {
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      cv.notify_all();
    };
    p.receive = [&]() -> std::optional<std::string> {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return !queue.empty() || finished == kRanks - 1; });
      if (queue.empty()) return std::nullopt;
      std::string line = std::move(queue.front());
      queue.pop_front();
      return line;
    };
    return p;
  };
  std::vector<int> ran(kRanks, 0);
  {
    std::vector<std::jthread> others;
    for (int r = 1; r < kRanks; ++r)
      others.emplace_back([&, r] {
        scan::ScanOptions po;
        po.jobs = 2;
        po.peers = peers_of(r);
        ran[static_cast<std::size_t>(r)] = scan::run_scan(s, other.string(), po).ran;
      });
    scan::ScanOptions po;
    po.jobs = 2;
    po.peers = peers_of(0);
    const auto out = scan::run_scan(s, leader.string(), po);
    CHECK(out.rows.size() == 8);
  }
  // Eight points over three ranks: 3, 3, 2 (rank 0's count includes the rows it received).
  CHECK(ran[1] == 3);
  CHECK(ran[2] == 2);
  CHECK_FALSE(fs::exists(other));
  CHECK(slurp(leader / "results.jsonl") == slurp(single / "results.jsonl"));
  CHECK(slurp(leader / "results.csv") == slurp(single / "results.csv"));
  CHECK(slurp(leader / "scan.json") == slurp(single / "scan.json"));
}

TEST_CASE("scan runner: impossible points are kept with their reason") {
  // gpt-1.7b has 24 heads: tp 16 does not divide them... and does not fit in a node of 8.
  auto spec = scan::parse_scan(std::string(kToyScan).replace(std::string(kToyScan).find("tp2: {tp: 2"), 11, "tp2: {tp: 16"),
                               "toy.yaml", kScansDir);
  const auto d = fresh_dir("invalid");
  const auto out = scan::run_scan(spec, d.string(), scan::ScanOptions{});
  int invalid = 0;
  for (const auto& r : out.rows)
    if (r.status == scan::RowStatus::invalid) {
      ++invalid;
      CHECK_FALSE(r.reason.empty());
      CHECK(r.report.devices > 0);  // the scale is still known from the topology
    }
  CHECK(invalid == 4);
  CHECK(out.rows.size() == 8);
}

TEST_CASE("scan runner: DiLoCo's keys are axes, one worker is an invalid point, and syncing less never slows the step") {
  // training.diloco.sync_every and .workers swept over a 1.7B GPT on 2 DGX A100 nodes (dp16):
  // workers 1 is refused at its key (synchronous training), workers 2 runs at every H, and its
  // mean step (step_time_s, what the rows and the analysis read) does not grow with H.
  io::set_project_root(INFLECT_SOURCE_DIR);
  const auto spec = scan::parse_scan(R"(
name: diloco-scan
cluster: {topology: ../../topologies/dgx-a100.yaml, nodes: 2}
model: {preset: gpt-1.7b}
training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: bf16, diloco: {sync_every: 1, workers: 2, compression: int8}}
sweep:
  training.diloco.sync_every: [1, 10, 100]
  training.diloco.workers: [1, 2]
)",
                                     "diloco.yaml", kScansDir);
  const auto d = fresh_dir("diloco");
  const auto out = scan::run_scan(spec, d.string(), scan::ScanOptions{});
  REQUIRE(out.rows.size() == 6);
  double last = 1e300;
  int ok = 0;
  for (const auto& r : out.rows) {
    CAPTURE(r.key);
    if (r.key.find("workers=1") != std::string::npos) {
      CHECK(r.status == scan::RowStatus::invalid);
      CHECK(r.reason.find("training.diloco.workers: workers=1 is out of range") != std::string::npos);
      continue;
    }
    REQUIRE(r.status == scan::RowStatus::ok);
    ++ok;
    CHECK(r.report.diloco.modeled);
    CHECK(r.report.step_time.value() == r.report.diloco.time_per_step.value());
    CHECK(r.report.step_time.value() <= last);
    last = r.report.step_time.value();
  }
  CHECK(ok == 3);
  // The rows' reports carry the diloco section, read back from results.jsonl.
  const auto rows = scan::read_rows((d / "results.jsonl").string());
  REQUIRE(rows.size() == 6);
  CHECK(rows[5].report.diloco.modeled);
  CHECK(rows[5].report.diloco.sync_every == 100);
  CHECK(rows[5].report.diloco.inner_step.value() == out.rows[5].report.diloco.inner_step.value());
  fs::remove_all(d);
}

TEST_CASE("scan runner: resume after an interruption loses and duplicates nothing") {
  const auto s = toy();
  const auto full = fresh_dir("full"), cut = fresh_dir("cut");
  scan::run_scan(s, full.string(), scan::ScanOptions{});
  // Interrupt: keep 3 whole rows and half of the fourth, as a kill mid-write would leave them.
  fs::create_directories(cut);
  std::istringstream lines(slurp(full / "results.jsonl"));
  std::string line, partial;
  for (int i = 0; i < 4 && std::getline(lines, line); ++i) partial += i < 3 ? line + "\n" : line.substr(0, line.size() / 2);
  std::ofstream(cut / "results.jsonl", std::ios::binary) << partial;
  scan::ScanOptions o;
  o.resume = true;
  const auto r = scan::run_scan(s, cut.string(), o);
  CHECK(r.resumed == 3);
  CHECK(r.ran == 5);
  CHECK(slurp(cut / "results.jsonl") == slurp(full / "results.jsonl"));
  CHECK(slurp(cut / "results.csv") == slurp(full / "results.csv"));
  // Resuming a finished scan runs nothing.
  CHECK(scan::run_scan(s, cut.string(), o).ran == 0);
}

TEST_CASE("scan runner: a second writer into the same --out is refused while the first holds it") {
  const auto s = toy();
  const auto dir = fresh_dir("locked");
  {
    const scan::OutDirLock first(dir.string());  // another scan, still running
    try {
      (void)scan::run_scan(s, dir.string(), scan::ScanOptions{});
      FAIL("the second scan ran");
    } catch (const core::Error& e) {
      CHECK(e.kind() == core::ErrorKind::input);
      CHECK(std::string(e.what()).find("is writing into") != std::string::npos);
      CHECK(std::string(e.what()).find(std::to_string(::getpid())) != std::string::npos);  // names the holder
    }
    CHECK_FALSE(fs::exists(dir / "results.jsonl"));  // nothing written beside the holder's
  }
  // Released (as when the first process ends, even by kill -9): the folder is free again.
  CHECK(scan::run_scan(s, dir.string(), scan::ScanOptions{}).ran == 8);
}

TEST_CASE("scan runner: a point whose experiment changed is re-run by --resume, and merge refuses shards of two scans") {
  const auto s = toy();
  const auto dir = fresh_dir("inputs");
  CHECK(scan::run_scan(s, dir.string(), scan::ScanOptions{}).ran == 8);
  scan::ScanOptions o;
  o.resume = true;
  CHECK(scan::run_scan(s, dir.string(), o).ran == 0);  // nothing changed: nothing re-runs
  // The base's sequence length changes (the points' keys do not): every point runs again.
  std::string text = kToyScan;
  text.replace(text.find("seq_len: 2048"), 13, "seq_len: 1024");
  const auto changed = scan::parse_scan(text, "toy.yaml", kScansDir);
  const auto again = scan::run_scan(changed, dir.string(), o);
  CHECK(again.resumed == 0);
  CHECK(again.ran == 8);
  // One family changes: only its 4 points re-run.
  std::string family = text;
  family.replace(family.find("tp2: {tp: 2, dp: auto}"), 22, "tp2: {tp: 2, dp: auto, zero: 1}");
  const auto third = scan::run_scan(scan::parse_scan(family, "toy.yaml", kScansDir), dir.string(), o);
  CHECK(third.resumed == 4);
  CHECK(third.ran == 4);
  // Shards of the two scans (disjoint points, same name and axes) do not merge.
  const auto a = fresh_dir("inputs-a"), b = fresh_dir("inputs-b"), m = fresh_dir("inputs-merged");
  scan::ScanOptions half;
  half.shard_count = 2;
  half.shard_index = 0;
  scan::run_scan(s, a.string(), half);
  half.shard_index = 1;
  scan::run_scan(changed, b.string(), half);
  try {
    (void)scan::merge_scans({a.string(), b.string()}, m.string());
    FAIL("shards of two scans merged");
  } catch (const core::Error& e) {
    CHECK(e.kind() == core::ErrorKind::input);
    CHECK(std::string(e.what()).find("different scan files") != std::string::npos);
    // The message names the key that differs (scan.json keeps the scan's keys, flattened).
    CHECK(std::string(e.what()).find("the first key that differs: training.seq_len: 2048 in the first, 1024 in the second") !=
          std::string::npos);
  }
}

TEST_CASE("scan runner: shards are disjoint and merge to the single-process result") {
  const auto s = toy();
  const auto full = fresh_dir("whole"), s1 = fresh_dir("shard1"), s2 = fresh_dir("shard2"), m = fresh_dir("merged");
  scan::run_scan(s, full.string(), scan::ScanOptions{});
  scan::ScanOptions o;
  o.shard_count = 2;
  o.shard_index = 0;
  const auto a = scan::run_scan(s, s1.string(), o);
  o.shard_index = 1;
  const auto b = scan::run_scan(s, s2.string(), o);
  CHECK(a.rows.size() + b.rows.size() == 8);
  for (const auto& r : a.rows) CHECK(r.index % 2 == 0);
  const auto rows = scan::merge_scans({s1.string(), s2.string()}, m.string());
  CHECK(rows.size() == 8);
  CHECK(slurp(m / "results.jsonl") == slurp(full / "results.jsonl"));
  CHECK(slurp(m / "results.csv") == slurp(full / "results.csv"));
  // Directories of different scans do not merge.
  auto other = toy();
  other.name = "other";
  const auto od = fresh_dir("other");
  scan::run_scan(other, od.string(), o);
  CHECK_THROWS_AS(scan::merge_scans({s1.string(), od.string()}, m.string()), core::Error);
}

TEST_CASE("scan reports: self-contained HTML with plots, Markdown with findings, re-rendered from the files") {
  const auto s = toy();
  const auto d = fresh_dir("report");
  scan::run_scan(s, d.string(), scan::ScanOptions{});
  const std::string findings = scan::write_reports(d.string());
  const auto html = slurp(d / "report.html");
  const auto md = slurp(d / "report.md");
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("<polyline") != std::string::npos);  // the throughput curves
  CHECK(html.find("<rect x=") != std::string::npos);   // stacked bars
  CHECK(html.find("<script") == std::string::npos);     // nothing to run...
  CHECK(html.find("src=") == std::string::npos);        // ...and nothing to fetch
  CHECK(html.find("href=") == std::string::npos);
  CHECK(md.find("## Findings") != std::string::npos);
  CHECK(md.find("### dp") != std::string::npos);
  CHECK(md.find("| 7 | tp2 |") != std::string::npos);  // the table of all points
  // Every series has its inflection verdict and its table in both reports: as many tables in the
  // HTML as in the Markdown (which plan wins where, 2 series, all points), which each start a `|---`
  // rule.
  auto count = [](const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count(md, "\n|---") == 4);
  CHECK(md.find("## Which plan wins where") != std::string::npos);
  CHECK(count(html, "<table") == count(md, "\n|---"));
  CHECK(count(md, "**Inflection:** ") == 2);
  CHECK(count(html, "<b>Inflection:</b> ") == 2);
  // The scale is the device count: efficiency against linear is plotted; the points modelled
  // power, so the power, clock and temperature plots are there; the breakdown comes twice
  // (seconds, shares of the step); every plot takes the page's width.
  CHECK(html.find("Scaling efficiency against linear") != std::string::npos);
  CHECK(html.find("Average device power") != std::string::npos);
  CHECK(html.find("Average compute clock") != std::string::npos);
  CHECK(html.find("Peak device temperature") != std::string::npos);
  CHECK(html.find("as shares of each point's step") != std::string::npos);
  CHECK(count(html, "<svg") == count(html, R"(viewBox="0 0 )"));
  CHECK(count(html, "<svg") == count(html, R"(width="100%")"));
  // Re-rendering from the saved rows gives the same files.
  scan::write_reports(d.string());
  CHECK(slurp(d / "report.html") == html);
  CHECK_THROWS_AS(scan::write_reports((d / "missing").string()), core::Error);
}

TEST_CASE("scan reports: no efficiency-against-linear plot when the scale axis is not the device count") {
  // A micro-batch scan on one node: "linear in the micro-batch" is no baseline, so the efficiency
  // plot is left out, and the verdict gives the throughput change instead of an efficiency.
  io::set_project_root(INFLECT_SOURCE_DIR);
  const auto s = scan::parse_scan(R"(
name: toy-mb
cluster: {topology: ../../topologies/dgx-a100.yaml, nodes: 1}
model: {preset: gpt-1.7b}
training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: bf16}
parallel: {tp: 1, dp: 8}
sweep:
  training.micro_batch: [1, 2, 4]
analysis: {scale: training.micro_batch}
)",
                                  "toy-mb.yaml", kScansDir);
  const auto d = fresh_dir("report-mb");
  scan::run_scan(s, d.string(), scan::ScanOptions{});
  scan::write_reports(d.string());
  const auto html = slurp(d / "report.html");
  const auto md = slurp(d / "report.md");
  CHECK(html.find("Scaling efficiency against linear") == std::string::npos);
  CHECK(html.find("Throughput per device") != std::string::npos);
  CHECK(md.find("**Inflection:** no knee between 1 and 4 training.micro_batch: throughput goes from ") != std::string::npos);
  CHECK(md.find("efficiency stays above") == std::string::npos);
}

namespace {

bool intersect(const scan::svg::TextBox& a, const scan::svg::TextBox& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}
bool inside(const scan::svg::TextBox& t, const scan::svg::Layout& l) {
  return t.x0 >= 0 && t.y0 >= 0 && t.x1 <= l.width && t.y1 <= l.height;
}

}  // namespace

TEST_CASE("svg: tick labels of a crowded axis are thinned so that none overlap, and no text leaves the viewBox") {
  // 41 doublings (1 to 2^40) on a 532 px axis are 13 px apart, narrower than any label ("1.09951G"
  // at 0.62 x 12 px a character is 60 px): without thinning neighbours would overlap.
  scan::svg::LinePlot p;
  p.title = "crowded";
  p.x_label = "GPUs";
  p.y_label = "tokens/s";
  scan::svg::Line l{"a series whose name is far too long to fit on one line of the legend beside the plot", {}};
  for (int e = 0; e <= 40; ++e) l.points.emplace_back(std::exp2(e), 1e6 * (e + 1));
  p.lines.push_back(l);
  for (int i = 0; i < 24; ++i) p.lines.push_back({"series " + std::to_string(i), {{1, 1}, {2, 2}}});  // a tall legend
  p.markers.push_back({std::exp2(39.5), 0, "a crossover near the right edge of the plot", true});
  p.markers.push_back({std::exp2(40), 41e6, "knee", false});
  scan::svg::Layout lay;
  const std::string svg = scan::svg::render(p, &lay);
  std::vector<scan::svg::TextBox> ticks;
  for (const auto& t : lay.texts)
    if (t.role == "x-tick") ticks.push_back(t);
  CHECK(ticks.size() >= 4);   // thinned, not emptied
  CHECK(ticks.size() < 41);
  for (std::size_t i = 0; i < ticks.size(); ++i)
    for (std::size_t j = i + 1; j < ticks.size(); ++j) CHECK_FALSE(intersect(ticks[i], ticks[j]));
  for (const auto& t : lay.texts) {
    INFO(t.role, ": ", t.text);
    CHECK(inside(t, lay));
  }
  // Legend lines (the long name wrapped) overlap neither each other nor the plot's labels.
  for (std::size_t i = 0; i < lay.texts.size(); ++i)
    for (std::size_t j = i + 1; j < lay.texts.size(); ++j)
      if (lay.texts[i].role == "legend" || lay.texts[j].role == "legend") CHECK_FALSE(intersect(lay.texts[i], lay.texts[j]));
  CHECK(lay.height > 380);  // grown to hold 25 legend entries
  CHECK(svg.find(R"(viewBox="0 0 940 )") != std::string::npos);
  CHECK(svg.find(R"(width="100%")") != std::string::npos);

  // A linear axis with wide tick labels, and stacked bars with long labels: inside the viewBox too.
  scan::svg::LinePlot lin;
  lin.log2_x = false;
  lin.lines.push_back({"b", {{0, 1}, {123456789, 2}}});
  scan::svg::render(lin, &lay);
  ticks.clear();
  for (const auto& t : lay.texts)
    if (t.role == "x-tick") ticks.push_back(t);
  for (std::size_t i = 0; i + 1 < ticks.size(); ++i) CHECK_FALSE(intersect(ticks[i], ticks[i + 1]));
  scan::svg::StackedBars bars{"bars", "seconds", {"compute slowed by clock throttling (power limit or heat)", "other"}, {}, true};
  for (int i = 0; i < 30; ++i) bars.bars.push_back({"tp8+pp8 topology=hgx-h200 @" + std::to_string(128 << (i % 5)), {1.0 + i, 0.5}});
  scan::svg::render(bars, &lay);
  for (const auto& t : lay.texts) {
    INFO(t.role, ": ", t.text);
    CHECK(inside(t, lay));
  }
}

TEST_CASE("svg: labels of crossovers at nearby scales go into separate rows") {
  scan::svg::LinePlot p;
  p.title = "t";
  p.lines.push_back({"a", {{128, 1}, {256, 2}, {512, 3}}});
  p.markers.push_back({228, 0, "pp8 overtakes pp4 (h100)", true});
  p.markers.push_back({225, 0, "pp8 overtakes pp4 (h200)", true});
  p.markers.push_back({500, 0, "far", true});
  const std::string s = scan::svg::render(p);
  auto y_of = [&](const std::string& label) {
    const auto at = s.find(">" + label + "<");
    REQUIRE(at != std::string::npos);
    const auto ypos = s.rfind("y=\"", at);
    return std::stod(s.substr(ypos + 3));
  };
  // The two overlapping labels differ by a row; the distant one shares the first row.
  CHECK(std::abs(y_of("pp8 overtakes pp4 (h100)") - y_of("pp8 overtakes pp4 (h200)")) == doctest::Approx(12));
  CHECK(y_of("far") == doctest::Approx(std::min(y_of("pp8 overtakes pp4 (h100)"), y_of("pp8 overtakes pp4 (h200)"))));
}

TEST_CASE("scan analysis: crossovers compare series that differ in one respect, neighbours only on a long axis") {
  // One axis `x` of n values beside the scale axis (devices 8 and 16): n series. Series i runs at
  // 100 + i tokens/s at 8 devices and 100 + (n - i) at 16, so every pair crosses between 8 and 16.
  auto crossovers = [](int n) {
    scan::ScanMeta m;
    m.name = "t";
    m.scale = "devices";
    m.axis_paths = {"x", "cluster.nodes"};
    std::vector<scan::ScanRow> rows;
    for (int i = 0; i < n; ++i)
      for (int nodes : {1, 2}) {
        scan::ScanRow r;
        r.index = static_cast<int>(rows.size());
        r.values = {{"x", std::to_string(i)}, {"cluster.nodes", std::to_string(nodes)}};
        r.key = fmt::format("x={};cluster.nodes={}", i, nodes);
        r.has_report = true;
        r.report.devices = 8 * nodes;
        r.report.step_time = core::Seconds(1);
        r.report.tokens_per_s = nodes == 1 ? 100.0 + i : 100.0 + (n - i);
        rows.push_back(r);
      }
    int count = 0;
    for (const auto& f : scan::analyze(m, rows).findings) count += f.kind == analysis::FindingKind::crossover ? 1 : 0;
    return count;
  };
  // 5 series: every pair, 5 x 4 / 2 = 10 crossovers.
  CHECK(crossovers(5) == 10);
  // 40 series (over the 16 compared pairwise): neighbours only, 39.
  CHECK(crossovers(40) == 39);
}

TEST_CASE("scan analysis: a replayed trace without tokens is analyzed on its step rate") {
  // Two points of a trace replay (no tokens per step) at 8 and 16 devices, steps of 0.5 s and
  // 0.4 s: the curve is steps/s, 2 and 2.5, and the tables and plots say so. With one point that
  // knows its tokens, the others are gaps (tokens/s cannot be mixed with steps/s).
  scan::ScanMeta m;
  m.name = "trace";
  m.scale = "devices";
  m.axis_paths = {"cluster.nodes"};
  std::vector<scan::ScanRow> rows;
  for (int nodes : {1, 2}) {
    scan::ScanRow r;
    r.index = static_cast<int>(rows.size());
    r.values = {{"cluster.nodes", std::to_string(nodes)}};
    r.key = fmt::format("cluster.nodes={}", nodes);
    r.has_report = true;
    r.report.devices = 8 * nodes;
    r.report.step_time = core::Seconds(nodes == 1 ? 0.5 : 0.4);
    rows.push_back(r);
  }
  const auto a = scan::analyze(m, rows);
  CHECK(a.throughput_unit == "steps/s");
  REQUIRE(a.series.size() == 1);
  CHECK(a.series[0].series.unit == "steps/s");
  REQUIRE(a.series[0].series.points.size() == 2);
  CHECK(a.series[0].series.points[0].throughput == doctest::Approx(2.0));
  CHECK(a.series[0].series.points[1].throughput == doctest::Approx(2.5));
  rows[0].report.tokens_per_s = 4096.0;
  const auto mixed = scan::analyze(m, rows);
  CHECK(mixed.throughput_unit == "tokens/s");
  CHECK(mixed.series[0].series.points.size() == 1);
  CHECK(mixed.series[0].series.infeasible.size() == 1);
}
