#include "sched/market.h"

#include <algorithm>
#include <cmath>

#include "core/round.h"
#include "estimate/pricing.h"

namespace meridian::sched {

CatalogMarket::CatalogMarket(std::shared_ptr<const catalog::Catalog> catalog)
    : catalog_(std::move(catalog)) {
  for (const auto& o : catalog_->offerings()) {
    std::array<int64_t, 4> row{};
    for (PricingModel m : {PricingModel::kOnDemand, PricingModel::kSpot, PricingModel::kFlexStart,
                           PricingModel::kReserved}) {
      std::optional<Money> p = estimate::CatalogPrice(o, m, catalog_->market());
      row[static_cast<size_t>(m)] = p ? p->micros() : kNoPrice;
    }
    prices_.push_back(row);
  }
  for (const auto& r : catalog_->regions()) {
    series_.push_back(r.grid_zone.empty() ? nullptr : catalog_->FindCarbonSeries(r.grid_zone));
  }
}

std::optional<Money> CatalogMarket::PricePerHour(OfferingId o, PricingModel m, UnixSeconds) const {
  const size_t k = static_cast<size_t>(m);
  if (o.index() >= prices_.size() || k >= 4) return std::nullopt;
  const int64_t p = prices_[o.index()][k];
  if (p == kNoPrice) return std::nullopt;
  return Money::FromMicros(p);
}

bool CatalogMarket::SpotAvailable(OfferingId, UnixSeconds) const { return true; }

double CatalogMarket::FlexStartWaitHours(OfferingId, UnixSeconds) const {
  return catalog_->market().flex_start_expected_wait_hours;
}

std::optional<Money> MeanRunPricePerHour(const MarketView& market, OfferingId o, PricingModel m,
                                         UnixSeconds start, double hours) {
  const std::optional<Money> first = market.PricePerHour(o, m, start);
  if (!first || hours <= 1 || !market.PriceMayChange()) return first;
  const double read = std::min(hours, static_cast<double>(kMaxRunPriceHours));
  const int touched = static_cast<int>(std::ceil(read));
  int64_t price = first->micros();
  double sum = 0;  // micro-dollars x hours
  for (int k = 0; k < touched; ++k) {
    if (k > 0) {
      const std::optional<Money> p = market.PricePerHour(o, m, start + k * UnixSeconds{3600});
      if (p) price = p->micros();
    }
    sum += static_cast<double>(price) * std::min(1.0, read - k);
  }
  return Money::FromMicros(RoundToInt64(sum / read));
}

double MarketView::CarbonSumGPerKwh(RegionId r, UnixSeconds start, int64_t step_s,
                                    int count) const {
  double sum = 0;
  for (int i = 0; i < count; ++i) sum += CarbonGPerKwh(r, start + static_cast<UnixSeconds>(i) * step_s);
  return sum;
}

double CatalogMarket::CarbonSumGPerKwh(RegionId r, UnixSeconds start, int64_t step_s,
                                       int count) const {
  if (r.index() >= series_.size()) return 0;
  if (const catalog::CarbonSeries* s = series_[r.index()]) return s->SumAt(start, step_s, count);
  return MarketView::CarbonSumGPerKwh(r, start, step_s, count);
}

double CatalogMarket::CarbonGPerKwh(RegionId r, UnixSeconds t) const {
  if (r.index() >= series_.size()) return 0;
  if (const catalog::CarbonSeries* s = series_[r.index()]) return s->At(t);
  return catalog_->regions()[r.index()].yearly_gco2_per_kwh;
}

}  // namespace meridian::sched
