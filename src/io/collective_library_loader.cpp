#include "inflect/io/collective_library_loader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "inflect/core/strings.hpp"
#include "io/embedded.hpp"

namespace inflect::io {
namespace {


net::ProtocolCost parse_cost(const Node& node) {
  MapReader r(node);
  for (const char* k : {"base", "intra_step", "inter_step", "bandwidth_factor", "pipelined"}) (void)r.optional(k);
  r.finish();
  net::ProtocolCost c;
  c.base = read_short_latency(r.required("base"));
  c.intra_step = read_short_latency(r.required("intra_step"));
  c.inter_step = read_short_latency(r.required("inter_step"));
  Node f = r.required("bandwidth_factor");
  c.bandwidth_factor = f.as_double();
  // NCCL's smallest is RCCL's LL on a mesh, 0.08; below 1% a figure is a typo.
  if (!(c.bandwidth_factor >= 0.01 && c.bandwidth_factor <= 1))
    f.fail(fmt::format("{} is out of range; allowed: 0.01 to 1 (payload bytes per wire byte)", c.bandwidth_factor));
  c.pipelined = r.required("pipelined").as_bool();
  return c;
}

}  // namespace

core::Seconds read_short_latency(const Node& n) {
  core::Seconds s = n.as_duration();
  if (!(s.value() >= 0 && s.value() < 1)) n.fail(fmt::format("'{}' is out of range; allowed: 0 to 1s", n.raw().Scalar()));
  return s;
}

std::optional<net::Algorithm> read_algorithm(const Node& n, bool allow_auto) {
  const std::string name = n.as_string();
  if (allow_auto && name == "auto") return std::nullopt;
  const auto a = net::parse_algorithm(name);
  if (!a)
    n.fail(fmt::format("unknown collective algorithm '{}'; allowed: {}{}", name, allow_auto ? "auto, " : "",
                       net::algorithm_names()));
  return a;
}

std::optional<net::Protocol> read_protocol(const Node& n, bool allow_auto) {
  const std::string name = n.as_string();
  if (allow_auto && name == "auto") return std::nullopt;
  const auto p = net::parse_protocol(name);
  if (!p)
    n.fail(fmt::format("unknown protocol '{}'; allowed: {}{}", name, allow_auto ? "auto, " : "", net::protocol_names()));
  return p;
}

net::CollectiveLibrary parse_collective_library(const Node& root) {
  MapReader r(root);
  for (const char* k : {"name", "algorithms", "ll_max_busbw", "tree_size_correction", "sources"}) (void)r.optional(k);
  r.finish();
  net::CollectiveLibrary lib;
  lib.file = root.file();
  lib.name = r.required("name").as_string();
  Node algos = r.required("algorithms");
  MapReader ar(algos);
  for (int a = 0; a < net::kAlgorithms; ++a) (void)ar.optional(net::to_string(static_cast<net::Algorithm>(a)));
  ar.finish();
  bool any = false;
  for (int a = 0; a < net::kAlgorithms; ++a) {
    auto an = ar.optional(net::to_string(static_cast<net::Algorithm>(a)));
    if (!an) continue;
    MapReader pr(*an);
    for (int p = 0; p < net::kProtocols; ++p) (void)pr.optional(net::to_string(static_cast<net::Protocol>(p)));
    pr.finish();
    for (int p = 0; p < net::kProtocols; ++p)
      if (auto pn = pr.optional(net::to_string(static_cast<net::Protocol>(p)))) {
        lib.costs[static_cast<std::size_t>(a)][static_cast<std::size_t>(p)] = parse_cost(*pn);
        any = true;
      }
  }
  if (!any) algos.fail("a collective library needs at least one algorithm with one protocol");
  if (auto ll = r.optional("ll_max_busbw")) {
    MapReader lr(*ll);
    for (const char* k : {"two_nodes", "more_nodes"}) (void)lr.optional(k);
    lr.finish();
    lib.ll_max_busbw_two_nodes = lr.required("two_nodes").as_bandwidth();
    lib.ll_max_busbw_more_nodes = lr.required("more_nodes").as_bandwidth();
  }
  if (auto tc = r.optional("tree_size_correction")) {
    MapReader tr(*tc);
    for (int p = 0; p < net::kProtocols; ++p) (void)tr.optional(net::to_string(static_cast<net::Protocol>(p)));
    tr.finish();
    for (int p = 0; p < net::kProtocols; ++p)
      if (auto t = tr.optional(net::to_string(static_cast<net::Protocol>(p)))) {
        auto& table = lib.tree_size_correction[static_cast<std::size_t>(p)];
        for (const Node& v : t->items()) {
          const double f = v.as_double();
          if (!(f > 0 && f <= 1)) v.fail(fmt::format("{} is out of range; allowed: a factor in (0, 1]", f));
          table.push_back(f);
        }
      }
  }
  Node sources = r.required("sources");
  MapReader sr(sources);
  const std::vector<std::string> keys = {"algorithms", "ll_max_busbw", "tree_size_correction"};
  for (const auto& k : keys) (void)sr.optional(k);
  sr.finish();
  for (const auto& k : keys) {
    if (!r.has(k)) continue;
    if (!sr.has(k)) sources.fail(fmt::format("no source for '{}'; every figure needs one", k));
    lib.sources[k] = sr.required(k).as_string();
  }
  return lib;
}

const std::vector<net::CollectiveLibrary>& collective_libraries() {
  static const std::vector<net::CollectiveLibrary> all = [] {
    std::vector<net::CollectiveLibrary> out;
    for (const auto& [file, text] : embedded::catalog_collectives())
      out.push_back(parse_collective_library(load_yaml_string(std::string(text), "<embedded>/" + std::string(file))));
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  }();
  return all;
}

const net::CollectiveLibrary& find_collective_library(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& lib : collective_libraries()) {
    if (lib.name == name) return lib;
    names.push_back(lib.name);
  }
  const std::string hint = core::closest_match(name, names);
  throw core::Error(core::ErrorKind::input,
                    fmt::format("unknown collective library '{}'{}; known: {}", name,
                                hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), core::join(names)));
}

}  // namespace inflect::io
