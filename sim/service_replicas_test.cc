// The replica mix of a preemptible service, worked by hand.
#include "sim/service_replicas.h"

#include <gtest/gtest.h>

#include "sched/profile.h"

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

// `default` sizes replica sets and buys spot: on, with realtime_replicas'
// defaults. Without spot among its pricing models: off. Its arguments are read.
TEST(ServiceReplicasTest, TermsFromTheProfile) {
  auto profile = sched::EmbeddedProfile("default");
  ASSERT_TRUE(profile.ok());
  ReplicaTerms t = ReplicaTermsOf(*profile);
  EXPECT_TRUE(t.enabled);
  EXPECT_DOUBLE_EQ(t.target, 0.999);
  EXPECT_DOUBLE_EQ(t.zone, 0.995);
  sched::Profile on_demand = *profile;
  on_demand.options.pricing_models = {PricingModel::kOnDemand};
  EXPECT_FALSE(ReplicaTermsOf(on_demand).enabled);
  sched::Profile tighter = *profile;
  for (sched::PluginConfig& p : tighter.plugins) {
    if (p.name != "realtime_replicas") continue;
    auto args = sched::PluginArgs::FromYaml("{availability_target: 0.9999}");
    ASSERT_TRUE(args.ok());
    p.args = *args;
  }
  EXPECT_DOUBLE_EQ(ReplicaTermsOf(tighter).target, 0.9999);
}

}  // namespace
}  // namespace meridian::sim
