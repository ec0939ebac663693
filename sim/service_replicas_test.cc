// The replica mix of a preemptible service, worked by hand.
#include "sim/service_replicas.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sched/profile.h"
#include "sim/test_world.h"

namespace meridian::sim {
namespace {

// 0.995 x (1 - 0.47 x 300 / 3600) = 0.995 x 0.9608333 = 0.9560292.
TEST(ServiceReplicasTest, SpotReplicaUpLosesTheRestartAfterEachReclaim) {
  EXPECT_NEAR(SpotReplicaUp(0.995, 0.47, 300), 0.9560292, 1e-7);
  EXPECT_DOUBLE_EQ(SpotReplicaUp(0.995, 0.47, 0), 0.995);
  EXPECT_DOUBLE_EQ(SpotReplicaUp(0.995, 2, 3600), 0.0);  // never below 0
}

// With spot up 0.956 and on-demand up 0.995:
//   3 spot, at least 1:  1 - 0.044^3 = 0.99991482
//   2 on-demand + 1 spot, at least 2: both on-demand up 0.990025, or one
//     (2 x 0.995 x 0.005 = 0.00995) and the spot one (x 0.956 = 0.0095122):
//     0.9995372
TEST(ServiceReplicasTest, AtLeastUpOverBothKinds) {
  EXPECT_NEAR(AtLeastUp(1, 0, 0.995, 3, 0.956), 0.99991482, 1e-8);
  EXPECT_NEAR(AtLeastUp(2, 2, 0.995, 1, 0.956), 0.9995372, 1e-7);
  EXPECT_DOUBLE_EQ(AtLeastUp(1, 0, 0.995, 0, 0.956), 0.0);
  EXPECT_DOUBLE_EQ(AtLeastUp(0, 0, 0.995, 0, 0.956), 1.0);
}

// Target 0.999, one replica for the load, the on-demand set 2 x 533:
//   {2, 0} 1066; {1, 1} 1 - 0.005 x 0.044 = 0.99978, 533 + 103 = 636;
//   {0, 2} 1 - 0.044^2 = 0.998064, short; {0, 3} 0.99991, 309: {0, 3}.
// One spot replica to be had: {1, 1}. Spot barely cheaper (353, then 408):
// {1, 1} 782 beats {2, 0} 858 and {0, 3} 1169. No spot: the on-demand set.
TEST(ServiceReplicasTest, CheapestMixMeetsTheTarget) {
  EXPECT_EQ(CheapestMix(1, 0.999, 0.995, 0.956, 533, {103, 103, 103}, 2), (ReplicaMix{0, 3}));
  EXPECT_EQ(CheapestMix(1, 0.999, 0.995, 0.956, 533, {103}, 2), (ReplicaMix{1, 1}));
  EXPECT_EQ(CheapestMix(1, 0.999, 0.995, 0.956, 429, {353, 408, 408}, 2), (ReplicaMix{1, 1}));
  EXPECT_EQ(CheapestMix(1, 0.999, 0.995, 0.956, 533, {}, 2), (ReplicaMix{2, 0}));
}

// Two replicas for the load, the on-demand set 3 x 70, spot 30 each:
//   {0, 4}: 1 - 0.044^4 - 4 x 0.956 x 0.044^3 = 0.99967, 120;
//   {0, 3}: 0.956^3 + 3 x 0.956^2 x 0.044 = 0.99436, short;
//   {1, 2}: 0.995 x 0.998064 + 0.005 x 0.956^2 = 0.99764, short;
//   {1, 3}: 0.99989, 160; {2, 1}: 0.99954, 170: {0, 4}.
TEST(ServiceReplicasTest, CheapestMixForALoadOfTwo) {
  EXPECT_EQ(CheapestMix(2, 0.999, 0.995, 0.956, 70, {30, 30, 30, 30, 30}, 3), (ReplicaMix{0, 4}));
  // Only three spot replicas to be had: {1, 3} at 160 beats {2, 1} at 170.
  EXPECT_EQ(CheapestMix(2, 0.999, 0.995, 0.956, 70, {30, 30, 30}, 3), (ReplicaMix{1, 3}));
}

// `default` sizes replica sets and buys spot, with realtime_replicas'
// defaults. Without spot among its pricing models: sized, no spot. Its
// arguments are read.
TEST(ServiceReplicasTest, TermsFromTheProfile) {
  auto profile = sched::EmbeddedProfile("default");
  ASSERT_TRUE(profile.ok());
  ReplicaTerms t = ReplicaTermsOf(*profile);
  EXPECT_TRUE(t.sized);
  EXPECT_TRUE(t.spot);
  EXPECT_DOUBLE_EQ(t.target(), 0.999);
  EXPECT_DOUBLE_EQ(t.zone(), 0.995);
  EXPECT_EQ(t.options.max_replicas, 3);
  sched::Profile on_demand = *profile;
  on_demand.options.pricing_models = {PricingModel::kOnDemand};
  EXPECT_TRUE(ReplicaTermsOf(on_demand).sized);
  EXPECT_FALSE(ReplicaTermsOf(on_demand).spot);
  sched::Profile tighter = *profile;
  for (sched::PluginConfig& p : tighter.plugins) {
    if (p.name != "realtime_replicas") continue;
    auto args = sched::PluginArgs::FromYaml("{availability_target: 0.9999}");
    ASSERT_TRUE(args.ok());
    p.args = *args;
  }
  EXPECT_DOUBLE_EQ(ReplicaTermsOf(tighter).target(), 0.9999);
}

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return *c;
}

OfferingId Find(const catalog::Catalog& cat, const std::string& zone, const std::string& type) {
  for (size_t i = 0; i < cat.offerings().size(); ++i) {
    const catalog::Offering& o = cat.offerings()[i];
    if (o.zone == zone && o.instance_type == type) return OfferingId(static_cast<uint32_t>(i));
  }
  return OfferingId();
}

// A spot trace of `counts` (comma-separated), one per `gap_s` seconds.
SpotTrace Ticks(int gap_s, const std::string& counts) {
  auto t = ParseSpotTraceJson(
      "{\"metadata\": {\"gap_seconds\": " + std::to_string(gap_s) + "}, \"data\": [" + counts + "]}", "t.json");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

// The catalog's elastic capacity, with spot only where `mapped` says.
World SpotOnly(std::shared_ptr<const catalog::Catalog> cat, std::vector<MappedSpotTrace> mapped) {
  World w;
  w.catalog = cat;
  FleetSpec elastic_only;
  elastic_only.elastic = true;
  w.fleet = *sched::Fleet::Build(elastic_only, cat);
  ReplayMarketOptions mo;
  mo.start = testing::kStart;
  mo.other_spot = OtherSpot::kNone;
  mo.mapped = std::move(mapped);
  w.market = std::make_shared<ReplayMarket>(cat, EmbeddedSpotTraces(), mo);
  w.elastic = std::make_shared<sched::ElasticIndex>(*cat);
  return w;
}

// One preemptible service on one L4 in gcp:us-central1, no load, 4 h from
// 0, under `default`.
PolicyRun RunPreemptibleL4(const World& w) {
  JobSpec s;
  s.kind = WorkloadKind::kRealtimeInference;
  s.preemptible = true;
  s.resources.gpus = 1;
  s.resources.vram_gib = 10;
  s.resources.gpu_models = {"L4"};
  s.residency = {"gcp:us-central1"};
  Trace t;
  testing::AddJob(t, s, "svc", 0, 4 * 3600);
  return testing::RunPolicy(t, w, "default");
}

// RunPreemptibleL4's service done, its one reclaimed replica replaced on
// spot or on-demand, billed on both (jobs.csv's pricing names them, in
// PayKind order) `cost` dollars, every one of its 240 minutes met.
void ExpectOneReclaimEveryMinuteMet(const PolicyRun& run, bool on_spot, double cost) {
  EXPECT_EQ(run.jobs[0].state, JobState::kDone);
  EXPECT_EQ(run.replica_reclaims, 1);
  EXPECT_EQ(run.replaced_on_spot, on_spot ? 1 : 0);
  EXPECT_EQ(run.replaced_on_demand, on_spot ? 0 : 1);
  EXPECT_EQ(PricingOf(run.jobs[0]), "on-demand+spot");
  EXPECT_NEAR(static_cast<double>(run.jobs[0].cost_micros) / 1e6, cost, 2e-5);
  ASSERT_EQ(run.services.size(), 1u);
  EXPECT_EQ(run.services[0].minutes, 240);
  EXPECT_EQ(run.services[0].met, 240);
}

// The replicas' stretches of serving, sorted.
std::vector<std::pair<int64_t, int64_t>> Spans(const PolicyRun& run) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const ServiceSpan& sp : run.service_spans) spans.emplace_back(sp.from_s, sp.to_s);
  std::sort(spans.begin(), spans.end());
  return spans;
}

