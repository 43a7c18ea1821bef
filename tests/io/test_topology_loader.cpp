#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "inflect/core/error.hpp"
#include "temp_dir.hpp"
#include "inflect/io/profile_loader.hpp"
#include "inflect/io/topology_loader.hpp"
#include "inflect/io/yaml_reader.hpp"
#include "inflect/net/topology.hpp"

using inflect::core::Error;
using inflect::core::ErrorKind;
using inflect::io::load_topology;
using inflect::io::load_yaml_string;
using inflect::io::parse_topology;

namespace {

const std::string kTopologies = std::string(INFLECT_SOURCE_DIR) + "/topologies/";
constexpr double kRel = 1e-9;       // figures read back exactly
constexpr double kCalib = 0.005;    // efficiencies are rounded to 3 decimals in the YAML

// A small valid document; tests break one thing at a time. Line numbers matter to one test:
// `nic_bandwidth` is on line 13.
std::string valid_doc(const std::string& nic_key = "nic_bandwidth") {
  return "name: t\n"                                   // 1
         "device: h100-sxm\n"                          // 2
         "devices_per_node: 8\n"                       // 3
         "intra:\n"                                    // 4
         "  kind: switched\n"                          // 5
         "  port_bandwidth: 450GB/s\n"                 // 6
         "  hop_latency: 0.6us\n"                      // 7
         "  efficiency: 0.8\n"                         // 8
         "scale_out:\n"                                // 9
         "  technology: InfiniBand NDR\n"              // 10
         "  nics_per_node: 8\n"                        // 11
         "  nic_latency: 0.6us\n"                      // 12
         "  " + nic_key + ": 400Gbps\n"                // 13
         "  switch_latency: 0.33us\n"                  // 14
         "  nodes_per_leaf: 32\n"                      // 15
         "  efficiency: 0.8\n"                         // 16
         "sources:\n"
         "  devices_per_node: a\n"
         "  intra.port_bandwidth: b\n"
         "  intra.hop_latency: c\n"
         "  intra.efficiency: d\n"
         "  scale_out.nics_per_node: e\n"
         "  scale_out.nic_bandwidth: f\n"
         "  scale_out.nic_latency: g\n"
         "  scale_out.switch_latency: h\n"
         "  scale_out.nodes_per_leaf: i\n"
         "  scale_out.efficiency: j\n"
         "  collective_overhead: k\n"
         "  cooling.inlet_c: l\n"
         "  power.node_other: m\n"
         "  power.fabric_per_node: n\n"
         "  power.pue: o\n"
         "collective_overhead: 6.6us\n"
         "cooling: {kind: liquid, inlet_c: 30}\n"
         "power: {node_other: 2800W, fabric_per_node: 400W, pue: 1.2}\n";
}

Error parse_error(const std::string& text) {
  try {
    parse_topology(load_yaml_string(text, "t.yaml"));
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected an error");
  return Error(ErrorKind::internal, "unreachable");
}

}  // namespace

TEST_CASE("a valid topology document parses into the spec with units") {
  auto spec = parse_topology(load_yaml_string(valid_doc(), "t.yaml"));
  // 450 GB/s = 450e9 B/s; 400 Gb/s = 50e9 B/s; 0.6 us = 6e-7 s.
  CHECK(spec.intra.port_bandwidth.value() == doctest::Approx(450e9).epsilon(kRel));
  CHECK(spec.scale_out.nic_bandwidth.value() == doctest::Approx(50e9).epsilon(kRel));
  CHECK(spec.intra.hop_latency.value() == doctest::Approx(0.6e-6).epsilon(kRel));
  CHECK(spec.scale_out.oversubscription == 1.0);  // default
  CHECK(spec.scale_out.rail_optimized);           // default
  CHECK(spec.sources.at("scale_out.nic_bandwidth") == "f");
  CHECK(spec.file == "t.yaml");
  // Cooling and the node's power besides its devices.
  CHECK(spec.cooling.kind == inflect::net::CoolingKind::liquid);
  CHECK(spec.cooling.inlet_c == 30);
  CHECK(spec.power.other.value() == 2800);
  CHECK(spec.power.fabric_per_node.value() == 400);
  CHECK(spec.power.pue == doctest::Approx(1.2));
}

TEST_CASE("topology cooling and node power: bad values are input errors at their key") {
  std::string doc = valid_doc();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string d = doc;
    d.replace(d.find(from), from.size(), to);
    return parse_error(d).message();
  };
  CHECK(with("kind: liquid", "kind: water").find("water") != std::string::npos);
  CHECK(with("pue: 1.2", "pue: 0.9").find("PUE in [1, 5]") != std::string::npos);
  CHECK(with("node_other: 2800W", "node_other: 5 bananas").find("bananas") != std::string::npos);
  CHECK(with("  power.pue: o\n", "").find("no source for 'power.pue'") != std::string::npos);
}

