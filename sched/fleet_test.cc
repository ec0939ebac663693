#include "sched/fleet.h"

#include <gtest/gtest.h>

#include "sched/elastic.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

TEST(FleetTest, ExpandsNodesWithNamesPoolsAndGroups) {
  testing::World w = testing::MakeWorld();
  const Fleet& f = *w.fleet;
  ASSERT_EQ(f.nodes().size(), 7u);  // 2 + 1 + 4
  EXPECT_EQ(f.node(NodeId(0)).name, "onprem-a-h100-80gb-0");
  EXPECT_EQ(f.node(NodeId(1)).name, "onprem-a-h100-80gb-1");
  EXPECT_EQ(f.node(NodeId(2)).name, "onprem-a-mig-0");
  EXPECT_EQ(f.node(NodeId(6)).name, "onprem-b-a100-80gb-3");
  EXPECT_EQ(f.node(NodeId(3)).ram_mib, 1024 * 1024);
  GpuModelId h100 = testing::Model(w, "H100-80GB");
  EXPECT_EQ(f.pool(f.ModelPool(h100)).max_gpus_per_node, 8);
  EXPECT_EQ(f.ClusterPools(h100).size(), 1u);
  EXPECT_EQ(f.GroupsOf(h100).size(), 2u);
  EXPECT_TRUE(f.RegionsWithModel(h100).test(FindRegionId(*w.catalog, "gcp:us-central1").index()));
  EXPECT_FALSE(f.RegionsWithModel(h100).test(FindRegionId(*w.catalog, "gcp:europe-west4").index()));
}

TEST(FleetTest, PlacesMigLayoutsOnValidStarts) {
  testing::World w = testing::MakeWorld();
  const Node& n = w.fleet->node(NodeId(2));
  EXPECT_EQ(n.mig_gpus, 0b11u);
  // 3g.40gb takes 0-3; 1g.20gb (starts 0,2,4,6) cannot sit at 4 because the
  // two 1g.10gb (starts 0..6) would then need 6 and 7: so 1g.20gb at 6-7 and
  // the 1g.10gb at 4 and 5.
  ASSERT_EQ(n.mig.size(), 4u);
  EXPECT_EQ(n.mig[0].shape, (MigShape{0, 4}));
  EXPECT_EQ(n.mig[1].shape, (MigShape{6, 2}));
  EXPECT_EQ(n.mig[2].shape, (MigShape{4, 1}));
  EXPECT_EQ(n.mig[3].shape, (MigShape{5, 1}));
  EXPECT_EQ(w.ledger.largest_free_mig_span(NodeId(2)), 4);
  EXPECT_EQ(w.ledger.free_gpu_count(NodeId(2)), 0);  // MIG-mode GPUs are never whole
}

TEST(FleetTest, ErrorsNameTheField) {
  auto cat = estimate::testing::TestCatalog();
  struct Case {
    const char* name;
    FleetSpec spec;
    std::string want;
  };
  FleetSpec region = testing::SmallFleetSpec();
  region.clusters[1].region = "gcp:mars-1";
  FleetSpec gpu = testing::SmallFleetSpec();
  gpu.clusters[0].nodes[0].gpu = "H100";
  FleetSpec profile = testing::SmallFleetSpec();
  profile.clusters[0].nodes[1].mig[2] = "2g.20gb";  // not a test H100 profile
  FleetSpec overfull = testing::SmallFleetSpec();
  overfull.clusters[0].nodes[1].mig = {"3g.40gb", "3g.40gb", "1g.10gb"};
  const Case cases[] = {
      {"region", region, "clusters[1].region: \"gcp:mars-1\" is not a catalog region"},
      {"gpu", gpu, "clusters[0].nodes[0].gpu: \"H100\" is not a GPU model in the catalog"},
      {"mig profile", profile, "clusters[0].nodes[1].mig[2]: \"2g.20gb\" is not a MIG profile of H100-80GB"},
      {"mig overfull", overfull, "clusters[0].nodes[1].mig: these instances cannot be placed"},
  };
  for (const Case& c : cases) {
    auto f = Fleet::Build(c.spec, cat);
    ASSERT_FALSE(f.ok()) << c.name;
    EXPECT_NE(f.status().message().find(c.want), std::string::npos)
        << c.name << ": " << f.status().message();
  }
}

TEST(FleetTest, AlignedRuleStandsInForMissingPlacements) {
  catalog::MigProfile p{"3g.40gb", 3, 4, 40, 2, 48, {}, 0};
  MigPlacements pl = PlacementsOf(p);
  EXPECT_FALSE(pl.from_catalog);
  EXPECT_EQ(pl.span, 4);
  EXPECT_EQ(pl.starts, (std::vector<uint8_t>{0, 4}));
  p.placement_starts = {4};
  p.placement_span = 4;
  pl = PlacementsOf(p);
  EXPECT_TRUE(pl.from_catalog);
  EXPECT_EQ(pl.starts, (std::vector<uint8_t>{4}));
}

TEST(ElasticIndexTest, OneBestFitChoicePerLocationByPrice) {
  auto cat = estimate::testing::TestCatalog();
  ElasticIndex idx(*cat);
  GpuModelId h100 = FindGpuModelId(*cat, "H100-80GB");
  // 4 H100s: us-central1 sells a 4-GPU size (21.53 $/h); asia-northeast1's
  // largest size is 1 GPU, so 4 instances (4 x 5.72 = 22.88 $/h);
  // europe-west4 sells only 8 GPUs (111.82 $/h, 8 billed).
  auto choices = idx.Choices(h100, 4);
  ASSERT_EQ(choices.size(), 3u);
  EXPECT_EQ(cat->offerings()[choices[0].offering.index()].instance_type, "a3-highgpu-4g");
  EXPECT_EQ(choices[1].instances, 4);  // asia-northeast1: 4 x 5.71934 = 22.88 $/h
  EXPECT_EQ(choices[2].gpus_billed, 8);
  EXPECT_TRUE(idx.Choices(h100, 65).empty());
}

}  // namespace
}  // namespace meridian::sched
