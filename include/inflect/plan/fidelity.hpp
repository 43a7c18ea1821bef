#pragma once
// How many ranks the compiler emits: every rank (full), or one per class of interchangeable ranks
// (symmetric; the engine scales the rest). The names are those of `--fidelity` and of reports.
#include <string>
#include <string_view>

namespace inflect::plan {

enum class Fidelity : unsigned char { full, symmetric };

/// "full" or "symmetric".
std::string_view fidelity_name(Fidelity f);
/// The fidelity called `name`; else an input error naming the allowed values (with a did-you-mean).
Fidelity parse_fidelity(std::string_view name);

}  // namespace inflect::plan
