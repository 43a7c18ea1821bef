// `inflect bench` for replayed traces: Chakra files written like another tool's (no inflect_*
// attributes) for a synthetic job, then loaded and simulated as a user would (`workload.chakra`).
// Two cases: 64 ranks x 100,000 nodes whose durations differ from rank to rank (every file parsed,
// ordered and simulated), and 1,024 byte-identical rank files against one (identical files are
// parsed once and stored as copies).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "cli/commands.hpp"
#include "inflect/analysis/simulate.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/workload/chakra_export.hpp"

namespace inflect::cli {
namespace {

namespace fs = std::filesystem;
using workload::RankId;

// A tensor- and data-parallel job: `ranks` ranks, tensor-parallel groups of 8 (one node), data-
// parallel groups across them; per rank `ops` ops in blocks of two GEMMs, a tensor-parallel
// all-reduce and an elementwise kernel, each waiting for the one before, and a data-parallel
// all-reduce every 250 blocks. With `vary`, kernel durations differ from rank to rank by up to
// 1.6% (as measured ones do); without, every rank is the same and the job purely data-parallel
// (no tensor-parallel all-reduce), so that every rank writes the same bytes.
workload::ExecutionGraph synthetic_job(int ranks, int ops, bool vary) {
  workload::ExecutionGraph g;
  g.name = "synthetic";
  std::vector<RankId> all(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) all[static_cast<std::size_t>(r)] = static_cast<RankId>(r);
  g.set_ranks(ranks, all, std::vector<std::uint32_t>(static_cast<std::size_t>(ranks), 1));
  const auto compute = g.stream("compute"), comm = g.stream("comm");
  const int tp = ranks >= 8 && vary ? 8 : 1;
  std::vector<workload::GroupId> tp_group, dp_group;
  for (int r = 0; r < ranks; r += tp) {
    workload::Group grp;
    for (int i = 0; i < tp; ++i) grp.members.push_back(static_cast<RankId>(r + i));
    tp_group.push_back(g.add_group(grp));
  }
  for (int i = 0; i < tp; ++i) {
    workload::Group grp;
    for (int r = i; r < ranks; r += tp) grp.members.push_back(static_cast<RankId>(r));
    dp_group.push_back(g.add_group(grp));
  }
  // kernels: three names x 17 duration variants
  std::vector<std::uint32_t> kernels;
  const char* names[] = {"sm90_xmma_gemm_bf16", "sm90_xmma_gemm_bf16_nt", "elementwise_kernel"};
  const double base_us[] = {410.0, 380.0, 35.0};
  for (int k = 0; k < 3; ++k)
    for (int v = 0; v < 17; ++v) {
      workload::Kernel kern;
      kern.name = names[k];
      kern.recorded = core::Time::from_seconds(base_us[k] * (1 + v / 1000.0) * 1e-6);
      kernels.push_back(g.add_kernel(kern));
    }
  // an all-reduce of `bytes` on each of `groups`
  auto all_reduces = [&](const char* name, const std::vector<workload::GroupId>& groups, double bytes) {
    std::vector<std::uint32_t> ids;
    for (workload::GroupId grp : groups) {
      workload::Collective c;
      c.name = name;
      c.kind = workload::CollectiveKind::all_reduce;
      c.group = grp;
      c.bytes = core::Bytes(bytes);
      ids.push_back(g.add_collective(c));
    }
    return ids;
  };
  const std::vector<std::uint32_t> tp_ar = all_reduces("tp_all_reduce", tp_group, 4.0 * 1024 * 1024);
  const std::vector<std::uint32_t> dp_ar = all_reduces("dp_all_reduce", dp_group, 64.0 * 1024 * 1024);
  for (int r = 0; r < ranks; ++r) {
    std::vector<workload::OpId> prev;
    int added = 0;
    for (int block = 0; added < ops; ++block) {
      for (int slot = 0; slot < 4 && added < ops; ++slot, ++added) {
        const int variant = vary ? (r * 31 + added) % 17 : added % 17;
        const bool coll = slot == 2 && vary;  // identical ranks: a pure data-parallel job
        const std::uint32_t payload = coll ? tp_ar[static_cast<std::size_t>(r / tp)]
                                           : kernels[static_cast<std::size_t>((slot == 3 ? 2 : slot) * 17 + variant)];
        prev = {g.add_op(static_cast<RankId>(r), coll ? comm : compute, coll ? workload::OpType::collective : workload::OpType::compute,
                         payload, workload::Phase::forward, -1, 0, prev)};
      }
      if (block % 250 == 249 && added < ops) {
        prev = {g.add_op(static_cast<RankId>(r), comm, workload::OpType::collective, dp_ar[static_cast<std::size_t>(r % tp)],
                         workload::Phase::backward, -1, 0, prev)};
        ++added;
      }
    }
  }
  return g;
}

struct Timed {
  double write_s = 0, load_s = 0, simulate_s = 0;
  analysis::RunReport report;
};

Timed bench_one(const fs::path& tmp, int ranks, int ops, bool vary) {
  Timed t;
  const fs::path dir = tmp / fmt::format("{}x{}{}", ranks, ops, vary ? "-vary" : "");
  fs::remove_all(dir);
  fs::create_directories(dir / "trace");
  auto t0 = std::chrono::steady_clock::now();
  {
    const workload::ExecutionGraph g = synthetic_job(ranks, ops, vary);
    workload::ChakraExportOptions o;
    o.inflect_attributes = false;
    o.json = false;
    workload::export_chakra(
        g, nullptr, [&](const workload::ChakraRankTrace& r) { io::write_text_file((dir / "trace" / fmt::format("job.{}.et", r.rank)).string(), r.et); },
        o);
  }
  // DGX H100 nodes of 8; a job of fewer ranks on single-GPU nodes
  const bool dgx = ranks % 8 == 0;
  io::write_text_file((dir / "job.yaml").string(),
                      fmt::format("name: bench-trace\ncluster:\n  topology: {}\n  nodes: {}\nworkload:\n  chakra: trace\n",
                                  (fs::path(io::project_root()) / (dgx ? "topologies/dgx-h100.yaml" : "topologies/h200-single.yaml")).string(),
                                  dgx ? ranks / 8 : ranks));
  auto t1 = std::chrono::steady_clock::now();
  const plan::Experiment e = io::load_experiment((dir / "job.yaml").string());  // reads every file (provenance)
  auto t2 = std::chrono::steady_clock::now();
  t.report = analysis::simulate(e, {});
  auto t3 = std::chrono::steady_clock::now();
  t.write_s = std::chrono::duration<double>(t1 - t0).count();
  t.load_s = std::chrono::duration<double>(t2 - t1).count();
  t.simulate_s = std::chrono::duration<double>(t3 - t2).count();
  if (!std::getenv("INFLECT_BENCH_KEEP")) fs::remove_all(dir);
  return t;
}

void print(const char* label, const Timed& t) {
  const auto& s = t.report.simulator;
  std::printf("%-44s %5d ranks  %10llu ops  step %8.3f s  load %6.3f s  import+simulate %6.3f s (engine %.3f)  "
              "stored ranks %d  [written in %.2f s]\n",
              label, t.report.devices, static_cast<unsigned long long>(s.ops), t.report.step_time.value(), t.load_s,
              t.simulate_s, s.engine.value(), s.stored_ranks, t.write_s);
  std::fflush(stdout);
}

}  // namespace

void bench_traces(bool quick) {
  const fs::path tmp = fs::temp_directory_path() / fmt::format("inflect-bench-trace-{}", ::getpid());
  const int ops = quick ? 20'000 : 100'000;
  print(quick ? "chakra 64 ranks x 20k nodes, all differ" : "chakra 64 ranks x 100k nodes, all differ", bench_one(tmp, 64, ops, true));
  print("chakra 1 rank x 10k nodes", bench_one(tmp, 1, 10'000, false));
  print("chakra 1,024 identical rank files x 10k nodes", bench_one(tmp, 1024, 10'000, false));
}

}  // namespace inflect::cli
