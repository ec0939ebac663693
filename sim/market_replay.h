// ReplayMarket: the market a simulation replays (sched::MarketView), built
// from the catalog and the real spot traces:
//
//   prices     the catalog's, constant in time (CatalogMarket: on-demand,
//              spot, 1-year reserved, flex-start)
//   spot       each spot-priced GPU offering replays one trace of
//              "Can't Be Late" (SpotTrace): the count of instances that can
//              be had per tick (SpotInstances). Leases share the count; the
//              engine reclaims them, newest first, when it falls below what
//              they hold (sim/spot_leases.h). The assignment
//              (docs/simulate.md, "Spot"): an offering of an instance type
//              that was measured in its own region (p3.2xlarge, p3.16xlarge
//              in aws:us-east-1, us-east-2, us-west-2) replays one of that
//              region's traces of the type, aligned with the simulation's
//              start; any other offering replays a trace of its size class
//              (8+ GPUs per instance: the 8-GPU traces; else 1-GPU traces)
//              from a seeded start offset, so zones sharing a trace are not
//              in step. Choice and offset are a hash of (seed, offering's
//              region, zone, instance type): the same seed, the same market.
//              Options::mapped replaces the assignment of the offerings it
//              names with their own traces (`simulate --spot-traces`), and
//              other_spot = kNone leaves every other offering without spot.
//   flex-start the scheduler is told the expected wait (FlexStartWaitHours,
//              the mean of the wait distribution); the engine draws the
//              actual wait of each request (DrawFlexWait): exponential with
//              that mean, seeded per (job, attempt)
//   carbon     hourly per region from the catalog (CatalogMarket)
//
// Immutable after construction and safe to read from many threads.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "catalog/catalog.h"
#include "sched/market.h"
#include "sim/spot_traces.h"

namespace meridian::sim {

// Where offerings without a mapped trace get spot from.
enum class OtherSpot : uint8_t {
  kCatalog,  // the assignment above
  kNone,     // nowhere: no spot at all
};

// An offering that replays a trace of its own (`simulate --spot-traces`).
struct MappedSpotTrace {
  OfferingId offering;
  SpotTrace trace;
  // The wall time of the trace's tick 0; nullopt: the simulation's second 0.
  // The trace repeats before and after its ticks.
  std::optional<UnixSeconds> tick0;
};

struct ReplayMarketOptions {
  UnixSeconds start = 0;     // second 0 of the simulation (and of aligned traces)
  uint64_t seed = 1;
  // Mean flex-start wait in hours; < 0: the catalog's expected wait.
  double flex_wait_mean_h = -1;
  OtherSpot other_spot = OtherSpot::kCatalog;
  std::vector<MappedSpotTrace> mapped;  // at most one per offering
};

// Which trace an offering replays, and from where.
struct SpotAssignment {
  int trace = -1;          // index into the traces; -1: no spot replay (not spot-priced)
  int64_t offset_s = 0;    // trace second at the simulation's start
  bool same_region = false;  // a trace measured in the offering's region
  bool mapped = false;       // the offering's own trace (Options::mapped)
};

class ReplayMarket final : public sched::MarketView {
 public:
  ReplayMarket(std::shared_ptr<const catalog::Catalog> catalog, std::vector<SpotTrace> traces,
               const ReplayMarketOptions& options);

  std::optional<Money> PricePerHour(OfferingId o, PricingModel m, UnixSeconds t) const override;
  bool SpotAvailable(OfferingId o, UnixSeconds t) const override;
  // The trace's count at `t`; 0 for an offering that replays none.
  int SpotInstances(OfferingId o, UnixSeconds t) const override;
  // The reclaims per hour up of the trace `o` replays over the
  // kReclaimRateWindowS before t (SpotTrace::ReclaimsPerHourUpBefore): a
  // trailing rate, as AWS's Spot Instance Advisor gives its frequency of
  // interruption over the trailing month. The default where `o` replays no
  // trace or it was never up in the window.
  double SpotReclaimsPerHour(OfferingId o, UnixSeconds t) const override;
  static constexpr int64_t kReclaimRateWindowS = 30 * 86400;
  std::optional<UnixSeconds> NextSpotChange(OfferingId o, UnixSeconds t) const override;
  double FlexStartWaitHours(OfferingId o, UnixSeconds t) const override;
  double CarbonGPerKwh(RegionId r, UnixSeconds t) const override;
  // The catalog market's sum (running sums, the same double as the loop).
  double CarbonSumGPerKwh(RegionId r, UnixSeconds start, int64_t step_s, int count) const override;
  bool CatalogPrices() const override { return true; }  // prices_ answers them

  // The first second >= from at which fewer than `need` spot instances of
  // `o` can be had (`from` itself when fewer can now): when leases holding
  // `need` instances together lose one. nullopt: never within the trace.
  std::optional<UnixSeconds> NextSpotBelow(OfferingId o, UnixSeconds from, int need) const;
  // When a lone one-instance lease of `o` held from `from` is reclaimed:
  // NextSpotBelow(o, from, 1).
  std::optional<UnixSeconds> NextSpotReclaim(OfferingId o, UnixSeconds from) const {
    return NextSpotBelow(o, from, 1);
  }
  // The actual wait of a flex-start request, seconds, drawn for `key`
  // (the engine passes job and attempt).
  int64_t DrawFlexWait(uint64_t key) const;

  const SpotAssignment& AssignmentOf(OfferingId o) const { return assignment_[o.index()]; }
  const std::vector<SpotTrace>& traces() const { return traces_; }
  const ReplayMarketOptions& options() const { return options_; }

 private:
  std::shared_ptr<const catalog::Catalog> catalog_;
  sched::CatalogMarket prices_;
  std::vector<SpotTrace> traces_;
  ReplayMarketOptions options_;
  double flex_mean_h_ = 0;
  std::vector<SpotAssignment> assignment_;  // by offering
};

// FNV-1a of `s`: a hash that is the same on every platform.
uint64_t StableHash(std::string_view s);

}  // namespace meridian::sim