// One preemptible L4 service in gcp:us-central1 for 4 h under `default`, no
// load (k = 1, the on-demand set n = 2 of g2-standard-4, $0.70683/h each;
// spot $0.29598/h). Spot only in zone a (counts 1, 0, 0, 0, 0 by the hour)
// and zone b (0, 1, 1, 1, 1). At 0 one spot replica can be had: the mix is
// {1 on-demand, 1 spot} (1.00281 $/h against 1.41366; {0, 2} could not be
// had). At 3600 zone a's count falls to 0: its replica is reclaimed and
// replaced at once on spot in zone b, serving from 3900 (the 300 s restart).
// The on-demand replica serves throughout: every one of the 240 minutes is
// met. Cost: 4 h on-demand + 1 h + 3 h on spot = 2.82732 + 0.29598 +
// 0.88794 = $4.01124.
TEST(ServiceReplicasTest, AReclaimedSpotReplicaIsReplacedOnSpotElsewhere) {
  auto cat = Embedded();
  const OfferingId a = Find(*cat, "us-central1-a", "g2-standard-4");
  const OfferingId b = Find(*cat, "us-central1-b", "g2-standard-4");
  ASSERT_TRUE(a.valid() && b.valid());
  const World w =
      SpotOnly(cat, {{a, Ticks(3600, "1, 0, 0, 0, 0"), std::nullopt}, {b, Ticks(3600, "0, 1, 1, 1, 1"), std::nullopt}});
  const PolicyRun run = RunPreemptibleL4(w);

  ExpectOneReclaimEveryMinuteMet(run, /*on_spot=*/true, 4.01124);
  const std::vector<std::pair<int64_t, int64_t>> want = {{0, 3600}, {0, 14400}, {3900, 14400}};
  EXPECT_EQ(Spans(run), want);
}

