#pragma once
// What `inflect search` prints and writes: a table of the simulated plans (engine step time,
// the estimate beside it, memory, the breakdown) and the counts, as text and as search.json.
#include <string>

#include "inflect/search/searcher.hpp"

namespace inflect::search {

/// The space searched, one line ("tp {1,2,4,8} · cp {1,2} · ...").
std::string describe_space(const SearchSpace& s);
/// The human-readable result: counts and speed, then the plans by engine step time.
std::string format_search(const SearchResult& r, const SearchSpec& spec);
/// search.json: counts, space, and every simulated plan with its estimate and report.json.
/// `include_volatile` adds the wall-clock figures (left out by tests that compare outputs).
std::string search_to_json(const SearchResult& r, bool include_volatile = true);

}  // namespace inflect::search
