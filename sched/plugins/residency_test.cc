#include "sched/plugins/residency.h"

#include <gtest/gtest.h>

#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

// Test fleet (test_world.h): onprem-a (gcp:us-central1, geography us) nodes
// 0..2; onprem-b (gcp:europe-west4, eu) nodes 3..6.
// Candidates as an AddCandidates plugin (profile position 2) would add them:
// the built-in generator's already honour PreFilter's narrowing.
constexpr uint16_t kAdded = 2;

Candidate Node(uint32_t n) {
  Candidate c;
  c.source = kAdded;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(n);
  c.gpus_per_node = 1;
  return c;
}

Candidate Elastic(const testing::World& w, const char* region, const char* type) {
  Candidate c;
  c.source = kAdded;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, region, type);
  c.region = FindRegionId(*w.catalog, region);
  c.instances = 1;
  return c;
}

struct Case {
  const char* name;
  Candidate c;
  std::string_view want;  // "" = kept
};

TEST(ResidencyTest, KeepsOnlyAllowedRegions) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("eu-only", 1, 40);
  spec.residency = {"eu"};
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  Candidate gang_across;  // a gang with one member in each cluster
  gang_across.kind = CandidateKind::kGang;
  gang_across.source = kAdded;
  gang_across.gang_offset = 0;
  gang_across.gang_size = 2;
  gang_across.node = NodeId(3);
  cy.members = {NodeId(3), NodeId(0)};
  const Case cases[] = {
      {"onprem-b node (eu)", Node(3), ""},
      {"onprem-a node (us)", Node(0), "outside the job's residency"},
      {"gang with a us member", gang_across, "outside the job's residency"},
      {"a3-highgpu-8g in europe-west4", Elastic(w, "gcp:europe-west4", "a3-highgpu-8g"), ""},
      {"a3-highgpu-1g in us-central1", Elastic(w, "gcp:us-central1", "a3-highgpu-1g"),
       "outside the job's residency"},
      {"a3-highgpu-1g in asia-northeast1", Elastic(w, "gcp:asia-northeast1", "a3-highgpu-1g"),
       "outside the job's residency"},
  };
  Residency r;
  for (const Case& c : cases) EXPECT_EQ(r.Reject(cy.ctx, c.c, false), c.want) << c.name;
  EXPECT_EQ(r.Reject(cy.ctx, Node(0), true), "region gcp:us-central1 is outside residency [eu]");
  Candidate generated = Node(0);
  generated.source = kFrameworkSource;  // drawn from the narrowed regions only
  EXPECT_EQ(r.Reject(cy.ctx, generated, false), "");

  // PreFilter narrows generation to europe-west4, the one eu region.
  PreFilterResult pre = r.PreFilter(cy.ctx, cy.state);
  EXPECT_TRUE(pre.status.ok());
  ASSERT_TRUE(pre.regions.has_value());
  EXPECT_EQ(pre.regions->count(), 1u);
  EXPECT_TRUE(pre.regions->test(FindRegionId(*w.catalog, "gcp:europe-west4").index()));
}

TEST(ResidencyTest, RegionIdsAndNoResidency) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("pinned", 1, 40);
  spec.residency = {"gcp:us-central1", "aws:us-east-1"};
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  Residency r;
  EXPECT_EQ(r.Reject(cy.ctx, Node(0), false), "");
  EXPECT_EQ(r.Reject(cy.ctx, Node(3), false), "outside the job's residency");
  EXPECT_EQ(r.PreFilter(cy.ctx, cy.state).regions->count(), 2u);

  // No residency: every region of the catalog (4) is allowed.
  QueuedJob any = Queue(w, TwoHourJob("any", 1, 40), 2);
  testing::Cycle cy2(w, any);
  EXPECT_EQ(r.Reject(cy2.ctx, Node(3), false), "");
  EXPECT_EQ(r.PreFilter(cy2.ctx, cy2.state).regions->count(), 4u);
}

TEST(ResidencyTest, NoAllowedRegionIsUnresolvable) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("nowhere", 1, 40);
  spec.residency = {"oceania"};  // the test catalog has no region there
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  PreFilterResult pre = Residency().PreFilter(cy.ctx, cy.state);
  EXPECT_EQ(pre.status.code(), StatusCode::kUnresolvable);
  EXPECT_EQ(pre.status.message(), "residency [oceania] allows no region of the catalog");
}

// Through the scheduler: the cheapest H100 capacity is onprem-a (us), but an
// eu-only job lands in europe-west4 (the a3-highgpu-8g there, the only eu H100;
// flex-start at 53% off its 111.82 $/h list price is the cheapest way, so it defers).
TEST(ResidencyTest, DecisionStaysInsideResidency) {
  testing::World w = MakeWorld();
  auto profile = ParseProfile(R"(name: t
plugins:
  - name: residency
  - name: gpu_fit
  - name: cheapest_price
)", "t.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  JobSpec spec = TwoHourJob("eu", 8, 40);
  spec.residency = {"eu"};
  spec.resources.gpu_models = {"H100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  Decision d = (*s)->Decide(job, w.At());
  ASSERT_TRUE(d.allocation.has_value()) << d.status.ToString();
  EXPECT_EQ(d.kind, DecisionKind::kDefer);
  ASSERT_TRUE(d.allocation->elastic.has_value());
  EXPECT_EQ(w.catalog->offerings()[d.allocation->elastic->offering.index()].region,
            "gcp:europe-west4");
}

TEST(ResidencyTest, TakesNoArguments) {
  auto args = PluginArgs::FromYaml("{regions: [eu]}", "p.yaml", "plugins[0].args");
  ASSERT_TRUE(args.ok());
  auto made = Residency::Create(*args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("plugins[0].args.regions: unknown argument"),
            std::string::npos)
      << made.status().message();
}

}  // namespace
}  // namespace meridian::sched
