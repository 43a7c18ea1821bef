// Several jobs on shared sites through the whole pipeline (jobs file -> compile -> merged graph ->
// engine; docs/geo.md "Several jobs on shared sites"): jobs on disjoint sites run exactly as each
// alone, and two jobs whose all-reduces share one WAN link each see half of it.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>

#include "inflect/analysis/jobs.hpp"
#include "inflect/analysis/simulate.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/jobs_loader.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "temp_dir.hpp"

namespace {

using inflect::analysis::JobPolicy;
using inflect::analysis::JobResult;
using inflect::analysis::JobsRun;
using inflect::test::TempDir;
using inflect::test::write_file;

const std::string kTopo = std::string(INFLECT_SOURCE_DIR) + "/topologies/dgx-h100.yaml";

JobsRun run(const TempDir& t, const std::string& yaml) {
  write_file(t.path / "jobs.yaml", yaml);
  const auto spec = inflect::io::load_jobs((t.path / "jobs.yaml").string());
  inflect::analysis::JobsOptions o;
  o.threads = 2;
  return inflect::analysis::run_jobs(spec, o);
}

const inflect::analysis::PolicyResult& policy(const JobsRun& r, JobPolicy p) {
  for (const auto& x : r.ranked)
    if (x.policy == p) return x;
  FAIL("policy not run");
  return r.ranked.front();
}

bool same_breakdown(const inflect::analysis::Breakdown& a, const inflect::analysis::Breakdown& b) {
  return a.compute == b.compute && a.interference == b.interference && a.throttle == b.throttle &&
         a.exposed_comm.dp == b.exposed_comm.dp && a.exposed_comm.tp == b.exposed_comm.tp && a.exposed_comm.pp == b.exposed_comm.pp &&
         a.exposed_comm.cp == b.exposed_comm.cp && a.exposed_comm.ep == b.exposed_comm.ep && a.bubble == b.bubble &&
         a.other == b.other && a.critical_rank_note == b.critical_rank_note;
}

// A DGX H100 node cut to one GPU and one NIC (the same figures otherwise): a job of two nodes is
// two ranks, one per site under spread, so a hand-worked all-reduce crosses the WAN alone.
std::string one_gpu_topology() {
  std::string s = inflect::test::read_file(kTopo);
  auto swap = [&](const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    s.replace(at, from.size(), to);
  };
  swap("name: dgx-h100\n", "name: one-h100\n");
  swap("devices_per_node: 8\n", "devices_per_node: 1\n");
  swap("nics_per_node: 8", "nics_per_node: 1");
  return s;
}

}  // namespace

TEST_CASE("jobs: two jobs on disjoint sites run exactly as each alone, and as its experiment on that site") {
  const TempDir t("jobs-disjoint");
  // Two different plans of a short Llama-3-8B, each on 2 nodes: a is FSDP over its 16 GPUs (its
  // gathers cross its nodes through the leaf), b is tp 8 x dp 2.
  const std::string model = "model: {preset: llama3-8b, layers: 8}\ntraining: {seq_len: 2048, global_batch: 32, micro_batch: 1}\n";
  write_file(t.path / "a.yaml", fmt::format("name: a\ncluster: {{topology: {}, nodes: 2}}\n{}parallel: {{fsdp: true}}\n", kTopo, model));
  write_file(t.path / "b.yaml", fmt::format("name: b\ncluster: {{topology: {}, nodes: 2}}\n{}parallel: {{tp: 8}}\n", kTopo, model));
  const JobsRun r = run(t, fmt::format("cluster:\n  sites:\n    - {{name: east, topology: {0}, nodes: 2}}\n"
                                       "    - {{name: west, topology: {0}, nodes: 2}}\n"
                                       "  wan:\n    - {{between: [east, west], bandwidth: 100Gb/s, latency: 5ms, transport: ideal}}\n"
                                       "jobs:\n  - {{name: a, experiment: a.yaml, nodes: 2}}\n  - {{name: b, experiment: b.yaml, nodes: 2}}\n"
                                       "policies: [pack]\n",
                                       kTopo));
  const auto& pack = policy(r, JobPolicy::pack);
  REQUIRE(pack.jobs.size() == 2);
  for (const char* name : {"a", "b"}) {
    const JobResult& j = pack.jobs[name[0] == 'a' ? 0 : 1];
    INFO(name);
    CHECK(j.sites.size() == 1);  // pack: each job fills its own site
    CHECK(j.shared.empty());     // nothing of the other job on any of its links
    // Together and alone on the same devices: the same figures to the bit.
    CHECK(j.step_together == j.step_alone);
    CHECK(same_breakdown(j.together, j.alone));
    CHECK(j.slowdown == 0);
    CHECK(j.explanation == "no slowdown: no link carries another job's traffic");
    // And the job's own experiment on a plain cluster of its site's 2 nodes, at full fidelity.
    inflect::analysis::SimulateOptions so;
    so.fidelity = inflect::plan::Fidelity::full;
    const auto own = inflect::analysis::simulate(inflect::io::load_experiment((t.path / (std::string(name) + ".yaml")).string()), so);
    CHECK(own.step_time == j.step_together);
    CHECK(own.tokens_per_s == j.tokens_per_s_together);
  }
  CHECK(pack.tokens_per_s == pack.tokens_per_s_alone);
}

