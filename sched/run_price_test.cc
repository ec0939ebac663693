// One price per run (issue 17, "Billed is what was scored"): scoring, the
// lease and the bill all read RunPricePerHour at the run's own hours, and
// elastic generation orders offerings by the market's price, not the
// catalog's.
#include <gtest/gtest.h>

#include "sched/cost.h"
#include "sched/cycle.h"
#include "sched/explain.h"
#include "sched/market.h"
#include "sched/plugins/list_price.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

constexpr int64_t kHour = 3600;
constexpr int64_t kUsCentralA100 = 2945820;  // a2-ultragpu-1g us-central1 on-demand, micro-$/h
constexpr int64_t kEuropeA100 = 3243350;     // a2-ultragpu-1g europe-west4 on-demand

// The catalog's market with one offering's price under one pricing model
// replaced from `from` on (nullopt: not sold so then). An invalid offering
// replaces nothing: the catalog's prices, read as a market that does not
// say so (CatalogPrices false).
class Repriced final : public MarketView {
 public:
  Repriced(const MarketView& base, OfferingId o, PricingModel m, UnixSeconds from,
           std::optional<Money> price)
      : base_(base), o_(o), m_(m), from_(from), price_(price) {}
  std::optional<Money> PricePerHour(OfferingId o, PricingModel m, UnixSeconds t) const override {
    if (o == o_ && m == m_ && t >= from_) return price_;
    return base_.PricePerHour(o, m, t);
  }
  bool SpotAvailable(OfferingId o, UnixSeconds t) const override { return base_.SpotAvailable(o, t); }
  int SpotInstances(OfferingId o, UnixSeconds t) const override { return base_.SpotInstances(o, t); }
  double FlexStartWaitHours(OfferingId o, UnixSeconds t) const override {
    return base_.FlexStartWaitHours(o, t);
  }
  double CarbonGPerKwh(RegionId r, UnixSeconds t) const override { return base_.CarbonGPerKwh(r, t); }

 private:
  const MarketView& base_;
  OfferingId o_;
  PricingModel m_;
  UnixSeconds from_;
  std::optional<Money> price_;
};

OfferingId UsCentralA100(const testing::World& w) {
  return testing::Offering(w, "gcp:us-central1", "a2-ultragpu-1g");
}
OfferingId EuropeA100(const testing::World& w) {
  return testing::Offering(w, "gcp:europe-west4", "a2-ultragpu-1g");
}

// us-central1's A100 on-demand halves at +3 h: 2.94582 -> 1.47291 $/h.
Repriced HalvesAtThree(const testing::World& w) {
  return Repriced(*w.market, UsCentralA100(w), PricingModel::kOnDemand, kNow + 3 * kHour,
                  Money::FromMicros(kUsCentralA100 / 2));
}

TEST(RunPriceTest, RunPricePerHourIsTheMeanOverTheRunsHours) {
  testing::World w = MakeWorld();
  const OfferingId us = UsCentralA100(w), eu = EuropeA100(w);
  Repriced halves = HalvesAtThree(w);
  Repriced late = Repriced(*w.market, us, PricingModel::kOnDemand, kNow + 400 * kHour,
                           Money::FromMicros(kUsCentralA100 / 2));
  Repriced gone = Repriced(*w.market, us, PricingModel::kOnDemand, kNow + 3 * kHour, std::nullopt);
  const int64_t half = kUsCentralA100 / 2;  // 1472910
  struct Case {
    const char* name;
    const MarketView* market;
    OfferingId offering;
    int64_t start_h;
    double hours;
    std::optional<int64_t> want;
  } cases[] = {
      // hours 0 and 1 before the drop: 2.94582
      {"before the drop", &halves, us, 0, 2, kUsCentralA100},
      // deferred to the drop: 1.47291
      {"from the drop", &halves, us, 3, 2, half},
      // +2 h for 2 h: (2945820 + 1472910) / 2 = 2209365
      {"across the drop", &halves, us, 2, 2, 2209365},
      // +2 h for 2.5 h: (2945820 + 1472910 + 0.5 x 1472910) / 2.5 = 5155185 / 2.5 = 2062074
      {"partial last hour", &halves, us, 2, 2.5, 2062074},
      // +1 h for 4.5 h: (2 x 2945820 + 2.5 x 1472910) / 4.5 = 9573915 / 4.5 = 2127536.67
      {"two hours each side", &halves, us, 1, 4.5, 2127537},
      // half an hour: the start's price
      {"under an hour", &halves, us, 2, 0.5, kUsCentralA100},
      // europe-west4 is not repriced
      {"another offering", &halves, eu, 0, 10, kEuropeA100},
      // 500 h with the drop at +400 h: only the first 14 x 24 = 336 h are read, all before it
      {"beyond the hours read", &late, us, 0, 500, kUsCentralA100},
      // not sold from +3 h: hour 3 keeps hour 2's price; not sold at the start: none
      {"unsold later hour", &gone, us, 0, 4, kUsCentralA100},
      {"unsold at the start", &gone, us, 3, 2, std::nullopt},
      // the catalog's market: its price, whatever the hours
      {"catalog market", w.market.get(), us, 0, 100, kUsCentralA100},
  };
  for (const Case& c : cases) {
    std::optional<Money> got = RunPricePerHour(*c.market, c.offering, PricingModel::kOnDemand,
                                               kNow + c.start_h * kHour, c.hours);
    ASSERT_EQ(got.has_value(), c.want.has_value()) << c.name;
    if (c.want) {
      EXPECT_EQ(got->micros(), *c.want) << c.name;
    }
  }
}

