// MarketView: what the market looks like at time t, as the scheduler reads it:
// the price of an offering under a pricing model, how many spot instances can
// be had, the expected flex-start wait, and grid carbon per region and hour.
// The simulator implements it by replaying real traces; CatalogMarket answers
// from the catalog's static figures. Implementations are read-only during a
// decision and must be deterministic for a given t.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "catalog/catalog.h"
#include "core/ids.h"
#include "core/time.h"
#include "estimate/defaults.h"

namespace meridian::sched {

class MarketView {
 public:
  virtual ~MarketView() = default;
  // Price per instance-hour of `o` under `m` at `t`; nullopt: not sold so.
  virtual std::optional<Money> PricePerHour(OfferingId o, PricingModel m, UnixSeconds t) const = 0;
  // Whether spot capacity of `o` can be had at `t` (at least one instance).
  virtual bool SpotAvailable(OfferingId o, UnixSeconds t) const = 0;
  // How many spot instances of `o` can be had at `t`: a spot lease of k
  // instances is placed only while this is >= k. kUnlimitedSpot where the
  // market does not count (this default: SpotAvailable, uncounted).
  virtual int SpotInstances(OfferingId o, UnixSeconds t) const {
    return SpotAvailable(o, t) ? kUnlimitedSpot : 0;
  }
  static constexpr int kUnlimitedSpot = 1 << 30;
  // The first time after `t` at which SpotInstances(o, .) differs from its
  // value at `t`; nullopt: never, or the market cannot tell (this default).
  virtual std::optional<UnixSeconds> NextSpotChange(OfferingId, UnixSeconds) const { return std::nullopt; }
  // Spot reclaims per hour a spot instance of `o` is up, as seen by `t`
  // (only what happened before t): what the replica mix
  // (estimate::SpotReplicaUp) expects of a spot replica there. This default:
  // estimate::kSpotReclaimsPerHour, the rate over all the spot traces.
  virtual double SpotReclaimsPerHour(OfferingId, UnixSeconds) const { return estimate::kSpotReclaimsPerHour; }
  // Expected hours from a flex-start request at `t` to its start.
  virtual double FlexStartWaitHours(OfferingId o, UnixSeconds t) const = 0;
  // Grid carbon intensity of region `r` during the hour holding `t`, gCO2/kWh.
  virtual double CarbonGPerKwh(RegionId r, UnixSeconds t) const = 0;
  // The sum of CarbonGPerKwh(r, start + i x step_s) for i in [0, count), added
  // in that order. Implementations may answer it faster than the loop.
  virtual double CarbonSumGPerKwh(RegionId r, UnixSeconds start, int64_t step_s, int count) const;
  // Whether PricePerHour or SpotAvailable can answer differently at two
  // times; false lets callers skip searching later hours for a better price.
  virtual bool PriceMayChange() const { return true; }
  // Whether PricePerHour is the catalog's price (estimate::CatalogPrice) for
  // every offering at every t: the ElasticIndex's order is then the market's
  // order and a run's price is its price at any hour, so elastic generation
  // and RunPricePerHour skip reading the market offering by offering.
  virtual bool CatalogPrices() const { return false; }
};

// The one price per instance-hour of a run of `o` under `m` that starts at
// `start` and lasts `hours`: what scoring charges, what the lease records and
// so what the simulator bills. The mean of the market's price over the run's
// hours, hour k (from `start`) at PricePerHour(start + k h), the last partial
// hour weighted by its share, the first kMaxRunPriceHours read (a longer run
// pays their mean throughout). An hour the offering is not sold so keeps the
// hour before's price; nullopt when it is not sold so at `start`. One read
// where the market's prices are the catalog's (inline: scoring's hot path).
inline constexpr int kMaxRunPriceHours = 24 * 14;
// RunPricePerHour read hour by hour, whatever the market.
std::optional<Money> MeanRunPricePerHour(const MarketView& market, OfferingId o, PricingModel m,
                                         UnixSeconds start, double hours);
inline std::optional<Money> RunPricePerHour(const MarketView& market, OfferingId o, PricingModel m,
                                            UnixSeconds start, double hours) {
  if (market.CatalogPrices() || hours <= 1) return market.PricePerHour(o, m, start);
  return MeanRunPricePerHour(market, o, m, start, hours);
}

// The catalog's figures, constant in time except carbon (hourly series where
// the region has one, its yearly figure otherwise). Spot is always available,
// uncounted; the flex-start wait is the catalog's expected wait; flex-start
// prices follow estimate::FlexStartPrice (catalog price, else GCP on-demand
// less the discount).
class CatalogMarket final : public MarketView {
 public:
  explicit CatalogMarket(std::shared_ptr<const catalog::Catalog> catalog);

  std::optional<Money> PricePerHour(OfferingId o, PricingModel m, UnixSeconds t) const override;
  bool SpotAvailable(OfferingId o, UnixSeconds t) const override;
  int SpotInstances(OfferingId, UnixSeconds) const override { return kUnlimitedSpot; }
  double FlexStartWaitHours(OfferingId o, UnixSeconds t) const override;
  double CarbonGPerKwh(RegionId r, UnixSeconds t) const override;
  double CarbonSumGPerKwh(RegionId r, UnixSeconds start, int64_t step_s, int count) const override;
  bool PriceMayChange() const override { return false; }
  bool CatalogPrices() const override { return true; }

 private:
  static constexpr int64_t kNoPrice = INT64_MIN;
  std::shared_ptr<const catalog::Catalog> catalog_;
  // By offering, the price per hour under each pricing model (flex-start as
  // estimate::FlexStartPrice) in micro-dollars, kNoPrice where none: one
  // small row per offering instead of the catalog's whole record.
  std::vector<std::array<int64_t, 4>> prices_;
  std::vector<const catalog::CarbonSeries*> series_;  // by region, nullptr: yearly
};

}  // namespace meridian::sched
