#include "estimate/pricing.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "estimate/regions.h"
#include "estimate/test_catalog.h"

namespace meridian::estimate {
namespace {

using testing::TestCatalog;

bool Has(const std::vector<PricingTerms>& terms, PricingModel m) {
  return std::any_of(terms.begin(), terms.end(), [&](const auto& t) { return t.model == m; });
}

const PricingTerms& Get(const std::vector<PricingTerms>& terms, PricingModel m) {
  return *std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return t.model == m; });
}

const catalog::Offering& H100x1(const catalog::Catalog& cat) {
  return cat.offerings()[0];  // a3-highgpu-1g, us-central1-a: $5.38327/h, spot $4.4842/h
}

TEST(PricingTest, SpotOnlyForPreemptibleJobs) {
  auto cat = TestCatalog();
  JobSpec j;
  j.kind = WorkloadKind::kTraining;
  RunWindow w{10, 0, std::nullopt};
  EXPECT_FALSE(Has(PricingFor(j, H100x1(*cat), cat->market(), w), PricingModel::kSpot));
  j.preemptible = true;
  auto terms = PricingFor(j, H100x1(*cat), cat->market(), w);
  ASSERT_TRUE(Has(terms, PricingModel::kSpot));
  const PricingTerms& spot = Get(terms, PricingModel::kSpot);
  EXPECT_EQ(spot.per_instance_hour, testing::Usd(4.4842));
  // Default checkpoint 30 min, restart 5 min: loss per reclaim 0.25 + 0.0833 =
  // 0.3333 h; 0.47 reclaims/h x 0.3333 = 0.15667 lost per hour; run x 1 / 0.84333 = 1.18577.
  EXPECT_NEAR(spot.run_multiplier, 1.18577, 1e-5);
}

TEST(PricingTest, SpotRefusedWhenCheckpointsAreTooRare) {
  JobSpec j;
  j.preemptible = true;
  j.checkpoint.interval_s = 4 * 3600;
  // (2 h + 5 min) x 0.47 = 0.98 lost per hour >= 0.5: spot never finishes usefully.
  EXPECT_FALSE(SpotRunMultiplier(j, 1).has_value());
  j.checkpoint.interval_s = 600;
  j.checkpoint.restart_overhead_s = 0;
  // 5 min x 0.47 = 0.03917 per hour: x 1.04076.
  EXPECT_NEAR(*SpotRunMultiplier(j, 1), 1.04076, 1e-5);
}

struct FlexCase {
  const char* name;
  WorkloadKind kind;
  double run_hours;
  std::optional<int64_t> deadline_after_s;
  bool offered;
};

TEST(PricingTest, FlexStartOnlyForDeferrableWorkThatFits) {
  auto cat = TestCatalog();  // expected wait 2 h, max run 168 h
  const FlexCase cases[] = {
      {"no deadline", WorkloadKind::kTraining, 10, std::nullopt, true},
      {"never realtime", WorkloadKind::kRealtimeInference, 10, std::nullopt, false},
      {"run over 168 h", WorkloadKind::kTraining, 169, std::nullopt, false},
      {"exactly 168 h", WorkloadKind::kTraining, 168, std::nullopt, true},
      // deadline 11 h: slack 11 - 10 = 1 h < 2 h wait.
      {"slack below wait", WorkloadKind::kTraining, 10, 11 * 3600, false},
      // deadline 12 h: slack 2 h covers the wait.
      {"slack covers wait", WorkloadKind::kBatchInference, 10, 12 * 3600, true},
  };
  for (const auto& c : cases) {
    JobSpec j;
    j.kind = c.kind;
    RunWindow w{c.run_hours, 1000, std::nullopt};
    if (c.deadline_after_s) w.deadline = 1000 + *c.deadline_after_s;
    EXPECT_EQ(Has(PricingFor(j, H100x1(*cat), cat->market(), w), PricingModel::kFlexStart),
              c.offered)
        << c.name << ": " << FlexStartRefusal(j, cat->market(), w);
  }
}

TEST(PricingTest, FlexStartPriceFromTheMarketDiscount) {
  auto cat = TestCatalog();
  JobSpec j;
  auto terms = PricingFor(j, H100x1(*cat), cat->market(), {10, 0, std::nullopt});
  const PricingTerms& flex = Get(terms, PricingModel::kFlexStart);
  // $5.38327 x (1 - 0.53) = $2.530137.
  EXPECT_EQ(flex.per_instance_hour.micros(), 2530137);
  EXPECT_DOUBLE_EQ(flex.wait_hours, 2);
  // AWS sells no flex-start: no discount-derived price there.
  EXPECT_FALSE(FlexStartPrice(cat->offerings()[10], cat->market()).has_value());
}

