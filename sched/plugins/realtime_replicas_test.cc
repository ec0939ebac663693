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
  c.nodes.push_back({1, "H100-80GB", 8, 64, 512, {}, "", {}, {}});
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

// P(at least k of n up) at a = 0.995 per replica, target 0.999:
//   k 1: n 1 gives 0.995; n 2 gives 1 - 0.005^2 = 0.999975: 2
//   k 3: n 3 gives 0.995^3 = 0.985075; n 4 gives 0.995^4 + 4 x 0.995^3 x
//        0.005 = 0.980150 + 0.019701 = 0.999851: 4
//   k 4: n 4 gives 0.980150; n 5 gives 0.995^5 + 5 x 0.995^4 x 0.005 =
//        0.975249 + 0.024504 = 0.999753: 5
//   k 6 capped at 6 + 3 - 1 = 8 with a 0.9 zone and 0.999999: 8
TEST(RealtimeReplicasTest, ReplicasForTheLoadAndTheTarget) {
  struct Case {
    double target, zone;
    int load, max, want;
  } cases[] = {
      {0.999, 0.995, 1, 3, 2},
      {0.999, 0.995, 3, 5, 4},
      {0.999, 0.995, 4, 6, 5},
      {0.999999, 0.9, 6, 8, 8},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(RealtimeReplicas::ReplicasFor(c.target, c.zone, c.load, c.max), c.want)
        << c.load << " " << c.zone;
  }
}

// A set's size for one hour's load under the default options (0.999,
// 0.995, max_replicas 3), the count ReplicasOf gives the peak and
// `simulate` gives each hour: no load or k 1: the availability count, 2
// (above); k 2: n 2 gives 0.995^2 = 0.990025, n 3 gives 0.995^3 + 3 x
// 0.995^2 x 0.005 = 0.985075 + 0.014850 = 0.999925: 3; k 3: 4 (above).
// max_replicas 1 caps k 3 at 3 + 1 - 1 = 3, and k 40 is capped at
// kMaxLoadReplicas, 32.
TEST(RealtimeReplicasTest, SetSizeForAnHoursLoad) {
  RealtimeReplicas::Options o;
  EXPECT_EQ(RealtimeReplicas::SetSize(o, 0), 2);
  EXPECT_EQ(RealtimeReplicas::SetSize(o, 1), 2);
  EXPECT_EQ(RealtimeReplicas::SetSize(o, 2), 3);
  EXPECT_EQ(RealtimeReplicas::SetSize(o, 3), 4);
  EXPECT_EQ(RealtimeReplicas::SetSize(o, 40), RealtimeReplicas::kMaxLoadReplicas);
  o.max_replicas = 1;
  EXPECT_EQ(RealtimeReplicas::SetSize(o, 3), 3);
}

// An 8B chat service at 20 requests/s (estimate/serving_test.cc works one
// replica out: 8.5916 req/s on an H100; on an A100-80GB, 312 TFLOPS x 0.869
// x 4096 / (4096 + 875) = 312 x 0.71604 = 2.23404e14 FLOP/s and 2,000 GB/s x
// 0.80: prefill 1.33271e14 (attention included) / 2.23404e14 = 0.59655 s +
// decode 4.30216e12 / 1.6e12 = 2.68885 s = 3.28540 s for 16: 4.8700 req/s).
//   H100: ceil(20 / 8.5916) = 3 up, 4 with the target (above)
//   A100: ceil(20 / 4.8700) = 5 up, 6 with the target
// Without a load: the availability count, 2.
TEST(RealtimeReplicasTest, ReplicasFollowThePeakLoadPerGpuModel) {
  testing::World w = TwoClusterWorld();
  JobSpec spec = Service();
  spec.model.params_b = 8;
  spec.model.precision = Precision::kBf16;
  spec.model.layers = 32;
  spec.model.hidden = 4096;
  spec.model.heads = 32;
  spec.model.kv_heads = 8;
  spec.model.seq_len = 8192;
  spec.model.batch = 16;
  spec.model.output_tokens = 256;
  spec.latency.tokens_in = 512;
  spec.latency.tokens_out = 256;
  spec.resources.gpus = 1;
  spec.resources.vram_gib.reset();
  spec.resources.gpu_models = {"H100-80GB", "A100-80GB"};
  spec.latency.rps_by_hour.assign(24, 5);
  spec.latency.rps_by_hour[13] = 20;  // the peak hour
  QueuedJob job = Queue(w, spec, 1);
  ASSERT_EQ(job.demands.size(), 2u);
  RealtimeReplicas p = Prepared(w);
  EXPECT_NEAR(job.demands[0].replica_rps, 8.5916, 0.001);
  EXPECT_NEAR(job.demands[1].replica_rps, 4.8700, 0.001);
  EXPECT_EQ(p.ReplicasOf(job, job.demands[0]), 4);
  EXPECT_EQ(p.ReplicasOf(job, job.demands[1]), 6);
  // Two a3-highgpu-1g replicas (H100) for a load that needs 4: refused.
  testing::Cycle cy(w, job);
  Candidate two;
  two.kind = CandidateKind::kElastic;
  two.offering = testing::Offering(w, "gcp:us-central1", "a3-highgpu-1g");
  two.region = FindRegionId(*w.catalog, "gcp:us-central1");
  two.instances = 2;
  two.demand = 0;
  two.start = kNow;
  std::vector<Candidate> one = {two};
  Rejections r;
  r.Reset("realtime_replicas", true);
  EXPECT_EQ(p.Filter(cy.ctx, one, r), 0u);
  ASSERT_FALSE(r.examples().empty());
  EXPECT_EQ(r.examples()[0].second, "too few replicas for the service's peak load");
  spec.latency.rps_by_hour.clear();
  QueuedJob idle = Queue(w, spec, 2);
  EXPECT_EQ(p.ReplicasOf(idle, idle.demands[0]), 2);
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
