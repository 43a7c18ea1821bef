// Every bundled example runs as a test (examples-as-tests, after ns-3), two of them against golden
// step times, and the `inflect` command is driven as a user or a CI job would: exit codes, --json
// on stdout, one-line errors naming the file.
#include <doctest/doctest.h>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "cli_command.hpp"
#include "inflect/analysis/simulate.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/report_json.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/plan/schedule.hpp"

namespace {

namespace fs = std::filesystem;
using inflect::analysis::RunReport;

constexpr double kSumTolerance = 1e-9;  // relative: breakdown parts vs step_time_s
constexpr double kGoldenTolerance = 0.02;

std::vector<fs::path> bundled_examples() {
  std::vector<fs::path> out;
  const fs::path root = fs::path(INFLECT_SOURCE_DIR) / "workloads" / "examples";
  for (const fs::path& dir : {root, root / "whatif", root / "mesh", root / "custom-device", root / "frameworks"})
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file() && entry.path().extension() == ".yaml") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

RunReport run_symmetric(const fs::path& file) {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  inflect::plan::Experiment e = inflect::io::load_experiment(file.string());
  return inflect::analysis::simulate(e, {inflect::plan::Fidelity::symmetric, true, nullptr});
}

double breakdown_sum(const RunReport& r) {
  const auto& b = r.breakdown;
  return (b.compute + b.exposed_comm.total() + b.bubble + b.other).value();
}

using inflect::test::Command;
using inflect::test::inflect_cmd;

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < s.size()) {
    std::size_t nl = s.find('\n', pos);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("every bundled example loads and simulates with sane figures") {
  // Whether each example's peak memory fits the device. llama3-405b-16k-h100 fits only because it
  // recomputes every layer: stage 0 of 16 holds 16 micro-batches of 8 layers, and without
  // recomputation 34*s*b*h/tp = 570 MB per layer and micro-batch alone is 73 GB.
  const std::map<std::string, bool> expect_fits = {
      {"gpt3-175b-1024-a100", true}, {"gpt3-175b-a100", true},         {"llama-32l-1024", true},
      {"llama3-405b-16k-h100", true}, {"gpt3-175b-h100-pp8dp16", true}, {"gpt3-175b-h100", true},
      {"gpt3-175b-h200", true},       {"llama3-405b-tp8-cp2-pp16-h100", true}, {"deepseek-v3-dualpipe-h100", true},
      {"mixtral-8x22b-ep8-mi300x", true}, {"zaya1-like-dp-mi300x", true},
      {"gpt3-175b-a100-zero-bubble", true}, {"gpt3-175b-a100-dualpipev", true},
      {"llama3-8b-hot-gpu-h100", true}, {"llama3-8b-hot-gpu-h100-rebalanced", true},
      {"llama3-8b-dp8-example-192g", true}, {"llama3-70b-fp8-h100", true}, {"llama3-8b-32k-fa2-h100", true},
      {"bloom-176b-megatron-deepspeed-a100", true}, {"llama3-8b-torchtitan-h100", true},
      {"diloco-intellect1-like-h100", true}};
  const auto files = bundled_examples();
  // workloads/examples/whatif/gpt3-175b-a100.yaml and mesh/mixtral-8x22b-ep8-mi300x.yaml repeat
  // base examples under the same names. (custom-device/'s devices/ and topologies/ are its inputs.)
  CHECK(files.size() == 23);
  for (const auto& file : files) {
    CAPTURE(file.string());
    RunReport r = run_symmetric(file);
    CHECK(std::isfinite(r.step_time.value()));
    CHECK(r.step_time.value() > 0);
    CHECK(r.mfu > 0);
    CHECK(r.mfu < 1);
    CHECK(r.tokens_per_s > 0);
    // Thermally different devices (cluster.thermal) are not interchangeable: full fidelity.
    CHECK(r.simulator.fidelity == (r.name.find("hot-gpu") != std::string::npos ? "full" : "symmetric"));
    CHECK(r.power.modeled);
    CHECK(r.power.avg_device.value() > 0);
    CHECK(r.power.avg_device.value() <= r.power.cap.value());
    CHECK(r.thermal.peak_temp.value() > r.thermal.inlet.value());
    CHECK_FALSE(r.thermal.reached_shutdown);
    CHECK(r.breakdown.compute.value() > 0);
    CHECK(r.breakdown.bubble.value() >= 0);
    CHECK(r.breakdown.other.value() >= 0);
    CHECK(std::abs(breakdown_sum(r) - r.step_time.value()) <= kSumTolerance * r.step_time.value());
    CHECK(r.memory.known);
    auto it = expect_fits.find(r.name);
    REQUIRE_MESSAGE(it != expect_fits.end(), "no fit expectation for example ", r.name);
    CHECK(r.memory.fits == it->second);
    CHECK(r.memory.fits == (r.memory.peak.value() <= r.memory.capacity.value()));
  }
}

TEST_CASE("bundled hot-GPU experiment: the job-wide cost of one hot GPU per node, and a plan change") {
  // Figures of 2026-12-04 (their files' comments): nominal 3.80 s, one hot GPU per node 4.74 s,
  // the hot stage given 5 of 32 layers 3.52 s. Asserted loosely: the hot GPU costs the whole job
  // at least 10%, and the uneven split wins back at least 15% of the hot step.
  const fs::path dir = fs::path(INFLECT_SOURCE_DIR) / "workloads/examples/whatif";
  const RunReport hot = run_symmetric(dir / "llama3-8b-hot-gpu-h100.yaml");
  const RunReport fixed = run_symmetric(dir / "llama3-8b-hot-gpu-h100-rebalanced.yaml");
  inflect::plan::Experiment cool = inflect::io::load_experiment((dir / "llama3-8b-hot-gpu-h100.yaml").string());
  cool.cluster.thermal = {};
  const RunReport nominal = inflect::analysis::simulate(cool);
  CHECK(hot.simulator.fidelity == "full");
  CHECK(hot.simulator.fidelity_note.find("cluster.thermal") != std::string::npos);
  CHECK(nominal.simulator.fidelity == "symmetric");
  CHECK(hot.step_time.value() > 1.10 * nominal.step_time.value());
  CHECK(fixed.step_time.value() < 0.85 * hot.step_time.value());
  // The cost is heat on the hot stage: the hot devices hold their slowdown temperature, and the
  // slowdown shows in the breakdown of the rank that waits for them (idle, as bubble or other).
  CHECK(hot.thermal.thermal_throttled_fraction > 0);
  // Held at the 87 C slowdown on average over the step; with the die's measured 0.46 s time
  // constant the hottest kernels (a collective's power on top of the kernel's) overshoot by up to
  // ~2 C, under the 89 C where the hardware's own slowdown acts.
  CHECK(hot.thermal.peak_temp.value() >= 86.9);
  CHECK(hot.thermal.peak_temp.value() <= 89.5);
  CHECK(nominal.thermal.thermal_throttled_fraction == 0);
  CHECK(fixed.plan.find("layers=9/9/9/5") != std::string::npos);
}

TEST_CASE("golden step times of two bundled examples") {
  // Regression guard of the current model, NOT a fit to published data: these are the step times
  // the simulator produced when this test was written (commit 724e290 plus work in progress). A
  // deliberate model change that moves them by more than 2% must update them here, with the reason.
  // Issue 19 (collectives priced by NCCL's own latency model: base, per-step and pipeline fill):
  // GPT-3 175B 23.105 -> 23.822 s; the latency-bound Llama 32-layer at 1,024 GPUs 0.262 -> 0.299 s.
  // Issue 20 (A100 bf16 GEMMs on the sustained footing of the Hopper anchors: the Azure sweep's
  // 8192^3 after 10,000 warm-ups, 253.7 TFLOP/s, instead of the 271.2 MAMF burst): GPT-3 175B
  // 23.822 -> 25.517 s (x1.071, the 271.2 / 253.7 = 1.069 of its GEMMs).
  struct Golden {
    const char* file;
    double step_time_s;
  };
  const Golden cases[] = {
      {"workloads/examples/gpt3-175b-a100.yaml", 25.5169},
      {"workloads/examples/llama-32l-1024.yaml", 0.298799},
  };
  for (const auto& g : cases) {
    CAPTURE(g.file);
    RunReport r = run_symmetric(fs::path(INFLECT_SOURCE_DIR) / g.file);
    CHECK(r.step_time.value() == doctest::Approx(g.step_time_s).epsilon(kGoldenTolerance));
  }
}

TEST_CASE("cli: run --json prints report.json and nothing else") {
  Command c = inflect_cmd("run workloads/examples/llama-32l-1024.yaml --json", false);
  REQUIRE(c.rc == 0);
  nlohmann::json j;
  REQUIRE_NOTHROW(j = nlohmann::json::parse(c.out));  // throws on any non-JSON text around it
  CHECK(j.at("name") == "llama-32l-1024");
  CHECK(j.at("step_time_s").get<double>() > 0);
  CHECK(j.at("breakdown").is_object());
  CHECK(j.at("memory").at("fits").get<bool>());
  // Same figure as the library call.
  RunReport r = run_symmetric(fs::path(INFLECT_SOURCE_DIR) / "workloads/examples/llama-32l-1024.yaml");
  CHECK(j.at("step_time_s").get<double>() == doctest::Approx(r.step_time.value()).epsilon(1e-9));
}

TEST_CASE("cli: validate accepts a good file") {
  Command c = inflect_cmd("validate workloads/examples/gpt3-175b-a100.yaml", true);
  CHECK(c.rc == 0);
  CHECK(c.out.find("ok") != std::string::npos);
}

TEST_CASE("cli: validate rejects every tests/errors file with exit 2 and one line naming it") {
  // (tests/io/test_errors.cpp: inputs/ holds files the cases read; `# at: F` names the file an
  // error is in when it is not the case.)
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(INFLECT_SOURCE_DIR) / "tests" / "errors"))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml" && entry.path().parent_path().filename() != "inputs")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 10);
  for (const auto& file : files) {
    const std::string rel = fs::relative(file, INFLECT_SOURCE_DIR).string();
    CAPTURE(rel);
    Command c = inflect_cmd("validate '" + rel + "'", true);
    CHECK(c.rc == 2);
    auto lines = lines_of(c.out);
    CHECK(lines.size() == 1);
    std::string at;
    {
      std::ifstream in(file);
      std::string line;
      std::getline(in, line);
      if (std::getline(in, line) && line.rfind("# at: ", 0) == 0) at = line.substr(6);
    }
    CHECK(c.out.find(at.empty() ? rel : fs::relative(file.parent_path() / at, INFLECT_SOURCE_DIR).string()) != std::string::npos);
  }
}