TEST_CASE("jobs: two all-reduces sharing one WAN link each get half of it") {
  // Worked case. Each job is a trace of two ranks running one all-reduce of n = 1 GB and nothing
  // else; nodes of one GPU, two per site; the WAN 100 Gb/s = 12.5 GB/s per direction, 1 ms one way,
  // nothing else limiting it (transport: ideal). spread gives job a nodes {0 (east), 2 (west)} and
  // b {1, 3}: both all-reduces cross the WAN. Between two ranks an all-reduce sends each rank's
  // buffer over once per direction (a ring's reduce-scatter and all-gather, n/2 each; a tree's
  // reduce and broadcast the same), so the WAN carries 1 GB each way: alone 1 GB / 12.5 GB/s =
  // 80 ms of transfer plus the latencies; together max-min gives each 6.25 GB/s, 160 ms. The
  // slowdown is the halving: +80 ms, and together at 100 Gb/s equals alone at 50 Gb/s exactly.
  // pack puts each job in one site: nothing crosses, each runs as alone.
  const TempDir t("jobs-wan");
  write_file(t.path / "one-gpu.yaml", one_gpu_topology());
  write_file(t.path / "ar.json",
             "{\"format\":\"inflect-exec-graph\",\"version\":1,\"name\":\"ar\",\"total_ranks\":2,\"simulated_ranks\":[0,1],"
             "\"represents\":[1,1],\"streams\":[\"compute\",\"dp\"],\"meta\":{\"tokens_per_step\":1000.0},\"groups\":[[[0,1],[]]],"
             "\"kernels\":[],\"collectives\":[[\"grads\",\"all_reduce\",\"dp\",0,1000000000.0]],"
             "\"ops\":[[0,1,1,0,1,-1,0],[1,1,1,0,1,-1,0]]}\n");
  write_file(t.path / "ar.yaml", "name: ar\ncluster: {topology: one-gpu.yaml, nodes: 2}\nworkload: {trace: ar.json}\n");
  auto jobs = [](const std::string& bandwidth) {
    return fmt::format("cluster:\n  sites:\n    - {{name: east, topology: one-gpu.yaml, nodes: 2}}\n"
                       "    - {{name: west, topology: one-gpu.yaml, nodes: 2}}\n"
                       "  wan:\n    - {{between: [east, west], bandwidth: {}, latency: 1ms, transport: ideal}}\n"
                       "jobs:\n  - {{name: a, experiment: ar.yaml, nodes: 2}}\n  - {{name: b, experiment: ar.yaml, nodes: 2}}\n",
                       bandwidth);
  };
  const JobsRun full = run(t, jobs("100Gb/s"));
  const JobsRun half = run(t, jobs("50Gb/s"));
  const auto& spread = policy(full, JobPolicy::spread);
  for (const JobResult& j : spread.jobs) {
    INFO(j.name);
    CHECK(j.nodes == (j.name == "a" ? std::vector<int>{0, 2} : std::vector<int>{1, 3}));
    CHECK(j.step_together.value() - j.step_alone.value() == doctest::Approx(0.080).epsilon(1e-9));
    CHECK(j.step_alone.value() == doctest::Approx(0.080 + 0.002).epsilon(0.01));  // 80 ms + the 1 ms WAN twice and the fabric's us
    // Together at W is alone at W/2, to the bit.
    const auto& other = policy(half, JobPolicy::spread).jobs[j.name == "a" ? 0 : 1];
    CHECK(j.step_together == other.step_alone);
    // The explanation: the dp all-reduce's exposed time grew, on the WAN both jobs load.
    CHECK(j.together.exposed_comm.dp - j.alone.exposed_comm.dp == j.step_together - j.step_alone);
    CHECK_MESSAGE(j.explanation.find("exposed DP communication +80 ms of the +80 ms") != std::string::npos, j.explanation);
    CHECK_MESSAGE(j.explanation.find("WAN east.core->west.core (a: dp 1 GB, b: dp 1 GB per step)") != std::string::npos, j.explanation);
    REQUIRE(!j.shared.empty());
    CHECK(j.shared.front().cls == inflect::net::LinkClass::wan);
    CHECK(j.shared.front().uses.size() == 2);
    CHECK(j.shared.front().uses[0].bytes == doctest::Approx(1e9));
  }
  // pack first: nothing shared, nothing across the WAN.
  REQUIRE(full.ranked.size() == 2);
  CHECK(full.ranked.front().policy == JobPolicy::pack);
  for (const JobResult& j : full.ranked.front().jobs) CHECK(j.step_together == j.step_alone);
  CHECK(full.ranked.front().tokens_per_s > spread.tokens_per_s);
}

TEST_CASE("jobs: a trace job must have as many ranks as its nodes have devices") {
  const TempDir t("jobs-trace-ranks");
  write_file(t.path / "one-gpu.yaml", one_gpu_topology());
  write_file(t.path / "ar.json",
             "{\"format\":\"inflect-exec-graph\",\"version\":1,\"name\":\"ar\",\"total_ranks\":2,\"simulated_ranks\":[0,1],"
             "\"represents\":[1,1],\"streams\":[\"dp\"],\"meta\":{},\"groups\":[[[0,1],[]]],"
             "\"kernels\":[],\"collectives\":[[\"grads\",\"all_reduce\",\"dp\",0,1000.0]],\"ops\":[[0,0,1,0,1,-1,0],[1,0,1,0,1,-1,0]]}\n");
  write_file(t.path / "ar.yaml", "name: ar\ncluster: {topology: one-gpu.yaml, nodes: 2}\nworkload: {trace: ar.json}\n");
  CHECK_THROWS_WITH_AS(run(t, "cluster: {topology: one-gpu.yaml, nodes: 4}\njobs:\n  - {name: a, experiment: ar.yaml, nodes: 3}\n"),
                       doctest::Contains("job 'a': its trace has 2 ranks but the job has 3 devices"), inflect::core::Error);
}