// One preemptible L4 service in gcp:us-central1 for 4 h under `default`, no
// load (k = 1; g2-standard-4 on-demand $0.70683/h, spot $0.29598/h), with
// one spot instance in each of zones a, b and c, zone a's missing from 600
// to 1200 s (10-minute ticks). Each zone's reclaim rate is its trace's:
// a, 24 ticks with one down, 1 reclaim in 23 ticks up (3.8333 h), 0.26087
// per hour, a spot replica up 0.995 x (1 - 0.26087 x 300 / 3600) =
// 0.97337; b and c, 25 ticks up then down, up, down (after the 4 h), 2
// reclaims in 26 ticks up (4.3333 h), 0.46154 per hour, up 0.995 x (1 -
// 0.46154 / 12) = 0.95673. At 0 the mix is {0 on-demand, 3 spot}: 3 x
// 0.29598 = 0.88794 $/h meets 1 - 0.02663 x 0.04327^2 = 0.99995, where
// {1, 1} costs 1.00281 and {0, 2} gives 1 - 0.02663 x 0.04327 = 0.99885.
// At 600 zone a's replica is reclaimed; b's and c's instances are held by
// the set itself, so the replacement is on-demand, serving from 900. At
// 1200 zone a has spot again: the set starts a spot replica there (serving
// from 1500) and the on-demand one stops at 1500, rather than at the next
// hour. Minutes: b and c serve throughout, 240 of 240 met. Cost: spot 4 +
// 4 + 1/6 + (14400 - 1200) / 3600 = 11.83333 h x 0.29598 = 3.50243,
// on-demand 900 s = 0.25 h x 0.70683 = 0.17671: $3.67914.
constexpr const char* kUpFourHoursThenFlaky =
    "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0";