TEST_CASE("cli: devices prints the seven catalog devices") {
  Command c = inflect_cmd("devices", true);
  REQUIRE(c.rc == 0);
  const char* devices[] = {"a100-sxm-80g", "h100-nvl", "h100-sxm", "h200-sxm", "mi250-gcd", "mi250x-gcd", "mi300x"};
  for (const char* d : devices) {
    CAPTURE(d);
    CHECK(c.out.find(d) != std::string::npos);
  }
  // A header and exactly one row per device.
  CHECK(lines_of(c.out).size() == 8);
}

TEST_CASE("cli: an unknown subcommand exits non-zero") {
  Command c = inflect_cmd("frobnicate", true);
  CHECK(c.rc != 0);
  Command none = inflect_cmd("", true);
  CHECK(none.rc != 0);
}

TEST_CASE("the mesh form and the short form of the same plan give the same report") {
  // docs/plans.md: workloads/examples/mesh/mixtral-8x22b-ep8-mi300x.yaml restates the plan of
  // workloads/examples/mixtral-8x22b-ep8-mi300x.yaml as `mesh: [dp 32, pp 4, ep 8 in dp, tp 2]`.
  const fs::path root(INFLECT_SOURCE_DIR);
  const RunReport a = run_symmetric(root / "workloads/examples/mixtral-8x22b-ep8-mi300x.yaml");
  const RunReport b = run_symmetric(root / "workloads/examples/mesh/mixtral-8x22b-ep8-mi300x.yaml");
  CHECK(a.plan == b.plan);
  CHECK(inflect::io::report_to_json(a, false) == inflect::io::report_to_json(b, false));
  // A different placement order in the mesh is a different plan: dp innermost puts each EP group
  // (ep consecutive dp ranks) inside a node and TP across nodes; here that is faster (the token
  // all-to-alls outweigh TP's traffic), but any difference shows the order took effect.
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  const std::string yaml =
      "name: m\ncluster: {topology: topologies/mi300x.yaml, nodes: 32}\nmodel: {preset: mixtral-8x22b}\n"
      "training: {seq_len: 4096, global_batch: 1024, micro_batch: 1}\n"
      "parallel: {mesh: [tp 2, pp 4, ep 8 in dp, dp 32], sequence_parallel: true, zero: 1, recompute: selective}\n";
  const auto e = inflect::io::parse_experiment(inflect::io::load_yaml_string(yaml, "m.yaml"), INFLECT_SOURCE_DIR);
  CHECK(e.parallel.order.front() == inflect::plan::Dim::dp);
  CHECK(std::abs(inflect::analysis::simulate(e).step_time.value() - a.step_time.value()) > 0.01 * a.step_time.value());
}

