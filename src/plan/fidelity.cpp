#include "inflect/plan/fidelity.hpp"

#include <fmt/format.h>

#include <array>
#include <vector>

#include "inflect/core/error.hpp"
#include "inflect/core/strings.hpp"

namespace inflect::plan {

namespace {

struct Named {
  Fidelity fidelity;
  std::string_view name;
};
constexpr std::array<Named, 2> kFidelities{{{Fidelity::full, "full"}, {Fidelity::symmetric, "symmetric"}}};

}  // namespace

std::string_view fidelity_name(Fidelity f) {
  for (const auto& n : kFidelities)
    if (n.fidelity == f) return n.name;
  core::fail_invariant("fidelity_name: a Fidelity without a name");
}

Fidelity parse_fidelity(std::string_view name) {
  std::vector<std::string> allowed;
  for (const auto& n : kFidelities) {
    if (n.name == name) return n.fidelity;
    allowed.emplace_back(n.name);
  }
  const std::string hint = core::closest_match(name, allowed);
  throw core::Error(core::ErrorKind::input,
                    fmt::format("unknown fidelity '{}'{}; allowed: {}", name,
                                hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint), core::join(allowed)));
}

}  // namespace inflect::plan
