#include "sched/plugins/spread.h"

#include <gtest/gtest.h>

#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

Candidate Node(uint32_t n, uint16_t per_node) {
  Candidate c;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(n);
  c.gpus_per_node = per_node;
  return c;
}

// Node 1 (H100 x8) already runs a 4-GPU job.
void HoldHalfOfNode1(testing::World& w) {
  Allocation a;
  a.job = JobId(99);
  a.nodes.push_back({NodeId(1), 0x0f, std::nullopt, 0, 0});
  ASSERT_TRUE(w.ledger.Reserve(a).ok());
}

TEST(SpreadTest, PrefersTheEmptiestNode) {
  testing::World w = MakeWorld();
  HoldHalfOfNode1(w);
  QueuedJob job = Queue(w, TwoHourJob("two", 2, 40), 1);
  testing::Cycle cy(w, job);
  Spread p({1, 0, 0});
  // Free after: node 0 (8 - 2) / 8 = 7500 bp, node 1 (4 - 2) / 8 = 2500.
  std::vector<int64_t> s = {p.Score(cy.ctx, Node(0, 2)), p.Score(cy.ctx, Node(1, 2))};
  EXPECT_EQ(s, (std::vector<int64_t>{7500, 2500}));
  p.NormalizeScore(cy.ctx, s);
  EXPECT_EQ(s, (std::vector<int64_t>{100, 0}));
  EXPECT_EQ(p.ExplainScore(cy.ctx, Node(0, 2), 7500),
            "free after placement: onprem-a-h100-80gb-0 48/64 GPU slices (weighted 75.0% free)");
}

// Through the scheduler: spread leaves the half-held node alone.
TEST(SpreadTest, CycleSpreadsJobs) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  HoldHalfOfNode1(w);
  auto profile = ParseProfile(R"(name: t
plugins:
  - name: gpu_fit
  - name: spread
    args: {gpus: 1}
)", "t.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  JobSpec spec = TwoHourJob("two", 2, 40);
  spec.resources.gpu_models = {"H100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  Decision d = (*s)->Decide(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << d.status.ToString();
  EXPECT_EQ(d.allocation->nodes[0].node, NodeId(0));
}

TEST(SpreadTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{gpus: 0, cpus: 1}", "p.yaml", "plugins[1].args");
  ASSERT_TRUE(args.ok());
  auto made = Spread::Create(*args);
  ASSERT_FALSE(made.ok());
  const std::string& m = made.status().message();
  EXPECT_NE(m.find("plugins[1].args.gpus: gpus, vcpus and ram are all 0"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[1].args.cpus: unknown argument"), std::string::npos) << m;
}

}  // namespace
}  // namespace meridian::sched
