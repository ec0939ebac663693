#include "sched/plugins/gang_permit.h"

#include <gtest/gtest.h>

#include "sched/explain.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

// The test fleet plus a second A100 group in onprem-b: nodes 7, 8.
FleetSpec TwoGroupFleet() {
  FleetSpec f = testing::SmallFleetSpec();
  f.clusters[1].nodes.push_back({2, "A100-80GB", 8, 96, 1024, {}, "rack2-", {}, {}});
  return f;
}

Candidate Gang(uint32_t offset, uint16_t size, uint16_t per_node) {
  Candidate c;
  c.kind = CandidateKind::kGang;
  c.gang_offset = offset;
  c.gang_size = size;
  c.gpus_per_node = per_node;
  return c;
}

void Hold(testing::World& w, uint32_t job, uint32_t node, uint64_t gpus) {
  Allocation a;
  a.job = JobId(job);
  a.nodes.push_back({NodeId(node), gpus, std::nullopt, 0, 0});
  ASSERT_TRUE(w.ledger.Reserve(a).ok());
}

struct Case {
  const char* name;
  std::vector<NodeId> members;
  GangPermit::Options options;
  StatusCode want;
};

TEST(GangPermitTest, WholeGangOrNothing) {
  testing::World w = MakeWorld(TwoGroupFleet());
  Hold(w, 99, 5, 0x0f);  // node 5: 4 of 8 GPUs held
  JobSpec spec = TwoHourJob("twelve", 12, 40);
  spec.resources.gpu_models = {"A100-80GB"};
  QueuedJob job = Queue(w, spec, 1);  // 12 GPUs on 8-GPU nodes: 2 x 6
  const GangPermit::Options cluster{64, GangPermit::Topology::kCluster};
  const GangPermit::Options group{64, GangPermit::Topology::kGroup};
  const Case cases[] = {
      {"nodes 3 + 4, empty", {NodeId(3), NodeId(4)}, cluster, StatusCode::kOk},
      // Node 5 has 8 - 4 = 4 free < 6: the whole gang is refused.
      {"node 5 half held", {NodeId(3), NodeId(5)}, cluster, StatusCode::kUnschedulable},
      {"across clusters", {NodeId(3), NodeId(0)}, cluster, StatusCode::kUnresolvable},
      {"2 nodes > max_gang_size 1", {NodeId(3), NodeId(4)}, {1, GangPermit::Topology::kCluster},
       StatusCode::kUnresolvable},
      // Node 6 is the first group's last node, 7 the second group's first.
      {"across groups, topology: cluster", {NodeId(6), NodeId(7)}, cluster, StatusCode::kOk},
      {"across groups, topology: group", {NodeId(6), NodeId(7)}, group,
       StatusCode::kUnresolvable},
      {"within the second group", {NodeId(7), NodeId(8)}, group, StatusCode::kOk},
      {"a node twice", {NodeId(3), NodeId(3)}, cluster, StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    testing::Cycle cy(w, job);
    cy.members = c.members;
    Candidate g = Gang(0, 2, 6);
    g.node = c.members[0];
    Status st = GangPermit(c.options).Permit(cy.ctx, g);
    EXPECT_EQ(st.code(), c.want) << c.name << ": " << st.ToString();
  }
  // A real-time service's replica set (each member holds the whole demand)
  // may span clusters: they are its failure domains (realtime_replicas).
  JobSpec svc = TwoHourJob("svc", 1, 40);
  svc.kind = WorkloadKind::kRealtimeInference;
  QueuedJob service = Queue(w, svc, 2);
  {
    testing::Cycle rc(w, service);
    rc.members = {NodeId(0), NodeId(3)};
    Candidate replicas = Gang(0, 2, 1);
    replicas.node = NodeId(0);
    EXPECT_TRUE(GangPermit(cluster).Permit(rc.ctx, replicas).ok());
  }
  // A single node is the framework's own check.
  testing::Cycle cy(w, job);
  Candidate one;
  one.kind = CandidateKind::kNode;
  one.node = NodeId(5);
  one.gpus_per_node = 8;
  EXPECT_TRUE(GangPermit(cluster).Permit(cy.ctx, one).ok());
}

std::unique_ptr<Scheduler> Make(const testing::World& w) {
  auto profile = ParseProfile(R"(name: t
plugins:
  - name: gpu_fit
    args: {max_gang_nodes: 8}
  - name: gang_permit
    args: {max_gang_size: 4, topology: cluster}
  - name: first_fit
)", "t.yaml");
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// Through the scheduler: a 16-GPU A100 job is 2 x 8; with every A100 node but
// one partly held it waits, and holds nothing; freed, it takes two whole nodes.
TEST(GangPermitTest, CyclePlacesGangsWholeOrNotAtAll) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  for (uint32_t n = 3; n <= 5; ++n) Hold(w, 90 + n, n, 0x1);  // node 6 alone is whole
  auto s = Make(w);
  JobSpec spec = TwoHourJob("sixteen", 16, 40);
  spec.resources.gpu_models = {"A100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  Decision d = s->Decide(job, w.At());
  EXPECT_EQ(d.kind, DecisionKind::kWait) << FormatDecision(d);
  EXPECT_FALSE(d.allocation.has_value());
  EXPECT_EQ(w.ledger.allocation_count(), 3u);

  // A hand-made gang over a held node fails at commit and leaves node 6 whole.
  Decision forced;
  forced.job = job.id;
  forced.kind = DecisionKind::kPlace;
  Allocation a;
  a.job = job.id;
  a.nodes.push_back({NodeId(6), 0xff, std::nullopt, 0, 0});
  a.nodes.push_back({NodeId(5), 0xff, std::nullopt, 0, 0});
  forced.allocation = a;
  EXPECT_EQ(s->Commit(forced, w.At(), &w.ledger).code(), StatusCode::kUnschedulable);
  EXPECT_EQ(w.ledger.free_gpu_count(NodeId(6)), 8);
  EXPECT_EQ(w.ledger.Find(job.id), nullptr);

  s->Release(JobId(93), w.At(), &w.ledger);  // node 3 whole again
  Decision placed = s->Decide(job, w.At());
  ASSERT_EQ(placed.kind, DecisionKind::kPlace) << FormatDecision(placed);
  ASSERT_TRUE(s->Commit(placed, w.At(), &w.ledger).ok());
  ASSERT_EQ(placed.allocation->nodes.size(), 2u);
  EXPECT_EQ(placed.allocation->nodes[0].node, NodeId(3));
  EXPECT_EQ(placed.allocation->nodes[1].node, NodeId(6));
  EXPECT_EQ(w.ledger.free_gpu_count(NodeId(3)) + w.ledger.free_gpu_count(NodeId(6)), 0);
}

// A 24-GPU job on onprem-b's 8-GPU A100 nodes is a gang of 3: gpu_fit
// (up to 8 nodes) passes it, but gang_permit's max_gang_size 2 refuses it
// as Unresolvable on any ledger. It can never run, so it is rejected rather
// than left waiting for capacity that cannot help.
TEST(GangPermitTest, AGangAPermitNeverAllowsIsRejectedNotLeftWaiting) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  auto profile = ParseProfile(R"(name: t
plugins:
  - name: gpu_fit
    args: {max_gang_nodes: 8}
  - name: gang_permit
    args: {max_gang_size: 2}
  - name: first_fit
)", "t.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok());
  JobSpec spec = TwoHourJob("twenty-four", 24, 40);
  spec.resources.gpu_models = {"A100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  Decision d = (*s)->Decide(job, w.At());
  EXPECT_EQ(d.kind, DecisionKind::kReject) << FormatDecision(d);
  EXPECT_EQ(d.status.code(), StatusCode::kUnresolvable);
  EXPECT_NE(d.status.message().find("gang_permit"), std::string::npos) << d.status.message();
  // 16 GPUs on 2 nodes is within the cap: placed.
  JobSpec two = TwoHourJob("sixteen", 16, 40);
  two.resources.gpu_models = {"A100-80GB"};
  EXPECT_EQ((*s)->Decide(Queue(w, two, 2), w.At()).kind, DecisionKind::kPlace);
}

TEST(GangPermitTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{max_gang_size: 65, topology: rack}", "p.yaml",
                                   "plugins[2].args");
  ASSERT_TRUE(args.ok());
  auto made = GangPermit::Create(*args);
  ASSERT_FALSE(made.ok());
  const std::string& m = made.status().message();
  EXPECT_NE(m.find("plugins[2].args.max_gang_size: \"65\" must be <= 64"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[2].args.topology"), std::string::npos) << m;
}

}  // namespace
}  // namespace meridian::sched