TEST_CASE("a misspelt key is an input error with did-you-mean and its line") {
  Error e = parse_error(valid_doc("nic_bandwith"));
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.where().line == 13);
  CHECK(e.where().file == "t.yaml");
  // Unknown keys are rejected before required ones are looked up, so the typo itself is reported.
  CHECK(e.message().find("unknown key 'nic_bandwith' (did you mean 'nic_bandwidth'?)") != std::string::npos);
}

TEST_CASE("an unknown key next to all required ones gets a did-you-mean suggestion") {
  std::string doc = valid_doc();
  doc.insert(doc.find("  switch_latency"), "  rail_optimised: true\n");  // becomes line 14
  Error e = parse_error(doc);
  CHECK(e.kind() == ErrorKind::input);
  CHECK(e.where().line == 14);
  CHECK(e.message().find("did you mean 'rail_optimized'") != std::string::npos);
}

TEST_CASE("every figure needs a source, and sources may not name figures that are absent") {
  std::string doc = valid_doc();
  doc.erase(doc.find("  intra.efficiency: d\n"), std::string("  intra.efficiency: d\n").size());
  Error e = parse_error(doc);
  CHECK(e.message().find("no source for 'intra.efficiency'") != std::string::npos);

  std::string with_typo = valid_doc();
  with_typo.insert(with_typo.find("  collective_overhead: k\n"), "  scale_out.oversubscriptin: k\n");
  Error typo = parse_error(with_typo);
  CHECK(typo.message().find("unknown key 'scale_out.oversubscriptin'") != std::string::npos);
}

TEST_CASE("mesh and value checks") {
  SUBCASE("mesh with both link_bandwidth and links") {
    std::string doc = valid_doc();
    doc.replace(doc.find("  kind: switched\n  port_bandwidth: 450GB/s\n"), 42,
                "  kind: mesh\n  link_bandwidth: 64GB/s\n  links: [{a: 0, b: 1, bandwidth: 50GB/s}]\n");
    CHECK(parse_error(doc).message().find("full mesh") != std::string::npos);
  }
  SUBCASE("mesh link to a device that does not exist") {
    std::string doc = valid_doc();
    doc.replace(doc.find("  kind: switched\n  port_bandwidth: 450GB/s\n"), 42,
                "  kind: mesh\n  links: [{a: 0, b: 8, bandwidth: 50GB/s}]\n");
    CHECK(parse_error(doc).message().find("out of range; allowed: 0 to 7") != std::string::npos);
  }
  SUBCASE("efficiency above 1") {
    std::string doc = valid_doc();
    doc.replace(doc.find("  efficiency: 0.8\nscale_out"), 17, "  efficiency: 1.2\n");
    Error e = parse_error(doc);
    CHECK(e.where().key_path == "intra.efficiency");
    CHECK(e.message().find("(0, 1]") != std::string::npos);
  }
  SUBCASE("unknown fabric kind") {
    std::string doc = valid_doc();
    doc.replace(doc.find("kind: switched"), 14, "kind: swiched");
    CHECK(parse_error(doc).message().find("did you mean 'switched'") != std::string::npos);
  }
}

TEST_CASE("a missing topology file is an io error naming the path") {
  try {
    load_topology("/nonexistent/dir/nope.yaml");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::io);
    CHECK(std::string(e.what()).find("/nonexistent/dir/nope.yaml") != std::string::npos);
  }
}

TEST_CASE("every bundled topology loads, builds and routes") {
  // The device keys the brief fixes for each file.
  const std::map<std::string, std::string> expected = {{"dgx-a100", "a100-sxm-80g"}, {"dgx-h100", "h100-sxm"},
                                                       {"hgx-h200", "h200-sxm"},     {"mi250x", "mi250x-gcd"},
                                                       {"mi300x", "mi300x"}};
  int found = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kTopologies)) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path().string());
    auto spec = load_topology(entry.path().string());
    CHECK(spec.name == entry.path().stem().string());
    if (expected.count(spec.name)) {
      CHECK(spec.device == expected.at(spec.name));
      ++found;
    }
    inflect::net::Topology t(spec, 4);
    for (inflect::net::DeviceId b = 1; b < t.devices(); ++b) CHECK(t.route(0, b).size >= 1);
  }
  CHECK(found == 5);
}

