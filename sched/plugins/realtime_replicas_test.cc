#include "sched/plugins/realtime_replicas.h"

#include <gtest/gtest.h>

#include "sched/explain.h"
#include "sched/plugins/gpu_fit.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::Queue;
using testing::TwoHourJob;

// The small fleet plus onprem-c: one more H100 x8 node (node 7) in us-central1.
testing::World TwoClusterWorld() {
  FleetSpec f = testing::SmallFleetSpec();
  ClusterSpec c;
  c.name = "onprem-c";
  c.region = "gcp:us-central1";
  c.gpu_hour = Money::FromDollars(1.10);
  c.nodes.push_back({1, "H100-80GB", 8, 64, 512, {}, "", {}});
  f.clusters.push_back(c);
  return testing::MakeWorld(f);
}

JobSpec Service(WorkloadKind kind = WorkloadKind::kRealtimeInference) {
  JobSpec s = TwoHourJob("chat", 1, 40);
  s.kind = kind;
  s.resources.gpu_models = {"H100-80GB", "L40S"};  // demands: 0 H100, 1 L40S
  return s;
}

RealtimeReplicas Prepared(const testing::World& w, RealtimeReplicas::Options o = {}) {
  RealtimeReplicas p(o);
  EXPECT_TRUE(p.Prepare({*w.fleet, *w.catalog}).ok());
  return p;
}

TEST(RealtimeReplicasTest, ReplicasForTheTarget) {
  struct Case {
    double target, zone;
    int max, want;
  } cases[] = {
      // 1 - 0.005 = 0.995 < 0.999; 1 - 0.005^2 = 0.999975 >= 0.999: 2
      {0.999, 0.995, 3, 2},
      // 0.995 >= 0.99: 1
      {0.99, 0.995, 3, 1},
      // 0.999975 >= 0.9999: 2
      {0.9999, 0.995, 3, 2},
      // 0.999975 < 0.99999 <= 1 - 0.005^3 = 0.999999875: 3
      {0.99999, 0.995, 3, 3},
      // 1 - 0.1^3 = 0.999 < 0.999999: capped at max 3
      {0.999999, 0.9, 3, 3},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(RealtimeReplicas::ReplicasFor(c.target, c.zone, c.max), c.want)
        << c.target << " " << c.zone;
  }
}

TEST(RealtimeReplicasTest, AddsReplicaSetsAcrossZones) {
  testing::World w = TwoClusterWorld();
  QueuedJob job = Queue(w, Service(), 1);
  testing::Cycle cy(w, job);
  RealtimeReplicas p = Prepared(w);
  ASSERT_EQ(p.replicas(), 2);
  std::vector<Candidate> out;
  CandidateSink sink(&out, &cy.members, 64, 5);
  p.AddCandidates(cy.ctx, {}, sink);
  // fleet: us-central1 has onprem-a (node 0 free) and onprem-c (node 7): one gang of 2 x 1 GPU.
  // elastic H100: a3-highgpu-*g is sold in one zone per region in the test catalog: none.
  // elastic L40S: g6e.xlarge in aws:us-east-1 is priced per region (3 zones assumed): 2 instances.
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, CandidateKind::kGang);
  ASSERT_EQ(cy.ctx.members(out[0]).size(), 2u);
  EXPECT_EQ(cy.ctx.members(out[0])[0], NodeId(0));
  EXPECT_EQ(cy.ctx.members(out[0])[1], NodeId(7));
  EXPECT_EQ(out[1].kind, CandidateKind::kElastic);
  EXPECT_EQ(out[1].offering, testing::Offering(w, "aws:us-east-1", "g6e.xlarge"));
  EXPECT_EQ(out[1].instances, 2);
  // gpu_fit accepts the cross-cluster gang for a real-time service
  GpuFit fit({});
  EXPECT_EQ(fit.Reject(cy.ctx, out[0]), "");
}

