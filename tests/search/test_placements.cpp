// `inflect placements`: the placements of a geo-distributed example worked out by hand, the
// refusals, the ranking, determinism over threads, and the property that more WAN bandwidth never
// slows a placement.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "inflect/core/error.hpp"
#include "inflect/io/experiment_loader.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/search/placements.hpp"

using namespace inflect;

namespace {

const std::string kGeo = std::string(INFLECT_SOURCE_DIR) + "/workloads/examples/geo";

plan::Experiment example(const std::string& name) {
  io::set_project_root(INFLECT_SOURCE_DIR);
  return io::load_experiment(kGeo + "/" + name);
}

plan::Experiment parse(const std::string& text) {
  io::set_project_root(INFLECT_SOURCE_DIR);
  return io::parse_experiment(io::load_yaml_string(text, "test-placements.yaml"), kGeo);
}

std::string error_of(const plan::Experiment& e) {
  try {
    (void)search::enumerate_placements(e);
  } catch (const core::Error& err) {
    CHECK(err.kind() == core::ErrorKind::input);
    return core::format_error(err);
  }
  return "";
}

// Two sites of two DGX H100 nodes (16 GPUs each), Llama-3-8B at tp 8, pp 2, dp 2, joined by one
// WAN link of `bandwidth` 5 ms away.
std::string small_two_sites(const std::string& bandwidth) {
  return R"(
name: small-two-sites
cluster:
  sites:
    - {name: a, topology: ../../../topologies/dgx-h100.yaml, nodes: 2}
    - {name: b, topology: ../../../topologies/dgx-h100.yaml, nodes: 2}
  wan:
    - {between: [a, b], bandwidth: )" +
         bandwidth + R"(, latency: 5ms, transport: ideal}
model: {preset: llama3-8b}
training: {seq_len: 4096, global_batch: 16, micro_batch: 1, precision: bf16}
parallel: {tp: 8, pp: 2, sequence_parallel: true}
)";
}

}  // namespace

TEST_CASE("placements: the two-regions example has three, worked out by hand") {
  // 32 DGX H100 nodes, 16 per site: east holds devices 0-127, west 128-255; tp 8, pp 4, dp 8 (cp 1).
  // Orders with tp innermost differ only in how pp and dp nest (cp has size 1, so the six orders
  // of cp, pp, dp give two rank-to-device maps):
  //  [tp, pp, dp] (the file's): rank = tp + 8 pp + 32 dp, site = rank / 128 = dp / 4. Every dp
  //    group {dp 0..7} has 4 members in each site (hierarchical applies: flat and hierarchical);
  //    a pp group (fixed dp) lies in one site, tp in one node.
  //  [tp, dp, pp]: rank = tp + 8 dp + 64 pp, site = pp / 2: the pp groups span (stages 0-1 east,
  //    2-3 west), dp groups stay inside a site; no dp group crosses, so one placement.
  const auto e = example("llama3-70b-two-regions.yaml");
  const auto ps = search::enumerate_placements(e);
  REQUIRE(ps.size() == 3);
  CHECK(ps[0].name == "[dp 8, pp 4, tp 8] flat");
  CHECK(ps[0].order == std::vector<plan::Dim>{plan::Dim::tp, plan::Dim::cp, plan::Dim::pp, plan::Dim::dp});
  CHECK(ps[0].crossing == std::vector<std::string>{"dp"});
  CHECK(ps[0].cross_site == net::CrossSite::flat);
  CHECK(ps[1].name == "[dp 8, pp 4, tp 8] hierarchical");
  CHECK(ps[1].cross_site == net::CrossSite::hierarchical);
  CHECK(ps[2].name == "[pp 4, dp 8, tp 8]");
  CHECK(ps[2].crossing == std::vector<std::string>{"pp"});
  CHECK(!ps[2].cross_site);
  CHECK(ps[2].crosses.starts_with("only pp activations"));
  // The file's own placement, as the example's comment says: the data-parallel gradients cross.
  CHECK(search::crossing_dims(e) == std::vector<std::string>{"dp"});
  const auto moved = search::with_placement(e, ps[2]);
  CHECK(moved.parallel.order == ps[2].order);
  CHECK(search::crossing_dims(moved) == std::vector<std::string>{"pp"});
  CHECK(search::with_placement(e, ps[1]).cluster.topology.collectives.cross_site == net::CrossSite::hierarchical);
}

