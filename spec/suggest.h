// Close-match suggestions for misspelled keys and names in spec errors.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.h"

namespace meridian::spec {

// Levenshtein distance between `a` and `b`, ignoring ASCII case.
int EditDistance(std::string_view a, std::string_view b);

// Up to `max` candidates close to `word`, ignoring case: those that contain it
// ("h100" finds "H100-80GB") if any do, else those at the smallest edit
// distance, if that is within max(2, |word| / 3). In candidate order.
std::vector<std::string> CloseMatches(std::string_view word,
                                      const std::vector<std::string>& candidates,
                                      size_t max = 3);

// "; did you mean A or B?" when `names` has close matches to `word`, else
// "; known <what>: <all names>".
std::string SuggestFrom(std::string_view word, const std::vector<std::string>& names,
                        const std::string& what);

// The catalog's GPU model names and region ids, in catalog order.
std::vector<std::string> GpuModelNames(const catalog::Catalog& c);
std::vector<std::string> RegionIds(const catalog::Catalog& c);

// nullopt when the catalog has the GPU model (region); otherwise the reason,
// with suggestions: "\"H100\" is not a GPU model in the catalog; did you mean
// H100-80GB?".
std::optional<std::string> UnknownGpuModel(const catalog::Catalog& c, const std::string& name);
std::optional<std::string> UnknownRegion(const catalog::Catalog& c, const std::string& id);

}  // namespace meridian::spec
