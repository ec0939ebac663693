#include "spec/suggest.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>

#include "core/enums.h"

namespace meridian::spec {

namespace {
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Levenshtein distance of two strings already lower-cased; past `limit`,
// any value above it (a row whose every entry is above the limit only
// grows, so the comparison stops there).
int LowerEditDistance(std::string_view x, std::string_view y,
                      int limit = std::numeric_limits<int>::max() - 1) {
  std::vector<int> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= x.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    int lowest = row[0];
    for (size_t j = 1; j <= y.size(); ++j) {
      int above = row[j];
      int substitute = diagonal + (x[i - 1] == y[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      lowest = std::min(lowest, row[j]);
      diagonal = above;
    }
    if (lowest > limit) return limit + 1;
  }
  return row[y.size()];
}

}  // namespace

int EditDistance(std::string_view a, std::string_view b) {
  return LowerEditDistance(Lower(a), Lower(b));
}

std::vector<std::string> CloseMatches(std::string_view word,
                                      const std::vector<std::string>& candidates,
                                      size_t max) {
  const std::string w = Lower(word);
  const int limit = std::max(2, static_cast<int>(w.size()) / 3);
  std::vector<std::string> containing;
  std::vector<std::pair<int, std::string>> near;
  for (const std::string& c : candidates) {
    const std::string lc = Lower(c);
    if (w.size() >= 2 && lc != w && lc.find(w) != std::string::npos) containing.push_back(c);
    // The lengths' difference is a lower bound of the distance: a candidate
    // that far off is not compared letter by letter (a long unknown key in a
    // request would otherwise cost its length times every known key's).
    const size_t apart = w.size() > lc.size() ? w.size() - lc.size() : lc.size() - w.size();
    if (apart > static_cast<size_t>(limit)) continue;
    int d = LowerEditDistance(w, lc, limit);  // both lower-cased already
    if (d <= limit) near.emplace_back(d, c);
  }
  // A candidate that contains the word ("h100" in "H100-80GB") beats any typo
  // distance; otherwise only the nearest distance is offered.
  std::vector<std::string> out;
  if (!containing.empty()) {
    out = containing;
  } else if (!near.empty()) {
    int best = near.front().first;
    for (const auto& [d, c] : near) best = std::min(best, d);
    for (const auto& [d, c] : near) {
      if (d == best) out.push_back(c);
    }
  }
  if (out.size() > max) out.resize(max);
  return out;
}

std::string SuggestFrom(std::string_view word, const std::vector<std::string>& names,
                        const std::string& what) {
  std::vector<std::string> near = CloseMatches(word, names);
  if (!near.empty()) return "; did you mean " + JoinAlternatives(near) + "?";
  return "; known " + what + ": " + JoinAlternatives(names);
}

std::vector<std::string> GpuModelNames(const catalog::Catalog& c) {
  std::vector<std::string> names;
  for (const catalog::GpuModel& g : c.gpus()) names.push_back(g.name);
  return names;
}

std::vector<std::string> RegionIds(const catalog::Catalog& c) {
  std::vector<std::string> ids;
  for (const catalog::Region& r : c.regions()) ids.push_back(r.id);
  return ids;
}

std::optional<std::string> UnknownGpuModel(const catalog::Catalog& c, const std::string& name) {
  if (c.FindGpu(name) != nullptr) return std::nullopt;
  return "\"" + name + "\" is not a GPU model in the catalog" +
         SuggestFrom(name, GpuModelNames(c), "models");
}

std::optional<std::string> UnknownRegion(const catalog::Catalog& c, const std::string& id) {
  if (c.FindRegion(id) != nullptr) return std::nullopt;
  return "\"" + id + "\" is not a region in the catalog (regions are provider:region)" +
         SuggestFrom(id, RegionIds(c), "regions");
}

}  // namespace meridian::spec