TEST(ServiceReplicasTest, AnOnDemandFallbackGoesBackToSpotWhenSpotReturns) {
  auto cat = Embedded();
  const OfferingId a = Find(*cat, "us-central1-a", "g2-standard-4");
  const OfferingId b = Find(*cat, "us-central1-b", "g2-standard-4");
  const OfferingId c = Find(*cat, "us-central1-c", "g2-standard-4");
  ASSERT_TRUE(a.valid() && b.valid() && c.valid());
  const World w = SpotOnly(
      cat, {{a, Ticks(600, "1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1"), std::nullopt},
            {b, Ticks(600, kUpFourHoursThenFlaky), std::nullopt},
            {c, Ticks(600, kUpFourHoursThenFlaky), std::nullopt}});
  const PolicyRun run = RunPreemptibleL4(w);

  ExpectOneReclaimEveryMinuteMet(run, /*on_spot=*/false, 3.67914);
  EXPECT_EQ(run.jobs[0].replica_on_demand_s, 900);
  EXPECT_EQ(run.jobs[0].replica_spot_s, 4 * 3600 * 2 + 600 + (4 * 3600 - 1200));
  const std::vector<std::pair<int64_t, int64_t>> want = {
      {0, 600}, {0, 14400}, {0, 14400}, {900, 1500}, {1500, 14400}};
  EXPECT_EQ(Spans(run), want);
}

// The spare spot replicas follow the zones' own reclaim rates. The same
// service (RunPreemptibleL4) with one spot instance in each of zones a, b
// and c, up for the whole 4 h:
//   - traces up throughout (0 reclaims per hour): a spot replica is up
//     0.995 x (1 - 0) = 0.995 and two meet the target, 1 - 0.005^2 =
//     0.999975: {0, 2}, 2 x 4 h x $0.29598 = $2.36784;
//   - traces up 4 h 10 min then down, up, down (2 reclaims in 4.3333 h up,
//     0.46154 per hour, as kUpFourHoursThenFlaky): up 0.95673, two give
//     1 - 0.04327^2 = 0.99813, short: {0, 3}, 3 x 4 x 0.29598 = $3.55176
//     (the on-demand set: 2 x 4 x 0.70683 = $5.65464).
// Neither is reclaimed within the 4 h: every minute met.
TEST(ServiceReplicasTest, ZonesRarelyReclaimedNeedFewerSpareSpotReplicas) {
  auto cat = Embedded();
  const OfferingId a = Find(*cat, "us-central1-a", "g2-standard-4");
  const OfferingId b = Find(*cat, "us-central1-b", "g2-standard-4");
  const OfferingId c = Find(*cat, "us-central1-c", "g2-standard-4");
  ASSERT_TRUE(a.valid() && b.valid() && c.valid());
  struct Case {
    const char* counts;
    size_t replicas;
    double cost;
  };
  for (const Case& k : {Case{"1", 2, 2.36784}, Case{kUpFourHoursThenFlaky, 3, 3.55176}}) {
    const World w = SpotOnly(cat, {{a, Ticks(600, k.counts), std::nullopt},
                                   {b, Ticks(600, k.counts), std::nullopt},
                                   {c, Ticks(600, k.counts), std::nullopt}});
    const PolicyRun run = RunPreemptibleL4(w);
    EXPECT_EQ(run.replica_reclaims, 0) << k.counts;
    EXPECT_EQ(PricingOf(run.jobs[0]), "spot") << k.counts;
    EXPECT_NEAR(static_cast<double>(run.jobs[0].cost_micros) / 1e6, k.cost, 2e-5) << k.counts;
    EXPECT_EQ(run.service_spans.size(), k.replicas) << k.counts;
    ASSERT_EQ(run.services.size(), 1u);
    EXPECT_EQ(run.services[0].met, 240) << k.counts;
  }
}

