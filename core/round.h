// Rounding for hot paths.
#pragma once

#include <cmath>
#include <cstdint>

namespace meridian {

// std::llround (nearest, halves away from zero) without the library call:
// exact for every double, since x - trunc(x) is exact below 2^53 and every
// double above that is already an integer. Outside int64's range it defers
// to std::llround.
inline int64_t RoundToInt64(double x) {
  if (!(std::fabs(x) < 9.2e18)) return std::llround(x);
  int64_t t = static_cast<int64_t>(x);  // truncates toward zero
  const double frac = x - static_cast<double>(t);
  if (frac >= 0.5) ++t;
  else if (frac <= -0.5) --t;
  return t;
}

}  // namespace meridian