TEST_CASE("a custom schedule written out as 1F1B's or ZB-H1's order gives the generated schedule's report") {
  // docs/plans.md: schedule: custom with parallel.custom_schedule. GPT-1.7B on one DGX H100 node,
  // TP2 PP4, 8 micro-batches; the step strings are what stage_schedule generates.
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  auto run = [](const std::string& parallel) {
    const std::string yaml = "name: c\ncluster: {topology: topologies/dgx-h100.yaml, nodes: 1}\nmodel: {preset: gpt-1.7b}\n"
                             "training: {seq_len: 2048, global_batch: 8, micro_batch: 1}\n"
                             "parallel: {tp: 2, pp: 4, sequence_parallel: true, " + parallel + "}\n";
    return inflect::analysis::simulate(inflect::io::parse_experiment(inflect::io::load_yaml_string(yaml, "c.yaml"), INFLECT_SOURCE_DIR));
  };
  const std::string one_f_one_b =
      R"(schedule: custom, custom_schedule: ["F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7", "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7", )"
      R"("F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7", "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7"])";
  const RunReport generated = run("schedule: 1f1b"), custom = run(one_f_one_b);
  CHECK(custom.plan.find("custom") != std::string::npos);
  CHECK(custom.step_time.value() == generated.step_time.value());
  CHECK(custom.breakdown.bubble.value() == generated.breakdown.bubble.value());
  CHECK(custom.memory.peak.value() == generated.memory.peak.value());
  // GPipe's order (every forward, then every backward) holds all 8 micro-batches: more memory,
  // and a step no shorter.
  std::string gpipe = R"(schedule: custom, custom_schedule: [)";
  for (int r = 0; r < 4; ++r) gpipe += std::string(r ? ", " : "") + R"("F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7")";
  gpipe += "]";
  const RunReport all_forward = run(gpipe);
  CHECK(all_forward.memory.peak.value() > generated.memory.peak.value());
  CHECK(all_forward.step_time.value() >= generated.step_time.value() * 0.999);
  // Interleaved with two chunks per rank, written out step by step (what stage_schedule gives).
  std::string interleaved = "schedule: custom, virtual_stages: 2, custom_schedule: [";
  inflect::plan::ScheduleShape x;
  x.stages = 4;
  x.micro_batches = 8;
  x.virtual_stages = 2;
  x.layers = 24;
  for (int r = 0; r < 4; ++r) {
    interleaved += r ? ", \"" : "\"";
    bool first = true;
    for (const auto& st : inflect::plan::stage_schedule(inflect::plan::Schedule::interleaved, r, x)) {
      if (!first) interleaved += ' ';
      first = false;
      interleaved += st.kind == inflect::plan::StepKind::forward ? 'F' : 'B';
      interleaved += std::to_string(st.micro_batch);
      interleaved += '.';
      interleaved += std::to_string(st.chunk / 4);
    }
    interleaved += '"';
  }
  interleaved += "]";
  const RunReport virt = run("schedule: interleaved, virtual_stages: 2"), custom_virt = run(interleaved);
  CHECK(custom_virt.step_time.value() == virt.step_time.value());
  CHECK(custom_virt.memory.peak.value() == virt.memory.peak.value());
}

