// SpotLeases: the spot leases one simulation holds, per offering in the
// order they started, against the counts the ReplayMarket replays. It is
// also the market as that simulation's scheduler sees it: the replay market
// with each offering's spot count less the instances its leases hold, so a
// spot lease of k instances is placed only where k are left (concurrent jobs
// share the count).
//
// The rule (docs/simulate.md, "Spot"): a lease of k instances starts only
// while the count is at least k more than the leases already on the
// offering hold. When the count falls below what the leases hold, the most
// recently started are reclaimed first (LIFO): the i-th lease in start order
// is reclaimed at the first second the count is below the instances of
// leases 1..i together. A lease that ends moves that threshold down for
// every lease started after it, so their reclaims can only come later.
//
// The engine owns one per run (sim/engine.cc: StartRun, the kReclaim event,
// Interrupt, Finish). Not thread-safe; the market it reads must outlive it.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/market_replay.h"

namespace meridian::sim {

class SpotLeases final : public sched::MarketView {
 public:
  explicit SpotLeases(const ReplayMarket& market) : market_(market) {}

  // MarketView: the replay market's, with SpotInstances less the instances
  // held on the offering (never below 0) and SpotAvailable = that > 0.
  std::optional<Money> PricePerHour(OfferingId o, PricingModel m, UnixSeconds t) const override {
    return market_.PricePerHour(o, m, t);
  }
  bool SpotAvailable(OfferingId o, UnixSeconds t) const override { return SpotInstances(o, t) > 0; }
  int SpotInstances(OfferingId o, UnixSeconds t) const override;
  // The replay market's: the engine's own lease changes start cycles anyway.
  std::optional<UnixSeconds> NextSpotChange(OfferingId o, UnixSeconds t) const override {
    return market_.NextSpotChange(o, t);
  }
  double SpotReclaimsPerHour(OfferingId o, UnixSeconds t) const override {
    return market_.SpotReclaimsPerHour(o, t);
  }
  double FlexStartWaitHours(OfferingId o, UnixSeconds t) const override {
    return market_.FlexStartWaitHours(o, t);
  }
  double CarbonGPerKwh(RegionId r, UnixSeconds t) const override { return market_.CarbonGPerKwh(r, t); }
  double CarbonSumGPerKwh(RegionId r, UnixSeconds start, int64_t step_s, int count) const override {
    return market_.CarbonSumGPerKwh(r, start, step_s, count);
  }
  bool PriceMayChange() const override { return market_.PriceMayChange(); }
  bool CatalogPrices() const override { return market_.CatalogPrices(); }

  // Starts `job`'s lease of `instances` of `o` at `t`, running until `end`
  // at the latest: false (and nothing held) when the market's count at `t`
  // is below what the offering's leases hold plus `instances`. A job holds
  // at most one lease; starting another ends the first.
  bool Start(uint32_t job, OfferingId o, int instances, UnixSeconds t, UnixSeconds end);
  // When `job`'s lease is reclaimed, from `t` on (`t` itself when due now);
  // nullopt: not before its end, or the job holds no lease.
  std::optional<UnixSeconds> ReclaimAt(uint32_t job, UnixSeconds t) const;
  // Whether `job`'s lease must be reclaimed at `t`: the count is below what
  // it and the leases started before it hold.
  bool Due(uint32_t job, UnixSeconds t) const;
  // Ends `job`'s lease (done, reclaimed, preempted; a no-op without one) and
  // returns the jobs whose leases on that offering started after it: their
  // ReclaimAt may have moved later.
  std::vector<uint32_t> End(uint32_t job);

  // Instances the leases on `o` hold.
  int Held(OfferingId o) const;

 private:
  struct Lease {
    uint32_t job;
    int instances;
    UnixSeconds end;
  };
  // The instances held by `job`'s lease and those started before it on its
  // offering, and the lease; nullopt without one.
  struct Position {
    OfferingId offering;
    int through = 0;
    const Lease* lease = nullptr;
  };
  std::optional<Position> Find(uint32_t job) const;

  const ReplayMarket& market_;
  std::unordered_map<uint32_t, std::vector<Lease>> by_offering_;  // offering index -> start order
  std::unordered_map<uint32_t, OfferingId> offering_of_;          // job -> offering
};

}  // namespace meridian::sim