TEST_CASE("placements: the bytes on groups that span sites, worked out for the pipeline boundary") {
  // [pp 4, dp 8, tp 8]: stage 1 (east) sends each micro-batch's activations to stage 2 (west) and
  // receives their gradients. With sequence parallelism a TP rank sends 1/tp of the activation:
  // seq 8192 x hidden 8192 x 2 B (bf16) / 8 = 16,777,216 B, 64 micro-batches (512 / dp 8), both
  // ways: 2 x 64 x 16,777,216 = 2,147,483,648 B. Nothing of dp spans sites there.
  const auto e = example("llama3-70b-two-regions.yaml");
  const auto ps = search::enumerate_placements(e);
  const auto pp_across = search::spanning_bytes(search::with_placement(e, ps[2]), plan::Fidelity::symmetric);
  CHECK(pp_across[search::dim_index("pp")].value() == doctest::Approx(2147483648.0));
  CHECK(pp_across[search::dim_index("dp")].value() == 0);
  // [dp 8, pp 4, tp 8]: the gradients' groups span, the pipeline's do not; flat or hierarchical
  // moves the same collectives (the form changes what of them crosses, not their size).
  const auto flat = search::spanning_bytes(search::with_placement(e, ps[0]), plan::Fidelity::symmetric);
  const auto hier = search::spanning_bytes(search::with_placement(e, ps[1]), plan::Fidelity::symmetric);
  CHECK(flat[search::dim_index("pp")].value() == 0);
  CHECK(flat[search::dim_index("dp")].value() > 1e9);
  CHECK(flat[search::dim_index("dp")].value() == hier[search::dim_index("dp")].value());
}

TEST_CASE("placements: three regions, where stages straddle sites unevenly there is no hierarchical form") {
  // 3 sites of 128 devices; tp 8, pp 4, dp 12. [tp, pp, dp]: site = (8 pp + 32 dp) / 128 = dp / 4:
  // dp groups span all three with 4 each (flat and hierarchical). [tp, dp, pp]: rank = tp + 8 dp +
  // 96 pp; stage 0 is ranks 0-95 (site 0) but stage 1 is 96-191, so its dp groups hold 4 members in
  // site 0 and 8 in site 1: unequal, they run flat; pp groups (0, 96, 192, 288) span too.
  const auto ps = search::enumerate_placements(example("llama3-70b-three-regions.yaml"));
  REQUIRE(ps.size() == 3);
  CHECK(ps[0].name == "[dp 12, pp 4, tp 8] flat");
  CHECK(ps[1].name == "[dp 12, pp 4, tp 8] hierarchical");
  CHECK(ps[2].name == "[pp 4, dp 12, tp 8] flat");
  CHECK(ps[2].crossing == std::vector<std::string>{"pp", "dp"});
}

TEST_CASE("placements: with cp, pp and dp all above 1 the outermost one crosses and orders inside the sites tie") {
  // Two sites of 4 DGX H100 nodes (32 devices each); tp 8, cp 2, pp 2, dp 2 = 64. Every order of
  // cp, pp, dp outside tp is a different rank-to-device map (6). The outermost dimension has stride
  // 32 = a site's devices, so its coordinate is the site: it alone crosses. dp's pairs have one
  // member per site, so the hierarchical form does not apply (flat only).
  const auto e = parse(R"(
name: cp-two-sites
cluster:
  sites:
    - {name: a, topology: ../../../topologies/dgx-h100.yaml, nodes: 4}
    - {name: b, topology: ../../../topologies/dgx-h100.yaml, nodes: 4}
  wan:
    - {between: [a, b], bandwidth: 100Gb/s, circuits: 4, latency: 5ms, transport: ideal}
model: {preset: llama3-8b}
training: {seq_len: 16384, global_batch: 32, micro_batch: 1, precision: bf16}
parallel: {tp: 8, cp: 2, pp: 2, sequence_parallel: true, zero: 1}
)");
  const auto ps = search::enumerate_placements(e);
  REQUIRE(ps.size() == 6);
  std::map<std::string, int> by_crossing;
  for (const auto& p : ps) {
    REQUIRE(p.crossing.size() == 1);
    ++by_crossing[p.crossing[0]];
    CHECK(p.cross_site == (p.crossing[0] == "dp" ? std::optional<net::CrossSite>(net::CrossSite::flat) : std::nullopt));
  }
  CHECK(by_crossing == std::map<std::string, int>{{"cp", 2}, {"dp", 2}, {"pp", 2}});
  search::PlacementsOptions o;
  o.jobs = 2;
  const auto run = search::run_placements(e, o);
  REQUIRE(run.ranked.size() == 6);
  // Its partner (the same dimension outermost, the inner two swapped) says what differs.
  CHECK(run.ranked[1].placement.crossing == run.ranked[0].placement.crossing);
  CHECK(run.ranked[1].why_loses.find("the same groups cross the WAN") != std::string::npos);
}

