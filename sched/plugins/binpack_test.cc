#include "sched/plugins/binpack.h"

#include <gtest/gtest.h>

#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

// Test fleet (test_world.h): nodes 0,1 H100 x8, 64 vCPUs; node 2 H100 x2 in
// MIG (16 memory slices in all); nodes 3..6 A100 x8.
Candidate Node(uint32_t n, uint16_t per_node) {
  Candidate c;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(n);
  c.gpus_per_node = per_node;
  return c;
}

Candidate Mig(uint32_t n, MigShape shape) {
  Candidate c;
  c.kind = CandidateKind::kMigSlice;
  c.node = NodeId(n);
  c.mig_gpu = 0;
  c.mig_shape = shape;
  return c;
}

Candidate Elastic(const testing::World& w, const char* type) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, "gcp:us-central1", type);
  c.instances = 1;
  return c;
}

// Node 1 already runs a 4-GPU job holding 40 vCPUs.
void HoldHalfOfNode1(testing::World& w) {
  Allocation a;
  a.job = JobId(99);
  a.nodes.push_back({NodeId(1), 0x0f, std::nullopt, 40, 0});
  ASSERT_TRUE(w.ledger.Reserve(a).ok());
}

struct Case {
  const char* name;
  Candidate c;
  int64_t free_bp;  // FreeShareAfterBp
};

TEST(BinpackTest, FreeShareAfterPlacement) {
  testing::World w = MakeWorld();
  HoldHalfOfNode1(w);
  JobSpec spec = TwoHourJob("two", 2, 40);
  spec.resources.vcpus = 16;
  QueuedJob job = Queue(w, spec, 1);  // demand 0: H100, 2 GPUs
  testing::Cycle cy(w, job);
  Candidate gang = Node(3, 1);
  gang.kind = CandidateKind::kGang;
  gang.gang_offset = 0;
  gang.gang_size = 2;
  cy.members = {NodeId(3), NodeId(4)};
  const Case gpus_only[] = {
      // (8 - 2) x 8 / (8 x 8) slices = 6/8 = 7500 bp.
      {"empty node 0", Node(0, 2), 7500},
      // (4 - 2) / 8 = 2500.
      {"half-held node 1", Node(1, 2), 2500},
      // 1 slice of the node's 16: 15/16 = 9375.
      {"1g slice on the MIG node", Mig(2, {6, 1}), 9375},
      // Each member 7/8 = 8750, averaged.
      {"gang 3 + 4, 1 GPU each", gang, 8750},
      // a3-highgpu-4g bought for 2 GPUs: (4 - 2) / 4 = 5000.
      {"a3-highgpu-4g", Elastic(w, "a3-highgpu-4g"), 5000},
  };
  for (const Case& c : gpus_only) {
    EXPECT_EQ(FreeShareAfterBp(cy.ctx, c.c, {1, 0, 0}), c.free_bp) << c.name;
  }
  // GPUs and vCPUs weighed alike (16 vCPUs taken):
  //   node 0: (7500 + (64 - 16) / 64 = 7500) / 2 = 7500
  //   node 1: (2500 + (24 - 16) / 64 = 1250) / 2 = 1875
  EXPECT_EQ(FreeShareAfterBp(cy.ctx, Node(0, 2), {1, 1, 0}), 7500);
  EXPECT_EQ(FreeShareAfterBp(cy.ctx, Node(1, 2), {1, 1, 0}), 1875);
  // vCPUs alone: 3 x 1250 weighted 3 = 1250.
  EXPECT_EQ(FreeShareAfterBp(cy.ctx, Node(1, 2), {0, 3, 0}), 1250);
}

TEST(BinpackTest, PrefersTheFullestNode) {
  testing::World w = MakeWorld();
  HoldHalfOfNode1(w);
  QueuedJob job = Queue(w, TwoHourJob("two", 2, 40), 1);
  testing::Cycle cy(w, job);
  Binpack p({1, 0, 0});
  std::vector<int64_t> s = {p.Score(cy.ctx, Node(0, 2)), p.Score(cy.ctx, Node(1, 2)),
                            p.Score(cy.ctx, Mig(2, {6, 1}))};
  EXPECT_EQ(s, (std::vector<int64_t>{-7500, -2500, -9375}));
  p.NormalizeScore(cy.ctx, s);
  // min-max over [-9375, -2500]: node 0 (-7500 + 9375) x 100 / 6875 = 27.3 -> 27.
  EXPECT_EQ(s, (std::vector<int64_t>{27, 100, 0}));
  EXPECT_EQ(p.ExplainScore(cy.ctx, Node(1, 2), -2500),
            "free after placement: onprem-a-h100-80gb-1 16/64 GPU slices (weighted 25.0% free)");
}

// Through the scheduler: binpack picks the half-held node 1 (2 of 8 GPUs left
// free after) over the empty node 0 (6 left), where fleet order would pick 0.
TEST(BinpackTest, CyclePacksJobsTogether) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  HoldHalfOfNode1(w);
  auto profile = ParseProfile(R"(name: t
plugins:
  - name: gpu_fit
  - name: binpack
)", "t.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  JobSpec spec = TwoHourJob("two", 2, 40);
  spec.resources.gpu_models = {"H100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  Decision d = (*s)->Decide(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << d.status.ToString();
  EXPECT_EQ(d.allocation->nodes[0].node, NodeId(1));  // 2 left free there, not 6
}

TEST(BinpackTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{gpus: 0, vcpus: 0}", "p.yaml", "plugins[3].args");
  ASSERT_TRUE(args.ok());
  auto made = Binpack::Create(*args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("plugins[3].args.gpus: gpus, vcpus and ram are all 0"),
            std::string::npos)
      << made.status().message();
  auto bad = PluginArgs::FromYaml("{ram: 101}", "p.yaml", "plugins[3].args");
  ASSERT_TRUE(bad.ok());
  auto made2 = Binpack::Create(*bad);
  ASSERT_FALSE(made2.ok());
  EXPECT_NE(made2.status().message().find("plugins[3].args.ram: \"101\" must be <= 100"),
            std::string::npos)
      << made2.status().message();
}

}  // namespace
}  // namespace meridian::sched
