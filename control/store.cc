#include "control/store.h"

#include <cstdio>

namespace meridian::control {

std::string JobIdFor(int64_t seq) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "j-%08lld", static_cast<long long>(seq));
  return buf;
}

std::optional<int64_t> SeqFromJobId(const std::string& id) {
  if (id.size() < 3 || id.compare(0, 2, "j-") != 0 || id.size() > 20) return std::nullopt;
  int64_t v = 0;
  for (size_t i = 2; i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9') return std::nullopt;
    v = v * 10 + (id[i] - '0');
  }
  return v;
}

}  // namespace meridian::control
