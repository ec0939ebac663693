#include "sim/market_replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace meridian::sim {
namespace {

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return *c;
}

ReplayMarket Market(uint64_t seed) {
  ReplayMarketOptions o;
  o.start = 1704067200;
  o.seed = seed;
  return ReplayMarket(Embedded(), EmbeddedSpotTraces(), o);
}

TEST(ReplayMarket, MeasuredInstanceTypesReplayTheirOwnRegionsTraces) {
  ReplayMarket m = Market(1);
  const auto& offers = Embedded()->offerings();
  int own = 0, mapped = 0;
  for (size_t i = 0; i < offers.size(); ++i) {
    const SpotAssignment& a = m.AssignmentOf(OfferingId(static_cast<uint32_t>(i)));
    if (!offers[i].spot_per_hour) {
      EXPECT_EQ(a.trace, -1);
      continue;
    }
    ASSERT_GE(a.trace, 0);
    const SpotTrace& t = m.traces()[static_cast<size_t>(a.trace)];
    if (a.same_region) {
      ++own;
      EXPECT_EQ(t.region, offers[i].region);
      EXPECT_EQ(t.instance_type, offers[i].instance_type);
      EXPECT_EQ(a.offset_s, 0);
    } else {
      ++mapped;
      EXPECT_EQ(t.gpus >= 8, offers[i].gpu_count >= 8) << offers[i].instance_type;
    }
  }
  EXPECT_GT(own, 0);
  EXPECT_GT(mapped, own);
}

TEST(ReplayMarket, TheSeedPicksTheAssignment) {
  ReplayMarket a = Market(1), b = Market(1), c = Market(2);
  int differ = 0;
  for (size_t i = 0; i < Embedded()->offerings().size(); ++i) {
    OfferingId o(static_cast<uint32_t>(i));
    EXPECT_EQ(a.AssignmentOf(o).trace, b.AssignmentOf(o).trace);
    EXPECT_EQ(a.AssignmentOf(o).offset_s, b.AssignmentOf(o).offset_s);
    differ += a.AssignmentOf(o).trace != c.AssignmentOf(o).trace ||
              a.AssignmentOf(o).offset_s != c.AssignmentOf(o).offset_s;
  }
  EXPECT_GT(differ, 0);
}

TEST(ReplayMarket, SpotFollowsTheTraceAndReclaimsWhenItGoesDown) {
  ReplayMarket m = Market(1);
  const auto& offers = Embedded()->offerings();
  for (size_t i = 0; i < offers.size(); ++i) {
    OfferingId o(static_cast<uint32_t>(i));
    const SpotAssignment& a = m.AssignmentOf(o);
    if (a.trace < 0) continue;
    const SpotTrace& t = m.traces()[static_cast<size_t>(a.trace)];
    for (int64_t s : {int64_t{0}, int64_t{3600}, int64_t{86400 * 3 + 17}}) {
      const UnixSeconds at = m.options().start + s;
      EXPECT_EQ(m.SpotAvailable(o, at), t.UpAt(s + a.offset_s));
      std::optional<UnixSeconds> r = m.NextSpotReclaim(o, at);
      if (!r) continue;
      EXPECT_GE(*r, at);
      EXPECT_FALSE(m.SpotAvailable(o, *r));
      if (*r > at) {
        EXPECT_TRUE(m.SpotAvailable(o, *r - 1));
      }
    }
  }
}

// Each spot-priced offering's reclaim rate at t is that of the trace it
// replays over the 30 days before t, counted a second way here: the up ->
// down steps tick by tick (UpAt) over the window's ticks, over its hours up;
// offerings without spot get the default rate.
TEST(ReplayMarket, AnOfferingsReclaimRateIsItsTracesOwnOverTheMonthBefore) {
  ReplayMarket m = Market(1);
  const UnixSeconds t = 1704067200 + 10 * 86400;  // ten days into the replay
  const auto& offers = Embedded()->offerings();
  int checked = 0;
  for (size_t i = 0; i < offers.size() && checked < 5; ++i) {
    OfferingId o(static_cast<uint32_t>(i));
    const SpotAssignment& a = m.AssignmentOf(o);
    if (a.trace < 0) {
      EXPECT_DOUBLE_EQ(m.SpotReclaimsPerHour(o, t), estimate::kSpotReclaimsPerHour);
      continue;
    }
    const SpotTrace& tr = m.traces()[static_cast<size_t>(a.trace)];
    const int64_t now_tick = (10 * 86400 + a.offset_s) / tr.gap_s;
    const int64_t n = std::min<int64_t>(30 * 86400 / tr.gap_s, tr.ticks);
    auto up_at = [&](int64_t tick) { return tr.UpAt(((tick % tr.ticks) + tr.ticks) % tr.ticks * tr.gap_s); };
    int reclaims = 0;
    int64_t up_ticks = 0;
    for (int64_t k = now_tick - n; k < now_tick; ++k) {
      reclaims += up_at(k - 1) && !up_at(k) ? 1 : 0;
      up_ticks += up_at(k) ? 1 : 0;
    }
    if (up_ticks == 0) continue;
    const double hours_up = static_cast<double>(up_ticks * tr.gap_s) / 3600.0;
    EXPECT_NEAR(m.SpotReclaimsPerHour(o, t), reclaims / hours_up, 1e-9) << tr.name;
    ++checked;
  }
  EXPECT_EQ(checked, 5);
}

TEST(ReplayMarket, FlexWaitsAreSeededAndAverageTheExpectedWait) {
  ReplayMarket m = Market(3);
  const double expected_h = Embedded()->market().flex_start_expected_wait_hours;
  EXPECT_DOUBLE_EQ(m.FlexStartWaitHours(OfferingId(0), 0), expected_h);
  double sum = 0;
  const int n = 20000;
  for (int k = 0; k < n; ++k) {
    const int64_t w = m.DrawFlexWait(static_cast<uint64_t>(k));
    EXPECT_GE(w, 0);
    EXPECT_EQ(w, m.DrawFlexWait(static_cast<uint64_t>(k)));
    sum += static_cast<double>(w);
  }
  EXPECT_NEAR(sum / n / 3600.0, expected_h, 0.03 * expected_h);  // exponential, mean = expected wait
}

TEST(ReplayMarket, PricesAndCarbonAreTheCatalogs) {
  ReplayMarket m = Market(1);
  sched::CatalogMarket catalog(Embedded());
  for (uint32_t i = 0; i < 50; ++i) {
    for (PricingModel p : {PricingModel::kOnDemand, PricingModel::kSpot, PricingModel::kFlexStart}) {
      EXPECT_EQ(m.PricePerHour(OfferingId(i), p, 0), catalog.PricePerHour(OfferingId(i), p, 0));
    }
  }
  for (uint16_t r = 0; r < 10; ++r) {
    EXPECT_EQ(m.CarbonGPerKwh(RegionId(r), 1704067200), catalog.CarbonGPerKwh(RegionId(r), 1704067200));
  }
}

}  // namespace
}  // namespace meridian::sim
