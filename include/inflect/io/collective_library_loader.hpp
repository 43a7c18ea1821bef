#pragma once
// calibration/collectives/*.yaml -> net::CollectiveLibrary: a collective library's own cost
// figures per algorithm and protocol, embedded into the binary like the device catalog.
#include <optional>
#include <string>
#include <vector>

#include "inflect/io/yaml_reader.hpp"
#include "inflect/net/collective_library.hpp"

namespace inflect::io {

/// A collective latency at `n` (a library's step or base latency, a profile's fit): 0 to 1 s, else
/// an input error at `n`.
core::Seconds read_short_latency(const Node& n);

/// A collective algorithm or protocol named at `n` (a topology's `collectives:`, a profile):
/// "auto", where `allow_auto`, is none; an unknown name is an input error at `n` listing the choices.
std::optional<net::Algorithm> read_algorithm(const Node& n, bool allow_auto);
std::optional<net::Protocol> read_protocol(const Node& n, bool allow_auto);

/// Parses one library document (strict keys; a source for every figure group).
net::CollectiveLibrary parse_collective_library(const Node& root);
/// Every embedded library, sorted by name; parsed once, thread-safe.
const std::vector<net::CollectiveLibrary>& collective_libraries();
/// The embedded library named `name`; throws core::Error(input) listing the known ones.
const net::CollectiveLibrary& find_collective_library(const std::string& name);

}  // namespace inflect::io
