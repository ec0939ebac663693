#include "sim/hourly_carbon.h"

#include <algorithm>

namespace meridian::sim {

double HourlyCarbon::At(RegionId r, int64_t hour) const {
  return market_->CarbonGPerKwh(r, origin_ + hour * 3600);
}

const std::vector<double>& HourlyCarbon::Prefix(RegionId r, int64_t hours) {
  if (sum_.size() <= r.index()) sum_.resize(r.index() + 1);
  std::vector<double>& s = sum_[r.index()];
  if (s.empty()) s.push_back(0.0);
  if (static_cast<int64_t>(s.size()) <= hours) {
    // Grow by at least half again, so a long simulation extends O(log) times.
    const int64_t want = std::max<int64_t>(hours + 1, static_cast<int64_t>(s.size() * 3 / 2) + 24);
    s.reserve(static_cast<size_t>(want));
    for (int64_t h = static_cast<int64_t>(s.size()) - 1; h + 1 < want; ++h) s.push_back(s.back() + At(r, h));
  }
  return s;
}

double HourlyCarbon::GramHoursPerKwh(RegionId r, UnixSeconds a, UnixSeconds b) {
  if (!r.valid() || b <= a) return 0;
  a = std::max(a, origin_);
  b = std::max(b, a);
  const int64_t ha = (a - origin_) / 3600, hb = (b - origin_) / 3600;
  if (ha == hb) return At(r, ha) * static_cast<double>(b - a) / 3600.0;
  const std::vector<double>& s = Prefix(r, hb + 1);
  const double head = At(r, ha) * static_cast<double>(origin_ + (ha + 1) * 3600 - a) / 3600.0;
  const double tail = At(r, hb) * static_cast<double>(b - (origin_ + hb * 3600)) / 3600.0;
  return head + (s[static_cast<size_t>(hb)] - s[static_cast<size_t>(ha + 1)]) + tail;
}

}  // namespace meridian::sim