// A service on Llama-3.2-1B on one L4 whose load needs two replicas up in
// UTC hour 1 and one otherwise, not preemptible, from 00:00 for 4 h in
// gcp:us-central1 on g2-standard-4 on-demand ($0.70683/h). The set's size
// for a load k (realtime_replicas' defaults: 0.995 per replica, target
// 0.999): k = 1: 2 replicas (1 - 0.005^2 = 0.999975); k = 2: 2 give
// 0.995^2 = 0.990025, 3 give 0.995^3 + 3 x 0.995^2 x 0.005 = 0.99992525: 3.
// The set starts with 2 at 0; at 3300 (300 s, a replica's start, before
// hour 1) it adds a third that serves from 3600; at 6900 it sizes hour 2
// back to 2, and the newest stops at 7200. Billed: 4 + 4 + (7200 - 3300) /
// 3600 = 9.08333 replica-hours = $6.42037, against 12 ($8.48196) for a set
// sized for the peak all along. Every minute has its hour's load up: 240.
TEST(ServiceReplicasTest, ASetFollowsItsHourlyLoad) {
  auto cat = Embedded();
  const World w = SpotOnly(cat, {});
  JobSpec s;
  s.kind = WorkloadKind::kRealtimeInference;
  s.resources.gpus = 1;
  s.resources.gpu_models = {"L4"};
  s.residency = {"gcp:us-central1"};
  s.model.params_b = 1.2;  // Llama-3.2-1B
  s.model.layers = 16;
  s.model.hidden = 2048;
  s.model.heads = 32;
  s.model.kv_heads = 8;
  s.model.precision = Precision::kBf16;
  s.model.seq_len = 4096;
  s.model.batch = 16;
  s.model.output_tokens = 128;
  s.latency.tokens_in = 128;
  s.latency.tokens_out = 128;
  // One replica's capacity from the estimator (estimate/serving_test.cc
  // checks it); the load is set against it.
  Trace probe;
  testing::AddJob(probe, s, "svc", 0, 4 * 3600);
  const JobShapes shapes = JobShapes::Make(probe, *cat);
  ASSERT_NE(shapes.Of(0), nullptr);
  ASSERT_EQ(shapes.Of(0)->demands.size(), 1u);
  const double cap = shapes.Of(0)->demands[0].replica_rps;
  ASSERT_GT(cap, 0);
  s.latency.rps_by_hour.assign(24, 0.5 * cap);
  s.latency.rps_by_hour[1] = 1.5 * cap;
  Trace t;
  testing::AddJob(t, s, "svc", 0, 4 * 3600);
  PolicyRun run = testing::RunPolicy(t, w, "default");

  EXPECT_EQ(run.jobs[0].state, JobState::kDone);
  EXPECT_EQ(PricingOf(run.jobs[0]), "on-demand");
  EXPECT_NEAR(static_cast<double>(run.jobs[0].cost_micros) / 1e6, 6.42037, 2e-5);
  const std::vector<std::pair<int64_t, int64_t>> want = {{0, 14400}, {0, 14400}, {3600, 7200}};
  EXPECT_EQ(Spans(run), want);
  ASSERT_EQ(run.services.size(), 1u);
  EXPECT_EQ(run.services[0].minutes, 240);
  EXPECT_EQ(run.services[0].met, 240);
}

}  // namespace
}  // namespace meridian::sim
