#include "sched/plugins/single_node.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

// small: 4 A100 nodes of 4 GPUs (nodes 0-3); big: 2 A100 nodes of 8 (4-5);
// mig: 1 H100 node of 8 GPUs in MIG mode (6).
FleetSpec MixedSizes() {
  FleetSpec f;
  ClusterSpec small{"small", "gcp:us-central1", CapacityPricing::kOwned, Money::FromDollars(1), "", "local", false, {}, {}, {}, {}};
  small.nodes.push_back({4, "A100-80GB", 4, 32, 256, {}, "", {}, {}});
  ClusterSpec big{"big", "gcp:us-central1", CapacityPricing::kOwned, Money::FromDollars(1), "", "local", false, {}, {}, {}, {}};
  big.nodes.push_back({2, "A100-80GB", 8, 64, 512, {}, "", {}, {}});
  big.nodes.push_back({1, "H100-80GB", 8, 64, 512, {"7g.80gb"}, "mig-", {}, {}});
  f.clusters = {small, big};
  return f;
}

Candidate Gang(uint8_t demand, uint16_t size, uint16_t per_node) {
  Candidate c;
  c.kind = CandidateKind::kGang;
  c.demand = demand;
  c.gang_size = size;
  c.gpus_per_node = per_node;
  c.node = NodeId(0);
  return c;
}

uint8_t DemandIndex(const testing::World& w, const QueuedJob& j, const char* model) {
  for (size_t i = 0; i < j.demands.size(); ++i) {
    if (j.demands[i].model == testing::Model(w, model)) return static_cast<uint8_t>(i);
  }
  ADD_FAILURE() << model;
  return 0;
}

TEST(SingleNodeTest, GangsOnlyForJobsNoNodeHolds) {
  testing::World w = MakeWorld(MixedSizes(), false);
  SingleNode plugin;
  ASSERT_TRUE(plugin.Prepare({*w.fleet, *w.catalog}).ok());
  QueuedJob eight = Queue(w, TwoHourJob("eight", 8, 40), 1);
  QueuedJob sixteen = Queue(w, TwoHourJob("sixteen", 16, 40), 2);
  testing::Cycle c8(w, eight), c16(w, sixteen);
  const std::string_view no = "the job fits in one node of its GPU model: no multi-node placement";
  Candidate node;
  node.kind = CandidateKind::kNode;
  node.node = NodeId(4);
  node.gpus_per_node = 8;
  node.demand = DemandIndex(w, eight, "A100-80GB");
  // 8 A100 GPUs: the big cluster's 8-GPU nodes hold them, so 2 x 4 in small is turned away.
  EXPECT_EQ(plugin.Reject(c8.ctx, Gang(DemandIndex(w, eight, "A100-80GB"), 2, 4)), no);
  EXPECT_EQ(plugin.Reject(c8.ctx, node), "");
  // 16 GPUs: no node has 16, a gang is the only way.
  EXPECT_EQ(plugin.Reject(c16.ctx, Gang(DemandIndex(w, sixteen, "A100-80GB"), 2, 8)), "");
  // 8 H100 GPUs: the only H100 node is in MIG mode (no whole GPUs), so a gang passes.
  EXPECT_EQ(plugin.Reject(c8.ctx, Gang(DemandIndex(w, eight, "H100-80GB"), 2, 4)), "");
}

}  // namespace
}  // namespace meridian::sched
