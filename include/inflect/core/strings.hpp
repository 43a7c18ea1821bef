#pragma once
// Small string helpers shared by the loaders: edit distance for "did you mean" suggestions.
#include <string>
#include <string_view>
#include <vector>

namespace inflect::core {

/// Levenshtein distance between a and b.
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate closest to `word` if it is within a distance of max(2, |word|/3); empty otherwise.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);
/// "a, b, c".
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace inflect::core