TEST(PricingTest, ReservedOnlyWhereTheCatalogHasAPrice) {
  auto cat = TestCatalog();
  JobSpec j;
  RunWindow w{10, 0, std::nullopt};
  EXPECT_FALSE(Has(PricingFor(j, H100x1(*cat), cat->market(), w), PricingModel::kReserved));
  const catalog::Offering& g6e = cat->offerings()[10];  // aws g6e.xlarge: reserved $1.17243
  auto terms = PricingFor(j, g6e, cat->market(), w);
  ASSERT_TRUE(Has(terms, PricingModel::kReserved));
  EXPECT_EQ(Get(terms, PricingModel::kReserved).per_instance_hour, testing::Usd(1.17243));
  EXPECT_TRUE(Has(terms, PricingModel::kOnDemand));  // on-demand always
}

struct BilledCase {
  PricingModel model;
  double run_hours;
  double billed_hours;
};

TEST(PricingTest, ReservedIsPaidForWholeOneYearTerms) {
  auto cat = TestCatalog();
  const catalog::Offering& g6e = cat->offerings()[10];
  auto terms = PricingFor(JobSpec{}, g6e, cat->market(), {10, 0, std::nullopt});
  // The reserved price is AWS's 1-year term: 365 x 24 = 8760 h, paid in whole terms.
  EXPECT_DOUBLE_EQ(Get(terms, PricingModel::kReserved).term_hours, 8760);
  const BilledCase cases[] = {
      {PricingModel::kOnDemand, 720, 720},         // per hour used
      {PricingModel::kReserved, 720, 8760},        // 30 days: a whole year paid
      {PricingModel::kReserved, 0.5, 8760},
      {PricingModel::kReserved, 8760, 8760},       // exactly one term
      {PricingModel::kReserved, 8761, 17520},      // ceil(8761 / 8760) = 2 terms
      {PricingModel::kReserved, 3 * 8760, 26280},  // 3 years
  };
  for (const auto& c : cases) {
    EXPECT_DOUBLE_EQ(BilledHours(Get(terms, c.model), c.run_hours), c.billed_hours)
        << ToString(c.model) << " " << c.run_hours;
  }
  EXPECT_EQ(CommitmentNote(Get(terms, PricingModel::kReserved), 720),
            "reserved: 1 x 1-year term (8760 h each), paid whether used or not: 8760 h paid, "
            "720.0 h used");
  EXPECT_EQ(CommitmentNote(Get(terms, PricingModel::kOnDemand), 720), "");
}

TEST(RegionsTest, ResidencyByGeographyOrRegionId) {
  auto cat = TestCatalog();
  JobSpec j;
  j.residency = {"eu"};
  EXPECT_TRUE(ResidencyAllows(j, *cat->FindRegion("gcp:europe-west4")));
  EXPECT_FALSE(ResidencyAllows(j, *cat->FindRegion("gcp:us-central1")));
  j.residency = {"gcp:us-central1"};
  EXPECT_TRUE(ResidencyAllows(j, *cat->FindRegion("gcp:us-central1")));
  EXPECT_FALSE(ResidencyAllows(j, *cat->FindRegion("aws:us-east-1")));
}

TEST(RegionsTest, LatencyFromGreatCircleDistance) {
  auto cat = TestCatalog();
  const auto& iowa = *cat->FindRegion("gcp:us-central1");
  const auto& virginia = *cat->FindRegion("aws:us-east-1");
  const auto& tokyo = *cat->FindRegion("gcp:asia-northeast1");
  // Council Bluffs - Ashburn ~1590 km: RTT 2 x 1590 / 200 + 5 = 20.9 ms.
  EXPECT_NEAR(GreatCircleKm(iowa, virginia), 1590, 15);
  EXPECT_NEAR(EstimateRttMs(iowa, virginia), 20.9, 0.2);
  JobSpec j;
  j.kind = WorkloadKind::kRealtimeInference;
  j.latency.users = {"gcp:asia-northeast1"};
  j.latency.slo_ms = 50;
  // Tokyo - Iowa ~10,000 km: ~105 ms > 50 ms.
  EXPECT_NE(RegionRefusal(j, iowa, *cat).find("latency"), std::string::npos);
  EXPECT_EQ(RegionRefusal(j, tokyo, *cat), "");
  j.kind = WorkloadKind::kBatchInference;  // latency binds only real-time services
  EXPECT_EQ(RegionRefusal(j, iowa, *cat), "");
}

}  // namespace
}  // namespace meridian::estimate
