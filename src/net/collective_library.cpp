#include "inflect/net/collective_library.hpp"

#include <array>

namespace inflect::net {
namespace {

constexpr std::array<const char*, kAlgorithms> kAlgorithmNames = {"ring",   "tree",   "nvls",     "nvls_tree", "pat",
                                                                 "collnet", "direct", "pairwise", "p2p"};
constexpr std::array<const char*, kProtocols> kProtocolNames = {"ll", "ll128", "simple"};
// As `cluster.cross_site_collectives` spells them.
constexpr std::array<const char*, 3> kCrossSiteNames = {"auto", "flat", "hierarchical"};

std::string joined(const auto& names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

}  // namespace

const char* to_string(Algorithm a) { return kAlgorithmNames[static_cast<std::size_t>(a)]; }
const char* to_string(Protocol p) { return kProtocolNames[static_cast<std::size_t>(p)]; }

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  if (name == "nvls-tree" || name == "nvlstree") return Algorithm::nvls_tree;
  for (std::size_t i = 0; i < kAlgorithmNames.size(); ++i)
    if (name == kAlgorithmNames[i]) return static_cast<Algorithm>(i);
  return std::nullopt;
}

const char* to_string(CrossSite c) { return kCrossSiteNames[static_cast<std::size_t>(c)]; }

std::optional<CrossSite> parse_cross_site(std::string_view name) {
  for (std::size_t i = 0; i < kCrossSiteNames.size(); ++i)
    if (name == kCrossSiteNames[i]) return static_cast<CrossSite>(i);
  return std::nullopt;
}

std::optional<Protocol> parse_protocol(std::string_view name) {
  for (std::size_t i = 0; i < kProtocolNames.size(); ++i)
    if (name == kProtocolNames[i]) return static_cast<Protocol>(i);
  return std::nullopt;
}

CollectiveLibrary CollectiveLibrary::ideal() {
  CollectiveLibrary lib;
  lib.name = "ideal";
  for (auto& per_algorithm : lib.costs) per_algorithm[static_cast<std::size_t>(Protocol::simple)] = ProtocolCost{};
  return lib;
}

std::string algorithm_names() { return joined(kAlgorithmNames); }
std::string protocol_names() { return joined(kProtocolNames); }

}  // namespace inflect::net
