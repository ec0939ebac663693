#include "sched/plugins/flavor_order.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

// A reserved cluster (1 x a2-ultragpu-1g, node 0) before the test fleet's
// owned clusters (nodes 1-7).
FleetSpec WithReservation() {
  FleetSpec f = testing::SmallFleetSpec();
  ClusterSpec r{"res", "gcp:us-central1", CapacityPricing::kReserved, std::nullopt,
                "a2-ultragpu-1g", "local", false, {}, {}, {}, {}};
  r.nodes.push_back({1, "A100-80GB", 1, 12, 170, {}, "", {}, {}});
  f.clusters.insert(f.clusters.begin(), r);
  return f;
}

Candidate At(uint32_t node) {
  Candidate c;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(node);
  c.gpus_per_node = 1;
  return c;
}

Candidate Bought(const testing::World& w, PricingModel m) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, "gcp:us-central1", "a2-ultragpu-1g");
  c.instances = 1;
  c.pricing = m;
  return c;
}

TEST(FlavorOrderTest, ScoresByPositionInTheOrder) {
  testing::World w = MakeWorld(WithReservation());
  QueuedJob job = Queue(w, TwoHourJob("j", 1, 10), 1);
  testing::Cycle cy(w, job);
  PluginArgs args;
  auto made = FlavorOrder::Create(args);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto& plugin = static_cast<FlavorOrder&>(**made);
  // Default order [reserved, owned, on-demand, spot]: 4 flavors, n - 1 = 3.
  const struct {
    const char* name;
    Candidate c;
    Flavor flavor;
    int64_t raw, normalized;
  } cases[] = {
      {"reserved node", At(0), Flavor::kReserved, 0, 100},              // 100 - 0 x 100 / 3
      {"owned node", At(1), Flavor::kOwned, -1, 67},                    // 100 - 1 x 100 / 3 = 66.7 -> 67
      {"on-demand", Bought(w, PricingModel::kOnDemand), Flavor::kOnDemand, -2, 34},  // 100 - 66
      {"spot", Bought(w, PricingModel::kSpot), Flavor::kSpot, -3, 0},   // 100 - 3 x 100 / 3
  };
  std::vector<int64_t> raw;
  for (const auto& c : cases) {
    EXPECT_EQ(FlavorOf(cy.ctx, c.c), c.flavor) << c.name;
    raw.push_back(plugin.Score(cy.ctx, c.c));
    EXPECT_EQ(raw.back(), c.raw) << c.name;
  }
  plugin.NormalizeScore(cy.ctx, raw);
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(raw[i], cases[i].normalized) << cases[i].name;
  // Fixed, not min-max: owned alone still scores 67, below a reserved node's 100.
  std::vector<int64_t> owned_only = {-1};
  plugin.NormalizeScore(cy.ctx, owned_only);
  EXPECT_EQ(owned_only[0], 67);
  EXPECT_EQ(plugin.ExplainScore(cy.ctx, At(1), -1), "flavor owned, 2 of 4: 100 - 1 x 100 / 3");
}

TEST(FlavorOrderTest, FiltersFlavorsNotListed) {
  testing::World w = MakeWorld(WithReservation());
  QueuedJob job = Queue(w, TwoHourJob("j", 1, 10), 1);
  testing::Cycle cy(w, job);
  auto args = PluginArgs::FromYaml("{order: [spot, reserved]}");
  ASSERT_TRUE(args.ok());
  auto made = FlavorOrder::Create(*args);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  auto& plugin = static_cast<FlavorOrder&>(**made);
  std::vector<Candidate> batch = {At(1), Bought(w, PricingModel::kSpot), At(0),
                                  Bought(w, PricingModel::kOnDemand)};
  Rejections r;
  r.Reset("flavor_order", true);
  ASSERT_EQ(plugin.Filter(cy.ctx, batch, r), 2u);
  EXPECT_EQ(batch[0].pricing, PricingModel::kSpot);
  EXPECT_EQ(batch[1].node, NodeId(0));
  EXPECT_EQ(r.count(), 2u);
  EXPECT_EQ(r.examples()[0].second, "flavor not in the profile's flavor order");
  // [spot, reserved]: spot 100, reserved 100 - 1 x 100 / 1 = 0.
  std::vector<int64_t> raw = {plugin.Score(cy.ctx, batch[0]), plugin.Score(cy.ctx, batch[1])};
  plugin.NormalizeScore(cy.ctx, raw);
  EXPECT_EQ(raw, (std::vector<int64_t>{100, 0}));
}

TEST(FlavorOrderTest, ArgumentsAreValidated) {
  const struct {
    const char* yaml;
    const char* want;
  } cases[] = {
      {"{order: [reserved, cheap]}", "plugins[2].args.order: \"cheap\" is not a flavor"},
      {"{order: [spot, spot]}", "plugins[2].args.order: \"spot\" is listed twice"},
      {"{order: []}", "plugins[2].args.order: must list at least one flavor"},
      {"{order: spot}", "plugins[2].args.order: \"spot\" must be a list of strings"},
      {"{flavours: [spot]}", "plugins[2].args.flavours: unknown argument"},
  };
  for (const auto& c : cases) {
    auto args = PluginArgs::FromYaml(c.yaml, "p.yaml", "plugins[2].args");
    ASSERT_TRUE(args.ok()) << c.yaml;
    auto made = FlavorOrder::Create(*args);
    ASSERT_FALSE(made.ok()) << c.yaml;
    EXPECT_NE(made.status().message().find(c.want), std::string::npos) << made.status().message();
  }
}

}  // namespace
}  // namespace meridian::sched