TEST_CASE("bundled calibration reproduces the measurements it cites") {
  // dgx-a100: 300 GB/s * eff = 231.58 GB/s (a100x8 all-reduce busbw, 8G row).
  auto a100 = load_topology(kTopologies + "dgx-a100.yaml");
  CHECK(a100.intra.efficiency * 300 == doctest::Approx(231.58).epsilon(kCalib));
  // dgx-h100 / hgx-h200: 450 GB/s * eff = 367.2 GB/s (h200x8 ring all-reduce, 16 GiB).
  CHECK(load_topology(kTopologies + "dgx-h100.yaml").intra.efficiency * 450 == doctest::Approx(367.2).epsilon(kCalib));
  CHECK(load_topology(kTopologies + "hgx-h200.yaml").intra.efficiency * 450 == doctest::Approx(367.2).epsilon(kCalib));
  // mi300x: 7 links * 64 GB/s * eff = 315.69 GB/s (mi300x all-reduce busbw, 8 GiB row).
  auto mi300x = load_topology(kTopologies + "mi300x.yaml");
  CHECK(mi300x.intra.efficiency * 7 * 64 == doctest::Approx(315.69).epsilon(kCalib));
  // Scale-out: the [STAS-NET] 80% rule.
  CHECK(a100.scale_out.efficiency == doctest::Approx(0.8).epsilon(kRel));
}

TEST_CASE("bundled mi300x and mi250x fabrics: pair vs aggregate, and a two-hop GCD pair") {
  inflect::net::Topology mi300x(load_topology(kTopologies + "mi300x.yaml"), 1);
  // One peer: 64 GB/s * 0.705 = 45.12 GB/s, one link.
  auto p = mi300x.route(0, 1);
  REQUIRE(p.size == 1);
  CHECK(mi300x.links()[p.links[0]].capacity.value() == doctest::Approx(64e9 * 0.705).epsilon(kRel));

  inflect::net::Topology mi250x(load_topology(kTopologies + "mi250x.yaml"), 2);
  // GCD 0 -> GCD 7 has no direct link; BFS goes 0 -> 6 (100 GB/s) -> 7 (200 GB/s).
  auto q = mi250x.route(0, 7);
  REQUIRE(q.size == 2);
  CHECK(mi250x.link_name(q.links[0]) == "n0.gpu0->n0.gpu6");
  // Bottleneck 100 GB/s * 0.705 = 70.5 GB/s.
  CHECK(std::min(mi250x.links()[q.links[0]].capacity.value(), mi250x.links()[q.links[1]].capacity.value()) ==
        doctest::Approx(70.5e9).epsilon(kRel));
  // 4 Slingshot NICs over 8 GCDs: GCDs 6 and 7 share NIC 3.
  CHECK(mi250x.nic_of(6) == 3);
  CHECK(mi250x.nic_of(7) == 3);
}

TEST_CASE("topology collectives section: library, algorithm and protocol overrides, NVLS keys") {
  // Absent: the NCCL library, the library's choice.
  const auto plain = parse_topology(load_yaml_string(valid_doc(), "t.yaml"));
  CHECK(plain.collectives.library.name == "nccl");
  CHECK(!plain.collectives.algorithm);
  // Named: rccl, ring forced, simple forced.
  const auto forced = parse_topology(
      load_yaml_string(valid_doc() + "collectives: {library: rccl, algorithm: ring, protocol: simple}\n", "t.yaml"));
  CHECK(forced.collectives.library.name == "rccl");
  CHECK(forced.collectives.algorithm == inflect::net::Algorithm::ring);
  CHECK(forced.collectives.protocol == inflect::net::Protocol::simple);
  // Bad names are located input errors listing the choices.
  const Error lib = parse_error(valid_doc() + "collectives: {library: ncl}\n");
  CHECK(lib.kind() == ErrorKind::input);
  CHECK(lib.message().find("unknown collective library 'ncl' (did you mean 'nccl'?)") != std::string::npos);
  const Error algo = parse_error(valid_doc() + "collectives: {algorithm: hierarchical}\n");
  CHECK(algo.message().find("allowed: auto, ring, tree") != std::string::npos);
  CHECK(algo.where().line > 0);
  // nvls needs its efficiency (a figure, with a source); the efficiency alone is an error.
  std::string nvls = valid_doc();
  nvls.replace(nvls.find("  efficiency: 0.8\nscale_out"), 17, "  efficiency: 0.8\n  nvls: true\n");
  CHECK(parse_error(nvls).message().find("nvls: true needs nvls_efficiency") != std::string::npos);
}

