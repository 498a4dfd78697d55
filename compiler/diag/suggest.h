#pragma once
// "Did you mean" support: edit distance and picking the closest candidate.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flow::diag {

// Levenshtein distance (insert, delete, substitute each cost 1). Inputs longer than 256 bytes
// compare as far apart so hint search stays cheap on pathological input.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `name` if it is close enough to be a plausible typo (distance at most
// a third of the name's length, at least 1), else nullopt. Ties go to the earlier candidate.
std::optional<std::string> ClosestMatch(std::string_view name,
                                        const std::vector<std::string>& candidates);

}  // namespace flow::diag
