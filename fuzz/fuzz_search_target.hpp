#pragma once
// The search-file fuzz target (above io, like the scan target): parse a search file and
// enumerate its plans; the same contract as every parser (fuzz_targets.hpp).
#include "fuzz_targets.hpp"
#include "inflect/search/search_file.hpp"

namespace inflect::fuzz {

inline void search_yaml(const std::uint8_t* data, std::size_t size) {
  const auto spec = search::parse_search(as_text(data, size), "<fuzz search>", io::project_root());
  (void)search::enumerate_plans(spec.base, spec.space);
}

}  // namespace inflect::fuzz