TEST(RealtimeReplicasTest, FilterKeepsOnlyWholeReplicaSetsPlacedNow) {
  testing::World w = TwoClusterWorld();
  QueuedJob job = Queue(w, Service(), 1);
  testing::Cycle cy(w, job);
  cy.members = {NodeId(0), NodeId(7), NodeId(0), NodeId(1)};
  auto gang = [](uint32_t offset) {
    Candidate c;
    c.kind = CandidateKind::kGang;
    c.node = NodeId(0);
    c.gpus_per_node = 1;
    c.gang_offset = offset;
    c.gang_size = 2;
    c.start = kNow;
    return c;
  };
  auto elastic = [&](const char* region, const char* type, uint16_t n, uint8_t demand) {
    Candidate c;
    c.kind = CandidateKind::kElastic;
    c.offering = testing::Offering(w, region, type);
    c.region = FindRegionId(*w.catalog, region);
    c.instances = n;
    c.demand = demand;
    c.start = kNow;
    return c;
  };
  Candidate single;
  single.node = NodeId(0);
  single.gpus_per_node = 1;
  single.start = kNow;
  Candidate later = gang(0);
  later.start = kNow + 3600;
  struct Case {
    const char* name;
    Candidate c;
    std::string_view want;
  } cases[] = {
      {"one node: 1 replica", single, "too few replicas in distinct zones for the availability target"},
      {"gang over onprem-a and onprem-c: 2 zones", gang(0), ""},
      {"gang on two onprem-a nodes: 1 zone", gang(2),
       "too few replicas in distinct zones for the availability target"},
      {"g6e.xlarge x2 (3 zones)", elastic("aws:us-east-1", "g6e.xlarge", 2, 1), ""},
      {"g6e.xlarge x1", elastic("aws:us-east-1", "g6e.xlarge", 1, 1),
       "too few replicas in distinct zones for the availability target"},
      // a3-highgpu-1g: one zone in us-central1: min(2 replicas, 1 zone) = 1
      {"a3-highgpu-1g x2 (1 zone)", elastic("gcp:us-central1", "a3-highgpu-1g", 2, 0),
       "too few replicas in distinct zones for the availability target"},
      {"deferred", later, "real-time services start at once, never deferred"},
  };
  RealtimeReplicas p = Prepared(w);
  for (const auto& c : cases) {
    std::vector<Candidate> one = {c.c};
    Rejections r;
    r.Reset("realtime_replicas", true);
    size_t kept = p.Filter(cy.ctx, one, r);
    EXPECT_EQ(kept, c.want.empty() ? 1u : 0u) << c.name;
    if (!c.want.empty() && kept == 0) {
      EXPECT_EQ(r.examples()[0].second, c.want) << c.name;
    }
  }
  // batch work is left alone
  QueuedJob batch = Queue(w, Service(WorkloadKind::kBatchInference), 2);
  testing::Cycle bc(w, batch);
  std::vector<Candidate> all = {single, later};
  Rejections r;
  r.Reset("realtime_replicas", false);
  EXPECT_EQ(p.Filter(bc.ctx, all, r), 2u);
  std::vector<Candidate> out;
  CandidateSink sink(&out, &bc.members, 64, 5);
  p.AddCandidates(bc.ctx, {}, sink);
  EXPECT_TRUE(out.empty());
}

TEST(RealtimeReplicasTest, ReplicaSetsStayWithinTheLatencySlo) {
  testing::World w = TwoClusterWorld();
  JobSpec spec = Service();
  // users near europe-west4, 50 ms: us-central1 (~77 ms) and us-east-1 (~68 ms) are too far
  spec.latency.users = {"gcp:europe-west4"};
  spec.latency.slo_ms = 50;
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  RealtimeReplicas p = Prepared(w);
  std::vector<Candidate> out;
  CandidateSink sink(&out, &cy.members, 64, 5);
  p.AddCandidates(cy.ctx, {}, sink);
  EXPECT_TRUE(out.empty());
}

TEST(RealtimeReplicasTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{availability_target: 1.5}");
  ASSERT_TRUE(args.ok());
  auto made = RealtimeReplicas::Create(*args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("availability_target"), std::string::npos);
}

}  // namespace
}  // namespace meridian::sched

namespace meridian::sched {
namespace {

// Through the scheduler with the default profile: the service takes the
// cheapest replica set, the gang over onprem-a and onprem-c (2 x 1 GPU x
// 1.10 $/GPU-h x 2 h = 4.40 $; g6e.xlarge x2 would be 2 x 1.861 x 2 = 7.44 $),
// placed now, and commits as one allocation over both nodes.
TEST(RealtimeReplicasTest, DefaultProfilePlacesAReplicaSet) {
  testing::World w = TwoClusterWorld();
  auto profile = EmbeddedProfile("default");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  QueuedJob job = Queue(w, Service(), 1);
  Decision d = (*s)->Decide(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  ASSERT_TRUE(d.allocation.has_value());
  ASSERT_EQ(d.allocation->nodes.size(), 2u) << FormatDecision(d);
  EXPECT_EQ(d.allocation->nodes[0].node, NodeId(0));
  EXPECT_EQ(d.allocation->nodes[1].node, NodeId(7));
  EXPECT_TRUE((*s)->Commit(d, w.At(), &w.ledger).ok());
}

}  // namespace
}  // namespace meridian::sched
