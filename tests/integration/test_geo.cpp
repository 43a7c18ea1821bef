// Sites and WAN links through the whole pipeline (loader -> compiler -> engine -> report): one site
// given as `sites:` is the plain cluster; more WAN bandwidth or less latency never slows a
// placement; the split job's extra time is communication.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>

#include "inflect/analysis/simulate.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/report_json.hpp"
#include "inflect/io/yaml_reader.hpp"

#include <nlohmann/json.hpp>

namespace {

using inflect::analysis::RunReport;
using inflect::plan::Experiment;

// Relative slack for "never slower": integer picoseconds, and events that tie at one time may be
// served in another order when a transfer's end moves; far below any effect of the WAN itself.
constexpr double kSlack = 1e-3;

Experiment load(const std::string& cluster, const std::string& parallel) {
  const std::string yaml = fmt::format(
      "name: geo\ncluster:\n{}\nmodel: {{preset: llama3-8b, layers: 8}}\ntraining: {{seq_len: 2048, global_batch: 32, "
      "micro_batch: 1}}\nparallel: {}\n",
      cluster, parallel);
  return inflect::io::parse_experiment(inflect::io::load_yaml_string(yaml, "geo.yaml"), INFLECT_SOURCE_DIR);
}

std::string two_sites(const std::string& bandwidth, const std::string& latency, const std::string& extra = "") {
  return fmt::format(
      "  sites:\n    - {{name: a, topology: topologies/dgx-h100.yaml, nodes: 2}}\n"
      "    - {{name: b, topology: topologies/dgx-h100.yaml, nodes: 2}}\n"
      "  wan:\n    - {{between: [a, b], bandwidth: {}, latency: {}, transport: {{kind: rdma, window: 4MiB, streams: "
      "8}}}}\n{}",
      bandwidth, latency, extra);
}

double step(const Experiment& e) {
  inflect::analysis::SimulateOptions o;
  return inflect::analysis::simulate(e, o).step_time.value();
}

}  // namespace

TEST_CASE("geo: one site given as sites is the plain cluster, report for report") {
  const std::string plan = "{tp: 8, pp: 2, dp: 2, zero: 1}";
  const Experiment plain = load("  topology: topologies/dgx-h100.yaml\n  nodes: 4", plan);
  const Experiment one = load("  sites:\n    - {name: only, topology: topologies/dgx-h100.yaml, nodes: 4}", plan);
  inflect::analysis::SimulateOptions o;
  auto a = inflect::io::report_json(inflect::analysis::simulate(plain, o), false);
  auto b = inflect::io::report_json(inflect::analysis::simulate(one, o), false);
  for (auto* j : {&a, &b}) {
    j->erase("simulator");
    j->erase("provenance");
  }
  CHECK(a == b);
}

TEST_CASE("geo: more WAN bandwidth or less latency never slows a placement") {
  // Data parallelism across the sites (the default order puts dp outermost) and the pipeline across
  // them (mesh pp outermost), flat and hierarchical.
  for (const std::string plan : {"{tp: 8, pp: 2, dp: 2, zero: 1}", "{mesh: [pp 2, dp 2, tp 8], zero: 1}"})
    for (const std::string form : {"flat", "hierarchical"}) {
      const std::string extra = "  cross_site_collectives: " + form + "\n";
      double prev = 1e30;
      for (const char* bw : {"10Gb/s", "100Gb/s", "400Gb/s", "1.6Tb/s"}) {
        const double t = step(load(two_sites(bw, "5ms", extra), plan));
        CHECK_MESSAGE(t <= prev * (1 + kSlack), plan, " ", form, " at ", bw);
        prev = t;
      }
      prev = 1e30;
      for (const char* lat : {"40ms", "5ms", "0.5ms", "0.05ms"}) {
        const double t = step(load(two_sites("100Gb/s", lat, extra), plan));
        CHECK_MESSAGE(t <= prev * (1 + kSlack), plan, " ", form, " at ", lat);
        prev = t;
      }
    }
}

TEST_CASE("geo: the WAN is what slows a job split over two sites") {
  // The same plan on 4 nodes of one site, and split over two sites joined by a thin, long link:
  // slower split, and the slowdown is in exposed communication, not compute.
  const std::string plan = "{tp: 8, pp: 2, dp: 2, zero: 1}";
  inflect::analysis::SimulateOptions o;
  const RunReport one = inflect::analysis::simulate(load("  topology: topologies/dgx-h100.yaml\n  nodes: 4", plan), o);
  const RunReport split = inflect::analysis::simulate(load(two_sites("10Gb/s", "20ms"), plan), o);
  CHECK(split.step_time.value() > one.step_time.value());
  CHECK(split.breakdown.compute.value() == doctest::Approx(one.breakdown.compute.value()).epsilon(1e-6));
  // The breakdown says how much of the exposed communication waited on groups across the sites:
  // here dp's (tp and pp stay inside a site), so all of dp's and no more.
  CHECK_FALSE(one.breakdown.exposed_across_sites.has_value());
  REQUIRE(split.breakdown.exposed_across_sites.has_value());
  CHECK(split.breakdown.exposed_across_sites->value() > 0);
  CHECK(split.breakdown.exposed_across_sites->value() == doctest::Approx(split.breakdown.exposed_comm.dp.value()));
}

TEST_CASE("geo: a placement with no WAN traffic is unaffected by the WAN's parameters") {
  // DiLoCo with one worker per site: the inner step reduces only inside a site, so no WAN figure
  // may move it; the sync step's outer all-reduce crosses, so a thinner, longer WAN slows that.
  const std::string plan = "{tp: 8, dp: 4, zero: 1}";
  const std::string diloco = "  diloco: {sync_every: 10, workers: 2}\n";
  auto run = [&](const std::string& bw, const std::string& lat) {
    std::string yaml = fmt::format(
        "name: geo\ncluster:\n{}model: {{preset: llama3-8b, layers: 8}}\ntraining:\n  seq_len: 2048\n  global_batch: 32\n"
        "  micro_batch: 1\n{}parallel: {}\n",
        two_sites(bw, lat), diloco, plan);
    inflect::analysis::SimulateOptions o;
    return inflect::analysis::simulate(
        inflect::io::parse_experiment(inflect::io::load_yaml_string(yaml, "geo.yaml"), INFLECT_SOURCE_DIR), o);
  };
  const RunReport thin = run("10Gb/s", "40ms"), wide = run("1.6Tb/s", "0.05ms");
  REQUIRE(thin.diloco.modeled);
  CHECK(thin.diloco.inner_step.value() == wide.diloco.inner_step.value());
  CHECK(thin.diloco.sync_step.value() > wide.diloco.sync_step.value());
}
