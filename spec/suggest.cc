#include "spec/suggest.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace meridian::spec {

namespace {
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

int EditDistance(std::string_view a, std::string_view b) {
  const std::string x = Lower(a), y = Lower(b);
  std::vector<int> row(y.size() + 1);
  for (size_t j = 0; j <= y.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= x.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= y.size(); ++j) {
      int above = row[j];
      int substitute = diagonal + (x[i - 1] == y[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[y.size()];
}

std::vector<std::string> CloseMatches(std::string_view word,
                                      const std::vector<std::string>& candidates,
                                      size_t max) {
  const std::string w = Lower(word);
  const int limit = std::max(2, static_cast<int>(w.size()) / 3);
  std::vector<std::pair<int, std::string>> scored;
  for (const std::string& c : candidates) {
    const std::string lc = Lower(c);
    int d = EditDistance(w, lc);
    bool contains = w.size() >= 2 && lc.find(w) != std::string::npos;
    if (d <= limit || contains) scored.emplace_back(contains ? std::min(d, 1) : d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& l, const auto& r) { return l.first < r.first; });
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (out.size() == max) break;
    out.push_back(c);
  }
  return out;
}

}  // namespace meridian::spec