TEST_CASE("calibrated profiles: read back, bounded, and only for the topology they were fitted on") {
  using inflect::io::apply_profile;
  using inflect::io::parse_profile;
  const std::string ok =
      "profile: p\ntopology: t\ncollectives:\n"
      "  - {collective: all_reduce, level: inter_node, min_size: 1MiB, latency: 30us, scale: 0.95, "
      "sqrt_coefficient: 0.006, source: s}\n";
  const auto p = parse_profile(load_yaml_string(ok, "p.yaml")).collectives;
  REQUIRE(p.fits.size() == 1);
  CHECK(p.fits[0].min_size.value() == 1048576);
  CHECK(p.fits[0].latency.value() == doctest::Approx(30e-6).epsilon(kRel));
  auto spec = parse_topology(load_yaml_string(valid_doc(), "t.yaml"));
  apply_profile(spec, p);  // fitted on "t"
  CHECK(spec.collectives.profile.fits.size() == 1);
  auto other = spec;
  other.name = "dgx-a100";
  try {
    apply_profile(other, p);
    FAIL("a profile of another topology was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.message()).find("was fitted on topology 't', not 'dgx-a100'") != std::string::npos);
  }
  auto bad = [&](const std::string& from, const std::string& to) {
    std::string text = ok;
    text.replace(text.find(from), from.size(), to);
    try {
      parse_profile(load_yaml_string(text, "p.yaml"));
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::input);
      CHECK(e.where().line > 0);
      return std::string(e.message());
    }
    FAIL("accepted: " << to);
    return std::string();
  };
  CHECK(bad("scale: 0.95", "scale: 0").find("out of range") != std::string::npos);
  CHECK(bad("scale: 0.95", "scale: 1e6").find("out of range") != std::string::npos);
  CHECK(bad("sqrt_coefficient: 0.006", "sqrt_coefficient: -1").find("out of range") != std::string::npos);
  CHECK(bad("level: inter_node", "level: rack").find("not allowed") != std::string::npos);
  CHECK(bad("latency: 30us", "latency: 3s").find("out of range") != std::string::npos);
  CHECK(bad("source: s}", "source: s, sclae: 1}").find("unknown key 'sclae'") != std::string::npos);
  // Two fits for the same collective, level and size range.
  CHECK_THROWS_AS(parse_profile(load_yaml_string(ok + ok.substr(ok.find("  - ")), "p.yaml")), Error);
}

TEST_CASE("calibrated profiles: algorithm and protocol, where neither the experiment nor the topology forces one") {
  const auto p = inflect::io::parse_profile(load_yaml_string("profile: p\ntopology: t\nalgorithm: ring\nprotocol: simple\n", "p.yaml"));
  CHECK(p.algorithm == inflect::net::Algorithm::ring);
  CHECK(p.protocol == inflect::net::Protocol::simple);
  CHECK(p.collectives.fits.empty());
  try {
    (void)inflect::io::parse_profile(load_yaml_string("profile: p\ntopology: t\nalgorithm: hierarchical\n", "p.yaml"));
    FAIL("an unknown algorithm was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.message()).find("unknown collective algorithm 'hierarchical'") != std::string::npos);
    CHECK(e.where().line == 3);
  }
  // Nothing at all in a profile is an error.
  CHECK_THROWS_AS(inflect::io::parse_profile(load_yaml_string("profile: p\ntopology: t\n", "p.yaml")), Error);
}

TEST_CASE("topology collectives.library: a library file of the user's own, relative to the topology") {
  inflect::test::TempDir dir("library-file");
  // NCCL's figures with a slower LL base latency (20 us instead of 6.6 us).
  std::string lib = inflect::test::read_file(std::string(INFLECT_SOURCE_DIR) + "/calibration/collectives/nccl.yaml");
  lib.replace(lib.find("name: nccl"), 10, "name: my-nccl");
  lib.replace(lib.find("base: 6.6us"), 11, "base: 20us ");
  inflect::test::write_file(dir.path / "libs" / "my-nccl.yaml", lib);
  inflect::test::write_file(dir.path / "t.yaml", valid_doc() + "collectives: {library: libs/my-nccl.yaml}\n");
  const auto spec = load_topology((dir.path / "t.yaml").string());
  CHECK(spec.collectives.library.name == "my-nccl");
  const auto& ll = spec.collectives.library.cost(inflect::net::Algorithm::ring, inflect::net::Protocol::ll);
  REQUIRE(ll);
  CHECK(ll->base.value() == doctest::Approx(20e-6).epsilon(kRel));
  // A missing file is an io error at the key.
  inflect::test::write_file(dir.path / "u.yaml", valid_doc() + "collectives: {library: nope.yaml}\n");
  try {
    (void)load_topology((dir.path / "u.yaml").string());
    FAIL("a missing library file was accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::io);
    CHECK(e.where().key_path == "collectives.library");
  }
}