// ---- the bundled scans (workloads/scans/), as the demo runs them ----

#include "inflect/scan/report.hpp"
#include "inflect/scan/runner.hpp"

namespace {

struct ScanRun {
  inflect::scan::ScanOutcome outcome;
  inflect::scan::ScanAnalysis analysis;
};

const inflect::scan::ScanRow& row_of(const ScanRun& s, const std::string& key) {
  for (const auto& r : s.outcome.rows)
    if (r.key == key) return r;
  FAIL("no row " << key);
  return s.outcome.rows.front();
}

ScanRun run_bundled_scan(const std::string& name) {
  inflect::io::set_project_root(INFLECT_SOURCE_DIR);
  const auto spec = inflect::scan::load_scan(std::string(INFLECT_SOURCE_DIR) + "/workloads/scans/" + name + ".yaml");
  const auto dir = fs::temp_directory_path() / ("inflect-test-bundled-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ScanRun s;
  s.outcome = inflect::scan::run_scan(spec, dir.string(), {});
  s.analysis = inflect::scan::analyze(s.outcome.meta, s.outcome.rows);
  return s;
}

}  // namespace

TEST_CASE("bundled scan: Llama-3-70B on 128..2,048 H100s, FSDP against TP and PP hybrids") {
  const auto s = run_bundled_scan("llama3-70b-h100-scaling");
  REQUIRE(s.outcome.rows.size() == 20);
  // FSDP over 2,048 replicas cannot split 1,024 sequences: kept, with the reason, not dropped.
  const auto& fsdp2048 = row_of(s, "plan=fsdp;cluster.nodes=256");
  CHECK(fsdp2048.status == inflect::scan::RowStatus::invalid);
  CHECK(fsdp2048.report.devices == 2048);
  CHECK(fsdp2048.reason.find("global_batch") != std::string::npos);
  // Golden figures (2% band), 2026-12-04, re-pinned by issue 19's collective model (+3%): FSDP hides its per-layer gathers behind compute, so it
  // leads at every scale where it is possible; TP8+PP2's 1F1B bubble grows as micro-batches per
  // replica fall from 128 to 8.
  CHECK(row_of(s, "plan=fsdp;cluster.nodes=128").report.tokens_per_s == doctest::Approx(1.039e6).epsilon(kGoldenTolerance));
  CHECK(row_of(s, "plan=tp2+fsdp;cluster.nodes=256").report.step_time.value() == doctest::Approx(4.502).epsilon(kGoldenTolerance));
  const auto& pp = row_of(s, "plan=tp8+pp2;cluster.nodes=256");
  CHECK(pp.report.step_time.value() == doctest::Approx(6.582).epsilon(kGoldenTolerance));
  CHECK(pp.report.breakdown.bubble.value() > row_of(s, "plan=tp8+pp2;cluster.nodes=16").report.breakdown.bubble.value() / 16 * 2);
  int infeasible = 0, crossings = 0;
  for (const auto& f : s.analysis.findings) {
    infeasible += f.kind == inflect::analysis::FindingKind::infeasible;
    crossings += f.kind == inflect::analysis::FindingKind::crossover;
  }
  CHECK(infeasible == 1);
  CHECK(crossings == 0);
}

TEST_CASE("bundled scan: GPT-3 175B on H100 against H200, PP8 against PP4") {
  const auto s = run_bundled_scan("gpt3-175b-h100-vs-h200");
  REQUIRE(s.outcome.rows.size() == 16);
  for (const auto& r : s.outcome.rows) CHECK(r.status == inflect::scan::RowStatus::ok);
  // PP4 (fewer bubbles, twice the parameters per GPU to reduce over DP) wins at 128 GPUs by
  // 0.8%; at 256 the two are tied (within analysis::kCrossoverMargin, 0.5%); PP8 leads from 512:
  // one crossover between 128 and 512 on both clusters. The H200 leads the H100 GPU for GPU by
  // about 4%: their GEMMs are the same (one die, one 700 W limit: both anchored to the GEMM
  // sustained on this project's H200), its HBM is 1.4x faster for the memory-bound kernels.
  int crossings = 0, leads = 0;
  for (const auto& f : s.analysis.findings) {
    if (f.kind == inflect::analysis::FindingKind::crossover) {
      ++crossings;
      CHECK(f.series.find("tp8+pp8") == 0);
      CHECK(f.from_scale == 128);
      CHECK(f.to_scale == 512);
    }
    if (f.kind == inflect::analysis::FindingKind::lead && f.series.find("h200") != std::string::npos) ++leads;
  }
  CHECK(crossings == 2);
  CHECK(leads == 2);
  CHECK(row_of(s, "plan=tp8+pp8;cluster.topology=../../topologies/dgx-h100.yaml;cluster.nodes=128").report.step_time.value() ==
        doctest::Approx(7.926).epsilon(kGoldenTolerance));  // 7.640 before issue 19's collective model
}

TEST_CASE("bundled scan: Llama-3-70B FSDP on 128..2,048 H100s with devices that differ in speed (docs/variability.md)") {
  const auto s = run_bundled_scan("llama3-70b-h100-variability");
  REQUIRE(s.outcome.rows.size() == 30);
  for (const auto& r : s.outcome.rows) CHECK(r.status == inflect::scan::RowStatus::ok);
  auto at = [&](const char* plan, int nodes, const char* spread) -> const inflect::analysis::RunReport& {
    return row_of(s, fmt::format("plan={};cluster.nodes={};cluster.variability.gpu_speed_spread={}", plan, nodes, spread)).report;
  };
  auto per_gpu = [](const inflect::analysis::RunReport& r) { return *r.tokens_per_s / r.devices; };
  for (const char* plan : {"tp1", "tp2"})
    for (int nodes : {16, 32, 64, 128, 256}) {
      CAPTURE(plan);
      CAPTURE(nodes);
      // Uniform devices: no straggler row. With a spread, the row is there and grows with it.
      CHECK(!at(plan, nodes, "0").breakdown.stragglers.has_value());
      const auto& a = at(plan, nodes, "0.02");
      const auto& b = at(plan, nodes, "0.04");
      REQUIRE(a.breakdown.stragglers.has_value());
      CHECK(a.breakdown.stragglers->value() > 0);
      CHECK(b.breakdown.stragglers->value() > a.breakdown.stragglers->value());
      CHECK(per_gpu(b) < per_gpu(a));
      CHECK(per_gpu(a) < per_gpu(at(plan, nodes, "0")));
    }
  // The slowest of 2,048 devices is further out than the slowest of 128 (expected 1.071 against
  // 1.053 at 0.02: the largest of N normal draws grows like sqrt(2 ln N)); seed 1 draws 1.073 and
  // 1.054. So TP1's per-GPU throughput falls more from 128 to 2,048 GPUs than with uniform devices
  // (5.2% against 3.8%), but nowhere near the 37% Fernandez et al. measured, and TP1 still leads
  // TP2 at every scale: both wait for the same slowest device.
  CHECK(at("tp1", 256, "0.02").variability.slowest_device_factor > at("tp1", 16, "0.02").variability.slowest_device_factor);
  CHECK(at("tp1", 256, "0.02").variability.slowest_device_factor == doctest::Approx(1.0728).epsilon(1e-4));
  const double fall_uniform = 1 - per_gpu(at("tp1", 256, "0")) / per_gpu(at("tp1", 16, "0"));
  const double fall_spread = 1 - per_gpu(at("tp1", 256, "0.02")) / per_gpu(at("tp1", 16, "0.02"));
  CHECK(fall_spread > fall_uniform);
  CHECK(fall_spread < 0.10);
  for (const auto& f : s.analysis.findings) CHECK(f.kind != inflect::analysis::FindingKind::crossover);
}

TEST_CASE("bundled scan: micro-batch 1..8 on H200s in a cool and a hot hall: power, heat, throttling") {
  const auto s = run_bundled_scan("h200-microbatch-power");
  REQUIRE(s.outcome.rows.size() == 8);
  auto row = [&](int inlet, int mb) {
    return row_of(s, fmt::format("cluster.inlet_c={};training.micro_batch={}", inlet, mb));
  };
  // With the H200's measured power and heat (calibration/traces/h200): every micro-batch holds
  // the 700 W limit (the measured device did from micro-batch 2), the die settles near
  // inlet + 0.055 C/W x 680 W (63 C at 25 C, as the measured device held), below the 87 C slowdown
  // even in the 42 C hall (80 C), and the hot hall costs 1.4-1.7% of throughput through leakage (a hotter die draws more static power and
  // gets less clock under the same limit). Gains per doubling stay positive (8%, 16%, 8%).
  for (int inlet : {25, 42}) {
    CAPTURE(inlet);
    for (int mb : {1, 2, 4, 8}) {
      CAPTURE(mb);
      const auto& r = row(inlet, mb);
      CHECK(r.status == inflect::scan::RowStatus::ok);
      CHECK(r.report.thermal.limiter == "power");
      CHECK(r.report.power.avg_device.value() == doctest::Approx(678).epsilon(0.02));
      CHECK(r.report.thermal.peak_temp.value() == doctest::Approx(inlet + 0.055 * 690).epsilon(0.03));
      CHECK(r.report.thermal.peak_temp.value() < 80);
      CHECK(row(42, mb).report.tokens_per_s < row(25, mb).report.tokens_per_s);
      CHECK(row(42, mb).report.tokens_per_s > 0.97 * row(25, mb).report.tokens_per_s.value());
      if (mb > 1) CHECK(r.report.tokens_per_s > row(inlet, mb / 2).report.tokens_per_s);
    }
  }
  // Golden figures (2026-12-04, 2% band).
  CHECK(row(25, 1).report.tokens_per_s == doctest::Approx(3.215e5).epsilon(kGoldenTolerance));
  CHECK(row(25, 8).report.tokens_per_s == doctest::Approx(4.329e5).epsilon(kGoldenTolerance));
  CHECK(row(42, 8).report.tokens_per_s == doctest::Approx(4.256e5).epsilon(kGoldenTolerance));
  CHECK(row(42, 8).report.breakdown.throttle.value() > 0);
  CHECK(row(25, 8).report.breakdown.throttle.value() == 0);
}

TEST_CASE("cli: scan, report and merge as a batch job drives them") {
  const std::string out = (fs::temp_directory_path() / ("inflect-test-cli-scan-" + std::to_string(::getpid()))).string();
  fs::remove_all(out);
  Command c = inflect_cmd("scan workloads/scans/gpt3-175b-h100-vs-h200.yaml --jobs 2 --out " + out, true);
  REQUIRE(c.rc == 0);
  CHECK(c.out.find("16 points") != std::string::npos);
  CHECK(c.out.find("[crossover]") != std::string::npos);
  CHECK(c.out.find("scan: 16/16") != std::string::npos);  // plain progress lines when not a terminal
  for (const char* f : {"results.csv", "results.jsonl", "scan.json", "report.md", "report.html"})
    CHECK(fs::exists(fs::path(out) / f));
  fs::remove(fs::path(out) / "report.html");
  CHECK(inflect_cmd("report " + out, true).rc == 0);
  CHECK(fs::exists(fs::path(out) / "report.html"));
  CHECK(inflect_cmd("scan workloads/scans/gpt3-175b-h100-vs-h200.yaml --shard 0/2 --out " + out, true).rc == 2);
  CHECK(inflect_cmd("report /nonexistent/dir", true).rc == 2);
  Command bad = inflect_cmd("scan tests/errors/plan/does-not-exist.yaml", true);
  CHECK(bad.rc == 2);
}

TEST_CASE("bundled search: Llama-3-405B on 16,384 H100s, through the cli") {
  const std::string out = (fs::temp_directory_path() / ("inflect-test-cli-search-" + std::to_string(::getpid()))).string();
  fs::remove_all(out);
  Command c = inflect_cmd("search workloads/search/llama3-405b-16k-h100.yaml --top 3 --jobs 2 --out " + out, false);
  REQUIRE(c.rc == 0);
  CHECK(c.out.find("plans: 10272 enumerated, 5300 pruned (memory does not fit), 4972 estimated, 3 simulated") != std::string::npos);
  CHECK(c.out.find("plans/s") != std::string::npos);
  std::ifstream in(fs::path(out) / "search.json");
  REQUIRE(in.good());
  const auto j = nlohmann::json::parse(in);
  CHECK(j["enumerated"] == 10272);
  CHECK(j["simulated"] == 3);
  REQUIRE(j["plans"].size() == 3);
  // Golden figures (2% band), 2026-12-04 (H100 GEMMs and attention from the H200 traces; DualPipe
  // pays the sum of its two parameter copies' gradients): the engine's best of the estimate's top
  // three is a DualPipeV plan with TP4 inside the node and CP8 across four nodes; it fits (64 GB
  // of 80). DualPipe at pp32 runs within 0.1% of it. Issue 19's collectives (NCCL's latencies, no
  // fill on rings) swapped the two: DualPipe pp32 5.596 s, DualPipeV pp16 5.602 s (was 5.655, 5.656).
  const auto& best = j["plans"][0];
  CHECK(best["plan"] == "tp4 pp32 dp16 cp8 sp zero1 dualpipe recompute=none mb1 m=128");
  CHECK(best["plan"] == best["report"]["plan"]);
  CHECK(best["report"]["step_time_s"].get<double>() == doctest::Approx(5.596).epsilon(kGoldenTolerance));
  CHECK(best["report"]["memory"]["fits"] == true);
  double previous = 0;
  for (const auto& p : j["plans"]) {
    const double engine = p["report"]["step_time_s"].get<double>(), estimate = p["estimate"]["step_time_s"].get<double>();
    CHECK(engine >= previous);  // ranked by the engine
    CHECK(estimate == doctest::Approx(engine).epsilon(0.10));
    previous = engine;
  }
  // --json prints search.json alone; bad input exits 2.
  Command js = inflect_cmd("search workloads/search/llama3-405b-16k-h100.yaml --top 1 --jobs 2 --json", false);
  REQUIRE(js.rc == 0);
  CHECK(nlohmann::json::parse(js.out)["simulated"] == 1);
  CHECK(inflect_cmd("search workloads/examples/gpt3-175b-a100.yaml", true).rc == 2);
}