// A one-GPU A100 job of 2 h on us-central1's a2-ultragpu-1g, starting now
// or deferred to the drop at +3 h: scoring, the lease and the bill (the
// simulator's: the lease's price per hour x the hours held) agree.
TEST(RunPriceTest, DeferredRunIsScoredLeasedAndBilledAtItsHoursPrice) {
  testing::World w = MakeWorld();
  Repriced halves = HalvesAtThree(w);
  JobSpec spec = TwoHourJob("batch", 1, 40);
  spec.resources.gpu_models = {"A100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  cy.snap.market = &halves;
  struct Case {
    const char* name;
    int64_t start_h;
    int64_t lease_micros;  // price per hour, 1 instance
    int64_t cost_micros;   // lease x 2 h
  } cases[] = {
      {"now", 0, kUsCentralA100, 2 * kUsCentralA100},  // 2.94582 x 2 = 5.89164 $
      {"deferred to the drop", 3, kUsCentralA100 / 2, kUsCentralA100},  // 1.47291 x 2 = 2.94582 $
      {"straddling it", 2, 2209365, 4418730},  // (2.94582 + 1.47291) / 2 = 2.209365 $/h x 2
  };
  for (const Case& c : cases) {
    Candidate cand;
    cand.kind = CandidateKind::kElastic;
    cand.offering = UsCentralA100(w);
    cand.region = FindRegionId(*w.catalog, "gcp:us-central1");
    cand.instances = 1;
    cand.start = kNow + c.start_h * kHour;
    EXPECT_EQ(ComputeRunCost(cy.ctx, cand).micros(), c.cost_micros) << c.name;
    // the baselines' list price reads the same hours (on-demand: no rework)
    EXPECT_EQ(ListPrice::ListCost(cy.ctx, cand).micros(), c.cost_micros) << c.name;
    Allocation a = AllocationFor(cy.ctx, cand, w.ledger);
    ASSERT_TRUE(a.elastic) << c.name;
    EXPECT_EQ(a.elastic->price_per_hour.micros(), c.lease_micros) << c.name;
    EXPECT_EQ(a.end - a.start, 2 * kHour) << c.name;
    const Money bill = a.elastic->price_per_hour.Times((a.end - a.start) / 3600.0);
    EXPECT_EQ(bill.micros(), c.cost_micros) << c.name;
  }
}

std::unique_ptr<Scheduler> Make(const testing::World& w, const char* yaml) {
  auto p = ParseProfile(yaml, "test.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  auto s = Scheduler::Create(*p, w.fleet);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// The fleet without A100s (onprem-a's H100s only), so an A100 job buys.
testing::World NoA100World() {
  FleetSpec f = testing::SmallFleetSpec();
  f.clusters.resize(1);
  return MakeWorld(f);
}

// Through the scheduler: time_shift proposes the drop at +3 h (us-central1's
// carbon is a flat yearly figure, so only the price moves it); cheapest_price
// compares 1.47291 x 2 = 2.95 $ there with 5.89 $ now (us-central1) and
// 3.24335 x 2 = 6.49 $ now (europe-west4): a kDefer to +3 h whose lease holds
// 1.47291 $/h, the price the score charged.
TEST(RunPriceTest, SchedulerDefersToTheDropAndLeasesItsPrice) {
  testing::World w = NoA100World();
  Repriced halves = HalvesAtThree(w);
  auto s = Make(w, R"(name: shift
options:
  pricing_models: [on-demand]
plugins:
  - name: gpu_fit
  - name: time_shift
  - name: cheapest_price
)");
  JobSpec spec = TwoHourJob("batch", 1, 40);
  spec.resources.gpu_models = {"A100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  Snapshot snap = w.At();
  snap.market = &halves;
  Decision d = s->Decide(job, snap);
  ASSERT_EQ(d.kind, DecisionKind::kDefer) << FormatDecision(d);
  EXPECT_EQ(d.start, kNow + 3 * kHour);
  ASSERT_TRUE(d.allocation && d.allocation->elastic) << FormatDecision(d);
  const ElasticLease& lease = *d.allocation->elastic;
  EXPECT_EQ(lease.offering, UsCentralA100(w));
  EXPECT_EQ(lease.price_per_hour.micros(), kUsCentralA100 / 2);
  const Allocation& a = *d.allocation;
  EXPECT_EQ(lease.price_per_hour.Times((a.end - a.start) / 3600.0).micros(), kUsCentralA100);
  EXPECT_NE(FormatDecision(d).find("1 x 1.47 $/h on-demand x 2.00 h = 2.95 $"), std::string::npos)
      << FormatDecision(d);
}

// With one elastic candidate allowed, catalog order keeps us-central1
// (2.94582 < 3.24335 $/h) and never looks at europe-west4. A market selling
// europe-west4's A100 at 1.50 $/h makes it the cheapest: it is generated
// first and chosen, its lease at 1.50 $/h.
TEST(RunPriceTest, LiveCheapestOfferingIsGeneratedPastTheCandidateCap) {
  testing::World w = NoA100World();
  const auto list = w.elastic->Choices(testing::Model(w, "A100-80GB"), 1, PricingModel::kOnDemand);
  ASSERT_EQ(list.size(), 2u);
  ASSERT_EQ(list[0].offering, UsCentralA100(w));  // catalog order: europe-west4 is second
  Repriced cheap_eu(*w.market, EuropeA100(w), PricingModel::kOnDemand, 0, Money::FromDollars(1.5));
  auto s = Make(w, R"(name: capped
options:
  pricing_models: [on-demand]
  max_elastic_candidates: 1
plugins:
  - name: gpu_fit
  - name: cheapest_price
)");
  JobSpec spec = TwoHourJob("batch", 1, 40);
  spec.resources.gpu_models = {"A100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  struct Case {
    const char* name;
    const MarketView* market;
    OfferingId want;
    int64_t lease_micros;
  } cases[] = {
      {"catalog prices", w.market.get(), UsCentralA100(w), kUsCentralA100},
      {"europe-west4 at 1.50", &cheap_eu, EuropeA100(w), 1500000},
  };
  for (const Case& c : cases) {
    Snapshot snap = w.At();
    snap.market = c.market;
    Decision d = s->Decide(job, snap);
    ASSERT_EQ(d.kind, DecisionKind::kPlace) << c.name << "\n" << FormatDecision(d);
    ASSERT_TRUE(d.allocation && d.allocation->elastic) << c.name;
    EXPECT_EQ(d.allocation->elastic->offering, c.want) << c.name;
    EXPECT_EQ(d.allocation->elastic->price_per_hour.micros(), c.lease_micros) << c.name;
  }
}

// The market's order at the catalog's prices is the catalog's order: a
// market that does not say its prices are the catalog's (so generation
// reads and sorts them itself) decides every job as the catalog market does.
TEST(RunPriceTest, LiveOrderAtCatalogPricesDecidesAsTheCatalog) {
  testing::World w = NoA100World();
  Repriced same(*w.market, OfferingId(), PricingModel::kOnDemand, 0, std::nullopt);
  auto profile = EmbeddedProfile("default");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto made = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  Scheduler& s = **made;
  auto pinned = [](const char* name, int gpus, std::vector<std::string> models, bool spot) {
    JobSpec j = TwoHourJob(name, gpus, 40);
    j.resources.gpu_models = std::move(models);
    j.preemptible = spot;
    return j;
  };
  const JobSpec specs[] = {
      pinned("a100", 1, {"A100-80GB"}, false),
      pinned("a100-spot", 2, {"A100-80GB"}, true),
      pinned("h100-spot", 8, {"H100-80GB"}, true),
      pinned("h100-16", 16, {"H100-80GB"}, false),
      pinned("any", 1, {}, true),
      pinned("l4-or-a100", 1, {"L4", "A100-80GB"}, true),
  };
  uint32_t id = 1;
  for (const JobSpec& spec : specs) {
    QueuedJob job = Queue(w, spec, id++);
    Snapshot snap = w.At();
    const std::string catalog = FormatDecision(s.Decide(job, snap));
    snap.market = &same;
    EXPECT_EQ(FormatDecision(s.Decide(job, snap)), catalog) << spec.name;
  }
}

}  // namespace
}  // namespace meridian::sched
