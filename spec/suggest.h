// Close-match suggestions for misspelled keys and names in spec errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace meridian::spec {

// Levenshtein distance between `a` and `b`, ignoring ASCII case.
int EditDistance(std::string_view a, std::string_view b);

// Up to `max` candidates close to `word`, nearest first: those within an edit
// distance of max(2, |word| / 3), and those that start with `word` or contain
// it (ignoring case), so "h100" finds "H100-80GB".
std::vector<std::string> CloseMatches(std::string_view word,
                                      const std::vector<std::string>& candidates,
                                      size_t max = 3);

}  // namespace meridian::spec
