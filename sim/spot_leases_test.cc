// Spot counts: leases share an offering's count, a lease of k starts only
// where k are left, and the newest leases are reclaimed first (LIFO). One
// offering replays a hand-written trace; every expected time is worked by
// hand from it in the comments.
#include "sim/spot_leases.h"

#include <gtest/gtest.h>

#include "sim/test_world.h"

namespace meridian::sim {
namespace {

constexpr UnixSeconds kT0 = 1767225600;  // the simulation's second 0

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return *c;
}

// A trace of ticks of `gap` seconds with the given counts.
SpotTrace Counts(std::vector<int> counts, int64_t gap = 100) {
  std::string json = "{\"metadata\": {\"gap_seconds\": " + std::to_string(gap) + "}, \"data\": [";
  for (size_t i = 0; i < counts.size(); ++i) json += (i ? "," : "") + std::to_string(counts[i]);
  auto t = ParseSpotTraceJson(json + "]}", "t.json");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

// The market with offering 0 replaying `trace` from second 0 and no spot
// anywhere else.
ReplayMarket OneOffering(const SpotTrace& trace) {
  ReplayMarketOptions o;
  o.start = kT0;
  o.other_spot = OtherSpot::kNone;
  o.mapped = {{OfferingId(0), trace, std::nullopt}};
  return ReplayMarket(Embedded(), EmbeddedSpotTraces(), o);
}

const OfferingId kO(0);

// Counts 3,3,1,0,2 in ticks of 100 s: seconds [0,200) 3, [200,300) 1,
// [300,400) 0, [400,500) 2; the period is 500 s.
TEST(SpotLeases, NewestLeaseIsReclaimedFirst) {
  ReplayMarket m = OneOffering(Counts({3, 3, 1, 0, 2}));
  SpotLeases leases(m);
  EXPECT_TRUE(leases.Start(1, kO, 1, kT0 + 0, kT0 + 10000));   // A: 1 of 3
  EXPECT_TRUE(leases.Start(2, kO, 2, kT0 + 50, kT0 + 10000));  // B: 1 + 2 = 3 of 3
  EXPECT_EQ(leases.Held(kO), 3);
  // B (newest) goes when the count falls below A + B = 3: at 200 (count 1).
  EXPECT_EQ(leases.ReclaimAt(2, kT0 + 50), kT0 + 200);
  // A goes when it falls below A's 1: at 300 (count 0).
  EXPECT_EQ(leases.ReclaimAt(1, kT0 + 0), kT0 + 300);
  EXPECT_TRUE(leases.Due(2, kT0 + 200));
  EXPECT_FALSE(leases.Due(1, kT0 + 200));  // 1 left: A keeps it
  EXPECT_FALSE(leases.Due(2, kT0 + 199));
  EXPECT_TRUE(leases.End(2).empty());      // nothing started after B
  EXPECT_EQ(leases.ReclaimAt(1, kT0 + 200), kT0 + 300);
  EXPECT_TRUE(leases.Due(1, kT0 + 300));
  leases.End(1);
  EXPECT_EQ(leases.Held(kO), 0);
  // At 400 (count 2) a lease of 2 starts; the count next falls below 2 in
  // the second period at 500 + 200 = 700.
  EXPECT_TRUE(leases.Start(3, kO, 2, kT0 + 400, kT0 + 10000));
  EXPECT_EQ(leases.ReclaimAt(3, kT0 + 400), kT0 + 700);
}

TEST(SpotLeases, ALeaseOfKStartsOnlyWhereKAreLeft) {
  ReplayMarket m = OneOffering(Counts({3, 3, 1, 0, 2}));
  SpotLeases leases(m);
  EXPECT_FALSE(leases.Start(1, kO, 2, kT0 + 250, kT0 + 10000));  // count 1 < 2
  EXPECT_EQ(leases.Held(kO), 0);
  EXPECT_TRUE(leases.Start(1, kO, 1, kT0 + 250, kT0 + 10000));   // 1 of 1
  EXPECT_FALSE(leases.Start(2, kO, 1, kT0 + 250, kT0 + 10000));  // 1 + 1 > 1
  EXPECT_FALSE(leases.Start(3, kO, 1, kT0 + 350, kT0 + 10000));  // count 0
  EXPECT_FALSE(leases.Start(4, kO, 3, kT0 + 450, kT0 + 10000));  // 1 + 3 > 2
  EXPECT_TRUE(leases.Start(4, kO, 1, kT0 + 450, kT0 + 10000));   // 1 + 1 = 2
}

TEST(SpotLeases, TheSchedulerSeesTheCountLessWhatLeasesHold) {
  ReplayMarket m = OneOffering(Counts({3, 3, 1, 0, 2}));
  SpotLeases leases(m);
  EXPECT_EQ(leases.SpotInstances(kO, kT0 + 10), 3);
  ASSERT_TRUE(leases.Start(1, kO, 2, kT0 + 10, kT0 + 10000));
  EXPECT_EQ(leases.SpotInstances(kO, kT0 + 10), 1);   // 3 - 2
  EXPECT_TRUE(leases.SpotAvailable(kO, kT0 + 10));
  EXPECT_EQ(leases.SpotInstances(kO, kT0 + 250), 0);  // 1 - 2, never below 0
  EXPECT_FALSE(leases.SpotAvailable(kO, kT0 + 250));
  EXPECT_EQ(leases.SpotInstances(OfferingId(1), kT0 + 10), 0);  // no trace: no spot
  EXPECT_EQ(m.SpotInstances(kO, kT0 + 10), 3);        // the market itself is unchanged
}

// An older lease that ends lowers what the newer ones need: A(1) then B(1);
// B alone would go when the count falls below 2 (at 200), but A ends at
// 150, so B now needs only 1 and goes at 300.
TEST(SpotLeases, AnOlderLeaseEndingMovesTheNewerReclaimLater) {
  ReplayMarket m = OneOffering(Counts({3, 3, 1, 0, 2}));
  SpotLeases leases(m);
  ASSERT_TRUE(leases.Start(1, kO, 1, kT0 + 0, kT0 + 10000));
  ASSERT_TRUE(leases.Start(2, kO, 1, kT0 + 10, kT0 + 10000));
  EXPECT_EQ(leases.ReclaimAt(2, kT0 + 10), kT0 + 200);
  EXPECT_EQ(leases.End(1), std::vector<uint32_t>{2});
  EXPECT_FALSE(leases.Due(2, kT0 + 200));
  EXPECT_EQ(leases.ReclaimAt(2, kT0 + 150), kT0 + 300);
}

TEST(SpotLeases, NoReclaimAfterTheRunsEnd) {
  ReplayMarket m = OneOffering(Counts({3, 3, 1, 0, 2}));
  SpotLeases leases(m);
  ASSERT_TRUE(leases.Start(1, kO, 1, kT0 + 0, kT0 + 300));  // ends as the count reaches 0
  EXPECT_EQ(leases.ReclaimAt(1, kT0), std::nullopt);
  EXPECT_EQ(leases.ReclaimAt(7, kT0), std::nullopt);  // no lease
}

// The engine on the same rule: preemptible jobs of 8 and 16 V100s (1 and 2
// instances) that may use spot only (skypilot-like, pricing_models [spot]),
// on the one offering with spot: p3.16xlarge (8 GPUs an instance; a job
// spanning instances uses full nodes) in use2-az1, replaying counts
// 3,3,1,0,3 in ticks of 600 s from second 0 (so [0,1200) 3, [1200,1800) 1,
// [1800,2400) 0, [2400,4200) 3 across the wrap, [4200,4800) 1, [4800,5400)
// 0, [5400,7200) 3). Checkpoints every 300 s, restarts 60 s.
//   0     A (1 instance, 1000 s) starts: 1 of 3.
//   100   B (2 instances, 1500 s) starts: 3 - 1 = 2 left, takes both.
//   1000  A is done; B alone now needs 2.
//   1200  count 1 < 2: B reclaimed after 1100 s (900 s saved, 600 left);
//         2 do not start on 1: B waits (woken when the count changes).
//   1300  C (1 instance, 3000 s) takes the 1 (B still waits for 2).
//   1800  count 0: C reclaimed after 500 s (300 saved, 2700 left).
//   2000  D (1 instance, 600 s) arrives and waits.
//   2400  count 3, the waiting jobs are woken: one cycle places B, C, D on
//         the 3 it sees; B (2) and C (1) start, D finds none left, goes back
//         to the queue unstarted and is decided again at once: none left, it
//         waits. B ends 2400 + 60 + 600 = 3060; C (held after B) would go
//         when the count is below 3, at 4200.
//   3060  B is done: C now needs 1 (next below 1: 4800); D starts on one
//         of the 2 left (no restart: it never ran), ends 3660.
//   4800  count 0: C reclaimed after 2400 s (2340 of progress, 2100 saved:
//         2400 of 3000 done, 600 left).
//   5400  count 3: C starts again, ends 5400 + 60 + 600 = 6060.
//   5500  E (1 instance, 100 s) arrives: starts on one of the 2 left, ends 5600.
TEST(SpotLeases, TheEngineSharesTheCountAndReclaimsNewestFirst) {
  auto cat = Embedded();
  OfferingId use2;
  for (size_t i = 0; i < cat->offerings().size(); ++i) {
    const catalog::Offering& o = cat->offerings()[i];
    if (o.zone == "use2-az1" && o.instance_type == "p3.16xlarge") use2 = OfferingId(static_cast<uint32_t>(i));
  }
  ASSERT_TRUE(use2.valid());
  World w;
  w.catalog = cat;
  FleetSpec elastic_only;
  elastic_only.elastic = true;
  w.fleet = *sched::Fleet::Build(elastic_only, cat);
  ReplayMarketOptions mo;
  mo.start = kT0;
  mo.other_spot = OtherSpot::kNone;
  mo.mapped = {{use2, Counts({3, 3, 1, 0, 3}, 600), std::nullopt}};
  w.market = std::make_shared<ReplayMarket>(cat, EmbeddedSpotTraces(), mo);
  w.elastic = std::make_shared<sched::ElasticIndex>(*cat);

  Trace t;
  auto add = [&](const char* name, int instances, int64_t submit, int64_t duration) {
    JobSpec s = testing::FixedJob(8 * instances, "V100-16GB");
    s.model.precision = Precision::kFp16;  // V100 has no bf16
    s.preemptible = true;
    s.checkpoint.interval_s = 300;
    s.checkpoint.restart_overhead_s = 60;
    s.residency = {"aws:us-east-2"};
    testing::AddJob(t, s, name, submit, duration);
  };
  add("A", 1, 0, 1000);
  add("B", 2, 100, 1500);
  add("C", 1, 1300, 3000);
  add("D", 1, 2000, 600);
  add("E", 1, 5500, 100);
  auto profile = *sched::EmbeddedProfile("skypilot-like");
  profile.options.pricing_models = {PricingModel::kSpot};
  auto run = Simulate(t, JobShapes::Make(t, *cat), w, profile, "spot only");
  ASSERT_TRUE(run.ok()) << run.status().ToString();

  struct Want {
    int64_t start_s, end_s;
    int preemptions;
  };
  const std::vector<Want> want = {{0, 1000, 0}, {100, 3060, 1}, {1300, 6060, 2}, {3060, 3660, 0}, {5500, 5600, 0}};
  for (size_t j = 0; j < want.size(); ++j) {
    const JobOutcome& o = run->jobs[j];
    EXPECT_EQ(o.state, JobState::kDone) << t.jobs[j].name;
    EXPECT_EQ(o.pay, PayKind::kSpot) << t.jobs[j].name;
    EXPECT_EQ(o.start_s, want[j].start_s) << t.jobs[j].name;
    EXPECT_EQ(o.end_s, want[j].end_s) << t.jobs[j].name;
    EXPECT_EQ(o.preemptions, want[j].preemptions) << t.jobs[j].name;
  }
  const std::string note = "1 x spot lease not started: fewer spot instances left than it needs";
  EXPECT_NE(std::find(run->notes.begin(), run->notes.end(), note), run->notes.end())
      << ::testing::PrintToString(run->notes);
}

}  // namespace
}  // namespace meridian::sim