TEST_CASE("placements: refused when there is nothing to place") {
  // A cluster without sites.
  auto plain = parse(R"(
cluster: {topology: ../../../topologies/dgx-h100.yaml, nodes: 2}
model: {preset: llama3-8b}
training: {seq_len: 4096, global_batch: 16, precision: bf16}
parallel: {tp: 8}
)");
  CHECK(error_of(plain).find("nothing to place: the cluster has no sites") != std::string::npos);
  CHECK(error_of(plain).find("cluster.sites") != std::string::npos);
  // Sites, but a plan with no dimension above 1 besides tp: one placement only.
  auto e = example("llama3-70b-two-regions.yaml");
  e.parallel.tp = 256;
  e.parallel.pp = 1;
  e.parallel.dp = 1;
  CHECK(error_of(e).find("no dimension larger than 1 besides tp") != std::string::npos);
}

TEST_CASE("placements: ranked by step time, each loser says why, the same on any thread count") {
  const auto e = example("llama3-70b-two-regions.yaml");
  search::PlacementsOptions o;
  o.jobs = 1;
  const auto one = search::run_placements(e, o);
  REQUIRE(one.ranked.size() == 3);
  for (std::size_t i = 0; i < one.ranked.size(); ++i) {
    REQUIRE(one.ranked[i].ok());
    if (i > 0) CHECK(one.ranked[i - 1].report.step_time.value() <= one.ranked[i].report.step_time.value());
    CHECK(one.ranked[i].why_loses.empty() == (i == 0));
  }
  // Only activations cross in the best: a flat ring would carry the whole gradient over the WAN.
  CHECK(one.ranked.front().placement.crossing == std::vector<std::string>{"pp"});
  CHECK(one.ranked.back().placement.name == "[dp 8, pp 4, tp 8] flat");
  CHECK(one.ranked.back().why_loses.find("exposed dp") != std::string::npos);
  o.jobs = 3;
  const auto three = search::run_placements(e, o);
  CHECK(search::placements_to_json(one, false) == search::placements_to_json(three, false));
}

TEST_CASE("placements: more WAN bandwidth never slows any placement") {
  // [tp, pp, dp]: site = (tp + 8 pp + 16 dp) / 16 = dp: the dp pair spans (one member per site, so
  // flat only); [tp, dp, pp]: site = pp: the two stages are in different sites.
  search::PlacementsOptions o;
  o.jobs = 2;
  const auto slow = search::run_placements(parse(small_two_sites("50Gb/s")), o);
  const auto fast = search::run_placements(parse(small_two_sites("800Gb/s")), o);
  std::map<std::string, double> at_slow;
  for (const auto& r : slow.ranked) {
    REQUIRE(r.ok());
    at_slow[r.placement.name] = r.report.step_time.value();
  }
  REQUIRE(at_slow.size() == 2);
  CHECK(at_slow.count("[dp 2, pp 2, tp 8] flat") == 1);
  CHECK(at_slow.count("[pp 2, dp 2, tp 8]") == 1);
  bool any_faster = false;
  for (const auto& r : fast.ranked) {
    REQUIRE(r.ok());
    const double before = at_slow.at(r.placement.name), now = r.report.step_time.value();
    CHECK_MESSAGE(now <= before, r.placement.name, ": ", now, " s at 800 Gb/s, ", before, " s at 50 Gb/s");
    any_faster = any_faster || now < before;
  }
  CHECK(any_faster);  // the WAN is on the critical path of at least one placement
}
