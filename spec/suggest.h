// Close-match suggestions for misspelled keys and names in spec errors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace meridian::spec {

// Levenshtein distance between `a` and `b`, ignoring ASCII case.
int EditDistance(std::string_view a, std::string_view b);

// Up to `max` candidates close to `word`, ignoring case: those that contain it
// ("h100" finds "H100-80GB") if any do, else those at the smallest edit
// distance, if that is within max(2, |word| / 3). In candidate order.
std::vector<std::string> CloseMatches(std::string_view word,
                                      const std::vector<std::string>& candidates,
                                      size_t max = 3);

}  // namespace meridian::spec
