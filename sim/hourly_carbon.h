// HourlyCarbon: the integral of a market's hourly grid carbon over a run, in
// O(1) per run from per-region prefix sums over whole hours since `origin`
// (built lazily for the regions work runs in, and extended as time goes on).
// A run of P watts over [a, b) in region r emits
//   P / 1000 x GramHoursPerKwh(r, a, b)  grams.
// Not thread-safe (the prefix sums grow on use); one per simulation run.
#pragma once

#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "sched/market.h"

namespace meridian::sim {

class HourlyCarbon {
 public:
  HourlyCarbon(const sched::MarketView& market, UnixSeconds origin)
      : market_(&market), origin_(origin - ((origin % 3600) + 3600) % 3600) {}

  // The integral of gCO2/kWh over [a, b), in gCO2/kWh x hours (a >= origin).
  double GramHoursPerKwh(RegionId r, UnixSeconds a, UnixSeconds b);

 private:
  // sum_[r][h]: the sum of the first h whole hours' intensities from origin_.
  const std::vector<double>& Prefix(RegionId r, int64_t hours);
  double At(RegionId r, int64_t hour) const;  // intensity of hour `hour` from origin_
  const sched::MarketView* market_;
  UnixSeconds origin_;
  std::vector<std::vector<double>> sum_;  // by region
};

}  // namespace meridian::sim
