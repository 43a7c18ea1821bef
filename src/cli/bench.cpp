// `inflect bench`: the simulator's own speed, as figures for notes and regressions (not asserted
// anywhere): raw event-queue throughput, and wall time, events and events/s of the large bundled
// examples in both fidelities, with the process's peak RSS.
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "inflect/analysis/simulate.hpp"
#include "inflect/core/event_queue.hpp"
#include "inflect/core/parallel.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/search/searcher.hpp"

namespace inflect::cli {
namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // Linux reports KiB
}

// Churns n push/pop pairs through the queue with `pending` events waiting; each pushed time is
// shared by `ties` events (1 = all distinct: the queue's worst case; a large simulation's ranks
// of one class finish their kernels at the same instants, hundreds per time).
void bench_queue_case(int pending, int ties) {
  core::EventQueue q;
  const int n = 4'000'000;
  std::uint64_t x = 88172645463325252ULL;
  auto next_delay = [&] {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return core::Time::ps(static_cast<std::int64_t>(x % 1000000));
  };
  auto t0 = std::chrono::steady_clock::now();
  core::Time delay = next_delay();
  for (int i = 0; i < pending; ++i) {
    if (i % ties == 0) delay = next_delay();
    q.push(delay, 0, static_cast<std::uint32_t>(i));
  }
  for (int i = 0; i < n; ++i) {
    core::Event e = q.pop();
    if (i % ties == 0) delay = next_delay();
    q.push(e.time + delay, 0, e.id);
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("event queue: %d push+pop pairs with %dk pending, %4d per time, in %.3f s = %.1f M events/s\n", n,
              pending / 1024, ties, s, n / s / 1e6);
}

void bench_queue() {
  bench_queue_case(65536, 1);
  bench_queue_case(65536, 128);
}

/// Device variability to bench with (docs/variability.md): none, the recommended device spread,
/// or the spread with per-kernel jitter (which runs in full fidelity).
enum class Vary { none, spread, jitter };

void bench_case(const std::string& file, plan::Fidelity f, Vary vary = Vary::none) {
  std::string path = (std::filesystem::path(io::project_root()) / file).string();
  plan::Experiment e = io::load_experiment(path);
  if (vary != Vary::none) {
    e.cluster.variability.gpu_speed_spread = 0.02;
    e.cluster.variability.seed = 1;
    if (vary == Vary::jitter) e.cluster.variability.kernel_jitter = 0.02;
  }
  const std::string label = file + (vary == Vary::spread ? " +spread" : vary == Vary::jitter ? " +jitter" : "");
  analysis::SimulateOptions so;
  so.fidelity = f;
  auto t0 = std::chrono::steady_clock::now();
  analysis::RunReport r = analysis::simulate(e, so);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-44s %-9s %6d GPUs  step %8.3f s  wall %8.3f s (compile %.3f, engine %.3f)  events %10llu  ops %10llu  %6.2f M events/s  classes %4d  rss %7.0f MB\n",
              label.c_str(), r.simulator.fidelity.c_str(), r.devices, r.step_time.value(), s, r.simulator.compile.value(), r.simulator.engine.value(),
              static_cast<unsigned long long>(r.simulator.events), static_cast<unsigned long long>(r.simulator.ops),
              static_cast<double>(r.simulator.events) / r.simulator.engine.value() / 1e6, r.simulator.rank_classes, peak_rss_mb());
  std::fflush(stdout);
}

/// Plan search without simulation: enumeration and analytical estimates, on 1 and on all threads.
void bench_search(const std::string& file) {
  const auto spec = search::load_search(file);
  for (int jobs : {1, core::jobs_or_hardware(0)}) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto plans = search::enumerate_plans(spec.base, spec.space);
    const auto t1 = std::chrono::steady_clock::now();
    const auto est = search::estimate_all(spec.base, plans, jobs);
    const auto t2 = std::chrono::steady_clock::now();
    const double en = std::chrono::duration<double>(t1 - t0).count(), es = std::chrono::duration<double>(t2 - t1).count();
    std::size_t fits = 0;
    for (const auto& e : est) fits += e.fits;
    std::printf("%-44s search  %d threads: %zu plans enumerated in %.3f s, %zu fit, estimated in %.3f s = %.0f plans/s\n",
                std::filesystem::path(file).stem().c_str(), jobs, plans.size(), en, fits, es, static_cast<double>(plans.size()) / (en + es));
  }
}

}  // namespace

int cmd_bench(bool quick) {
  bench_queue();
  const char* cases[] = {"workloads/examples/llama-32l-1024.yaml", "workloads/examples/gpt3-175b-1024-a100.yaml",
                         "workloads/examples/llama3-405b-16k-h100.yaml"};
  for (const char* c : cases) {
    bench_case(c, plan::Fidelity::symmetric);
    if (quick && std::string(c).find("16k") != std::string::npos) continue;
    bench_case(c, plan::Fidelity::full);
  }
  // Devices that differ in speed: the recommended spread (symmetric and full), and with kernel
  // jitter (full fidelity, one draw per kernel and rank).
  bench_case("workloads/examples/gpt3-175b-1024-a100.yaml", plan::Fidelity::symmetric, Vary::spread);
  bench_case("workloads/examples/gpt3-175b-1024-a100.yaml", plan::Fidelity::full, Vary::spread);
  bench_case("workloads/examples/gpt3-175b-1024-a100.yaml", plan::Fidelity::full, Vary::jitter);
  // Power, clocks and heat: thermally different devices (full fidelity) over 6 warm-start steps;
  // the events and wall are of all six engine runs.
  bench_case("workloads/examples/whatif/llama3-8b-hot-gpu-h100.yaml", plan::Fidelity::symmetric);
  bench_search("workloads/search/llama3-405b-16k-h100.yaml");
  bench_traces(quick);
  return 0;
}

}  // namespace inflect::cli
