#include "sched/cycle.h"
#include "sched/scheduler.h"

#include <bit>
#include <gtest/gtest.h>

#include "sched/explain.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

constexpr const char* kMinimal = R"(name: minimal
plugins:
  - name: tier_sort
  - name: gpu_fit
  - name: cheapest_price
)";

std::unique_ptr<Scheduler> Make(const testing::World& w, const char* yaml = kMinimal,
                                uint64_t seed = 0) {
  auto p = ParseProfile(yaml, "test.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  auto s = Scheduler::Create(*p, w.fleet, {seed, std::nullopt});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::vector<const QueuedJob*> Ptrs(const std::vector<QueuedJob>& jobs) {
  std::vector<const QueuedJob*> out;
  for (const auto& j : jobs) out.push_back(&j);
  return out;
}

TEST(SchedulerTest, PlacesAFewJobsEndToEnd) {
  testing::World w = MakeWorld();
  JobSpec mig = TwoHourJob("mig", 1, 15);
  mig.resources.mig = true;
  mig.resources.gpu_models = {"H100-80GB"};
  JobSpec never = TwoHourJob("never", 1, 40);
  never.resources.gpu_models = {"V100-32GB"};
  std::vector<QueuedJob> jobs = {
      Queue(w, TwoHourJob("four", 4, 40), 1),
      Queue(w, TwoHourJob("eight", 8, 40, Priority::kHigh), 2),
      Queue(w, mig, 3),
      Queue(w, never, 4),
  };
  auto s = Make(w);
  std::vector<Decision> ds = s->RunCycle(w.At(), Ptrs(jobs), &w.ledger);
  ASSERT_EQ(ds.size(), 4u);
  // High tier first: 8 GPUs x 1.10 $ x 2 h = 17.60 $ on onprem-a beats
  // onprem-b (8 x 2.00 x 2 = 32 $) and a3-highgpu-8g (43.07 $/h x 2 h).
  EXPECT_EQ(ds[0].job, JobId(2));
  ASSERT_EQ(ds[0].kind, DecisionKind::kPlace) << FormatDecision(ds[0]);
  EXPECT_EQ(ds[0].allocation->nodes[0].node, NodeId(0));
  EXPECT_EQ(ds[0].allocation->nodes[0].gpus, 0xffu);
  EXPECT_FALSE(ds[0].pricing.has_value());
  EXPECT_EQ(ds[0].chosen->scores[0].plugin, "cheapest_price");
  EXPECT_EQ(ds[0].chosen->scores[0].normalized, 100);
  ASSERT_TRUE(ds[0].runner_up.has_value());
  // Then the 4-GPU job on node 1, GPUs 0-3: 4 x 1.10 x 2 = 8.80 $.
  EXPECT_EQ(ds[1].job, JobId(1));
  ASSERT_EQ(ds[1].kind, DecisionKind::kPlace) << FormatDecision(ds[1]);
  EXPECT_EQ(ds[1].allocation->nodes[0].node, NodeId(1));
  EXPECT_EQ(ds[1].allocation->nodes[0].gpus, 0x0fu);
  // The MIG job: 1g.20gb costs 1.10 x 2/8 x 2 = 0.55 $, a whole GPU 2.20 $.
  EXPECT_EQ(ds[2].job, JobId(3));
  ASSERT_EQ(ds[2].kind, DecisionKind::kPlace) << FormatDecision(ds[2]);
  ASSERT_TRUE(ds[2].allocation->nodes[0].mig.has_value());
  EXPECT_EQ(ds[2].allocation->nodes[0].node, NodeId(2));
  EXPECT_EQ(ds[2].allocation->nodes[0].mig->shape, (MigShape{6, 2}));
  // Nothing can ever hold 40 GiB on a V100-32GB.
  EXPECT_EQ(ds[3].kind, DecisionKind::kReject);
  EXPECT_EQ(ds[3].status.code(), StatusCode::kUnresolvable);
  ASSERT_FALSE(ds[3].filters.empty());
  EXPECT_EQ(ds[3].filters[0].plugin, "gpu_fit");

  EXPECT_EQ(w.ledger.free_gpu_count(NodeId(0)), 0);
  EXPECT_EQ(w.ledger.free_gpu_count(NodeId(1)), 4);
  EXPECT_EQ(w.ledger.mig_used(NodeId(2), 0), 0b11000000);
  std::string text = FormatDecision(ds[0]);
  EXPECT_NE(text.find("pricing: owned capacity of cluster onprem-a at 1.10 $/GPU-h"), std::string::npos)
      << text;
  EXPECT_NE(text.find("8 GPUs x 1.10 $/GPU-h x 2.00 h = 17.60 $"), std::string::npos) << text;
}

TEST(SchedulerTest, EquallyFreeNodesOfAGroupAreScoredOnce) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  JobSpec one = TwoHourJob("one", 1, 40);
  QueuedJob job = Queue(w, one, 1);
  // Nodes 0-1 (onprem-a's H100 group) and 3-6 (onprem-b's A100 group) are
  // all free: one candidate stands for each group.
  auto s = Make(w);
  Decision d = s->Decide(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  EXPECT_EQ(d.feasible, 2u) << FormatDecision(d);
  EXPECT_EQ(d.allocation->nodes[0].node, NodeId(0));
  // first_fit tells nodes apart by position: every node is scored.
  auto ordered = Make(w, R"(name: ordered
plugins: [{name: gpu_fit}, {name: cheapest_price}, {name: first_fit}])");
  EXPECT_EQ(ordered->Decide(job, w.At()).feasible, 6u);
  // Gangs alike: a 16-GPU job's two-node gangs of onprem-b, {3, 4} and
  // {5, 6}, are all free and score the same; onprem-a's {0, 1} is its own.
  QueuedJob sixteen = Queue(w, TwoHourJob("sixteen", 16, 40), 3);
  Decision g = s->Decide(sixteen, w.At());
  ASSERT_EQ(g.kind, DecisionKind::kPlace) << FormatDecision(g);
  EXPECT_EQ(g.feasible, 2u) << FormatDecision(g);
  EXPECT_EQ(ordered->Decide(sixteen, w.At()).feasible, 3u);
  // So does a random tie break, which must see every equal candidate.
  auto random = Make(w, R"(name: random
options: {tie_break: random}
plugins: [{name: gpu_fit}, {name: cheapest_price}])");
  EXPECT_EQ(random->Decide(job, w.At()).feasible, 6u);
  // Once node 0 holds a job it is a class of its own; bin-packing then
  // prefers it to the empty node 1, as it would with every node scored.
  QueuedJob four = Queue(w, TwoHourJob("four", 4, 40), 2);
  ASSERT_TRUE(s->Commit(s->Decide(four, w.At()), w.At(), &w.ledger).ok());
  auto packed = Make(w, R"(name: packed
plugins: [{name: gpu_fit}, {name: cpu_ram}, {name: cheapest_price, weight: 50}, {name: binpack}])");
  Decision p = packed->Decide(job, w.At());
  ASSERT_EQ(p.kind, DecisionKind::kPlace) << FormatDecision(p);
  EXPECT_EQ(p.feasible, 3u) << FormatDecision(p);
  EXPECT_EQ(p.allocation->nodes[0].node, NodeId(0));
}

TEST(SchedulerTest, ElasticWhenTheFleetIsFullWithPricingReason) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("spot-ok", 8, 40);
  spec.preemptible = true;
  spec.resources.gpu_models = {"H100-80GB"};
  std::vector<QueuedJob> fill = {Queue(w, TwoHourJob("a", 8, 40), 1), Queue(w, TwoHourJob("b", 8, 40), 2)};
  fill[0].demands.resize(1);  // H100 only
  auto s = Make(w);
  auto spot_or_od = Make(w, R"(name: no-flex
options: {pricing_models: [on-demand, spot]}
plugins: [{name: gpu_fit}, {name: cheapest_price}])");
  for (const auto& j : fill) ASSERT_TRUE(s->Commit(s->Decide(j, w.At()), w.At(), &w.ledger).ok());
  QueuedJob job = Queue(w, spec, 3);
  // With flex-start on offer, a3-highgpu-8g at 43.06615 x (1 - 0.53) = 20.24 $/h
  // for 2 h = 40.48 $ is cheapest: a deferral by the expected 2 h wait.
  Decision flex = s->Decide(job, w.At());
  ASSERT_EQ(flex.kind, DecisionKind::kDefer) << FormatDecision(flex);
  EXPECT_EQ(flex.pricing, PricingModel::kFlexStart);
  EXPECT_EQ(flex.start, kNow + 2 * 3600);
  Decision d = spot_or_od->Decide(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  ASSERT_TRUE(d.allocation->elastic.has_value());
  // Spot: 8 x a3-highgpu-1g in asia-northeast1 at 8 x 3.8995 = 31.20 $/h is
  // the cheapest list price, but 8 instances are reclaimed 8 times as often as
  // one: 0.47 x 8 x 1/3 h = 1.25 h lost an hour >= 0.5, refused. Next is
  // europe-west4's a3-highgpu-8g (32.63 $/h) on one instance, below
  // us-central1's (35.87 $/h) and every on-demand price.
  EXPECT_EQ(d.pricing, PricingModel::kSpot);
  EXPECT_NE(d.pricing_reason.find("spot chosen"), std::string::npos) << d.pricing_reason;
  EXPECT_EQ(w.catalog->offerings()[d.allocation->elastic->offering.index()].region,
            "gcp:europe-west4");
  EXPECT_EQ(d.allocation->elastic->instances, 1);
}

TEST(SchedulerTest, GangIsPlacedWholeOrNotAtAll) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  JobSpec big = TwoHourJob("sixteen", 16, 40);
  big.resources.gpu_models = {"A100-80GB"};
  auto s = Make(w);
  // Take one GPU on three of the four A100 nodes: only node 6 has 8 free.
  for (uint32_t n = 3; n <= 5; ++n) {
    Allocation a;
    a.job = JobId(100 + n);
    a.nodes.push_back({NodeId(n), 0b1, std::nullopt, 1, 1});
    a.end = kNow + 3600 * n;
    ASSERT_TRUE(w.ledger.Reserve(a).ok());
  }
  QueuedJob job = Queue(w, big, 1);
  Decision d = s->Decide(job, w.At());
  EXPECT_EQ(d.kind, DecisionKind::kWait) << FormatDecision(d);
  EXPECT_FALSE(d.allocation.has_value());
  EXPECT_EQ(w.ledger.free_gpu_count(NodeId(6)), 8);
  // Earliest start: node 3's holder ends first (now + 3 h), giving 2 nodes.
  EXPECT_EQ(d.start, kNow + 3 * 3600) << FormatDecision(d);
  w.ledger.Unreserve(JobId(103));
  d = s->Decide(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  ASSERT_EQ(d.allocation->nodes.size(), 2u);
  EXPECT_EQ(d.allocation->nodes[0].node, NodeId(3));
  EXPECT_EQ(d.allocation->nodes[1].node, NodeId(6));
  for (const NodeShare& sh : d.allocation->nodes) EXPECT_EQ(std::popcount(sh.gpus), 8);
  ASSERT_TRUE(s->Commit(d, w.At(), &w.ledger).ok());
  EXPECT_EQ(w.ledger.free_gpu_count(NodeId(3)), 0);
  EXPECT_EQ(w.ledger.free_gpu_count(NodeId(6)), 0);
}

TEST(SchedulerTest, WaitsWithEarliestStartWhenFull) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  JobSpec h100 = TwoHourJob("h", 8, 40);
  h100.resources.gpu_models = {"H100-80GB"};
  auto s = Make(w);
  std::vector<QueuedJob> jobs = {Queue(w, h100, 1), Queue(w, h100, 2), Queue(w, h100, 3)};
  std::vector<Decision> ds = s->RunCycle(w.At(), Ptrs(jobs), &w.ledger);
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[0].kind, DecisionKind::kPlace);
  EXPECT_EQ(ds[1].kind, DecisionKind::kPlace);
  EXPECT_EQ(ds[2].kind, DecisionKind::kWait) << FormatDecision(ds[2]);
  EXPECT_EQ(ds[2].status.code(), StatusCode::kUnschedulable);
  EXPECT_EQ(ds[2].start, kNow + 7200);  // the first two end after their 2 h
  EXPECT_NE(ds[2].start_reason.find("when job 1 ends"), std::string::npos) << ds[2].start_reason;
}

// The two 8-GPU H100 nodes (0, 1) hold job 1 (8 GPUs on node 0) and jobs 2
// and 3 (6 + 2 GPUs on node 1); job 4 wants 8 H100s and waits. Freeing job
// 3's 2 GPUs leaves node 1 with 2 free: no 8-GPU job fits there, so the
// verdict is kept. Freeing job 2 too leaves 8: decided again, and placed.
TEST(SchedulerTest, KeptWaitIsDecidedAgainOnlyWhenCapacityItFitsFrees) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  auto s = Make(w);
  auto hold = [&](uint32_t job, uint32_t node, uint64_t gpus) {
    Allocation a;
    a.job = JobId(job);
    a.nodes.push_back({NodeId(node), gpus, std::nullopt, 0, 0});
    a.start = kNow;
    a.end = kNow + 7200;
    ASSERT_TRUE(w.ledger.Reserve(a).ok());
  };
  hold(1, 0, 0xff);
  hold(2, 1, 0x3f);
  hold(3, 1, 0xc0);
  JobSpec h100 = TwoHourJob("h", 8, 40);
  h100.resources.gpu_models = {"H100-80GB"};
  QueuedJob job = Queue(w, h100, 4);
  Decision d = s->DecideInCycle(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kWait) << FormatDecision(d);
  EXPECT_FALSE(d.kept);
  EXPECT_EQ(s->full_decisions(), 1);

  // Nothing changed: kept, at a later time too (no time rule in the profile).
  EXPECT_TRUE(s->DecideInCycle(job, w.At(kNow + 60)).kept);
  s->Release(JobId(3), w.At(kNow + 60), &w.ledger);  // node 1: 2 GPUs free
  Decision kept = s->DecideInCycle(job, w.At(kNow + 60));
  EXPECT_TRUE(kept.kept);
  EXPECT_EQ(kept.kind, DecisionKind::kWait);
  EXPECT_EQ(s->kept_verdicts(), 2);
  EXPECT_EQ(s->full_decisions(), 1);

  s->Release(JobId(2), w.At(kNow + 120), &w.ledger);  // node 1: 8 GPUs free
  Decision again = s->DecideInCycle(job, w.At(kNow + 120));
  EXPECT_FALSE(again.kept);
  EXPECT_EQ(again.kind, DecisionKind::kPlace) << FormatDecision(again);
  EXPECT_EQ(s->full_decisions(), 2);
  // With keep_waits off, the same question is decided in full every time.
  auto p = ParseProfile(kMinimal, "test.yaml");
  SchedulerOptions all;
  all.keep_waits = false;
  auto every = Scheduler::Create(*p, w.fleet, all);
  ASSERT_TRUE(every.ok());
  hold(2, 1, 0x3f);
  EXPECT_FALSE((*every)->DecideInCycle(job, w.At()).kept);
  EXPECT_FALSE((*every)->DecideInCycle(job, w.At()).kept);
  EXPECT_EQ((*every)->full_decisions(), 2);
}

// Tenant 1 ("research", quota 8 GPUs) holds job 1 (4 H100s) and job 2 (4
// A100s); tenant 2 ("prod", no quota) holds job 10 on an A100 node.
// Research's job 3 (4 H100s) waits for its quota although node 1's 8 H100s
// are free. Prod's release frees A100s, which job 3 cannot use, and leaves
// research's usage as it was: the verdict is kept. Research's own release of
// job 2 frees A100s too, which job 3 still cannot use, but brings research to
// 4 of 8: decided again, and placed on the H100s that were free all along. A
// prod job (no quota) that waits declares nothing of quota's, so only
// capacity it fits wakes it.
TEST(SchedulerTest, AQuotaWaitIsDecidedAgainWhenItsOwnTenantReleasesNotAnother) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  auto s = Make(w, R"(name: quota
options: {elastic: false}
plugins:
  - name: gpu_fit
  - name: quota
    args: {tenants: {research: 8}}
  - name: first_fit
)");
  auto queue = [&](const char* tenant, uint32_t tenant_id, const char* model, int gpus, uint32_t id) {
    JobSpec spec = TwoHourJob(tenant, gpus, 40);
    spec.tenant = tenant;
    spec.resources.gpu_models = {model};
    auto q = MakeQueuedJob(std::make_shared<JobSpec>(spec), *w.catalog,
                           {JobId(id), TenantId(tenant_id), kNow, id});
    if (!q.ok()) throw std::runtime_error(q.status().ToString());
    return std::move(q).value();
  };
  auto place = [&](const QueuedJob& job) {
    Decision d = s->Decide(job, w.At());
    ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
    ASSERT_TRUE(s->Commit(d, w.At(), &w.ledger).ok());
  };
  place(queue("research", 1, "H100-80GB", 4, 1));
  place(queue("research", 1, "A100-80GB", 4, 2));
  place(queue("prod", 2, "A100-80GB", 8, 10));
  QueuedJob job3 = queue("research", 1, "H100-80GB", 4, 3);
  Decision d = s->DecideInCycle(job3, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kWait) << FormatDecision(d);
  EXPECT_NE(FormatDecision(d).find("quota"), std::string::npos) << FormatDecision(d);
  EXPECT_FALSE(d.kept);

  s->Release(JobId(10), w.At(kNow + 60), &w.ledger);  // prod's A100s
  Decision kept = s->DecideInCycle(job3, w.At(kNow + 60));
  EXPECT_TRUE(kept.kept);
  EXPECT_EQ(kept.kind, DecisionKind::kWait);

  s->Release(JobId(2), w.At(kNow + 120), &w.ledger);  // research's A100s: 4 of 8 GPUs
  Decision again = s->DecideInCycle(job3, w.At(kNow + 120));
  EXPECT_FALSE(again.kept);
  EXPECT_EQ(again.kind, DecisionKind::kPlace) << FormatDecision(again);
  ASSERT_TRUE(s->Commit(again, w.At(kNow + 120), &w.ledger).ok());

  // Prod (no quota) asks for 8 A100s once jobs 12-15 fill all four A100
  // nodes: nothing fits. Research's release of job 1 frees H100s only,
  // which it cannot use: kept.
  QueuedJob big = queue("prod", 2, "A100-80GB", 8, 11);
  place(queue("prod", 2, "A100-80GB", 8, 12));
  place(queue("prod", 2, "A100-80GB", 8, 13));
  place(queue("prod", 2, "A100-80GB", 8, 14));
  place(queue("prod", 2, "A100-80GB", 8, 15));
  Decision waits = s->DecideInCycle(big, w.At(kNow + 180));
  ASSERT_EQ(waits.kind, DecisionKind::kWait) << FormatDecision(waits);
  s->Release(JobId(1), w.At(kNow + 240), &w.ledger);
  EXPECT_TRUE(s->DecideInCycle(big, w.At(kNow + 240)).kept);
  s->Release(JobId(12), w.At(kNow + 300), &w.ledger);  // an A100 node: it fits there
  Decision placed = s->DecideInCycle(big, w.At(kNow + 300));
  EXPECT_FALSE(placed.kept);
  EXPECT_EQ(placed.kind, DecisionKind::kPlace) << FormatDecision(placed);
}

// Node 0 has 8 GPUs, 2 of them held (GPUs 0-1). An 8-GPU candidate there
// must not become a 6-GPU allocation: the share names 8 GPUs, and the ledger
// refuses it because GPUs 0 and 1 are taken.
TEST(SchedulerTest, AllocationNeverTakesFewerGpusThanTheCandidateAsks) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  Allocation held;
  held.job = JobId(9);
  held.nodes.push_back({NodeId(0), 0x3, std::nullopt, 0, 0});
  ASSERT_TRUE(w.ledger.Reserve(held).ok());
  JobSpec spec = TwoHourJob("eight", 8, 40);
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  Candidate c;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(0);
  c.gpus_per_node = 8;
  c.start = kNow;
  Allocation a = AllocationFor(cy.ctx, c, w.ledger);
  ASSERT_EQ(a.nodes.size(), 1u);
  EXPECT_EQ(std::popcount(a.nodes[0].gpus), 8);
  EXPECT_FALSE(w.ledger.CanReserve(a).ok());
  // With 6 asked, the 6 free GPUs (2-7) are taken and the ledger agrees.
  c.gpus_per_node = 6;
  Allocation six = AllocationFor(cy.ctx, c, w.ledger);
  EXPECT_EQ(six.nodes[0].gpus, 0xfcu);
  EXPECT_TRUE(w.ledger.CanReserve(six).ok());
}

// Twenty 8-GPU H100 nodes, node k held whole by job 100 + k until
// now + (20 - k) h.
testing::World TwentyFullH100Nodes() {
  FleetSpec f;
  ClusterSpec c;
  c.name = "big";
  c.region = "gcp:us-central1";
  c.gpu_hour = Money::FromDollars(1.10);
  c.nodes.push_back({20, "H100-80GB", 8, 64, 512, {}, "", {}, {}});
  f.clusters = {c};
  testing::World w = MakeWorld(f, /*elastic=*/false);
  for (uint32_t k = 0; k < 20; ++k) {
    Allocation a;
    a.job = JobId(100 + k);
    a.nodes.push_back({NodeId(k), 0xff, std::nullopt, 0, 0});
    a.start = kNow;
    a.end = kNow + (20 - k) * 3600;
    EXPECT_TRUE(w.ledger.Reserve(a).ok());
  }
  return w;
}

// One group of 20 full 8-GPU H100 nodes; node k's job ends at +(20 - k) h,
// so node 19 frees first, at +1 h, and nodes 18 and 19 hold a 16-GPU gang
// from +2 h. Every node of the group counts, not only the first few.
TEST(SchedulerTest, EarliestStartLooksAtEveryNodeOfTheGroup) {
  testing::World w = TwentyFullH100Nodes();
  auto s = Make(w);
  JobSpec eight = TwoHourJob("eight", 8, 40);
  Decision d = s->Decide(Queue(w, eight, 1), w.At());
  ASSERT_EQ(d.kind, DecisionKind::kWait) << FormatDecision(d);
  EXPECT_EQ(d.start, kNow + 3600);
  EXPECT_EQ(d.start_nodes, std::vector<NodeId>{NodeId(19)});
  JobSpec sixteen = TwoHourJob("sixteen", 16, 40);
  Decision g = s->Decide(Queue(w, sixteen, 2), w.At());
  ASSERT_EQ(g.kind, DecisionKind::kWait) << FormatDecision(g);
  EXPECT_EQ(g.start, kNow + 2 * 3600);
  EXPECT_EQ(g.start_nodes, (std::vector<NodeId>{NodeId(19), NodeId(18)}));
}

// Earliest-start answers are shared by jobs asking on the same ledger at the
// same time, and never outlive a change. Twenty full H100 nodes, node k's
// holder ending at now + (20 - k) h: an 8-GPU job's earliest start is node
// 19 at now + 1 h, and a second such job on the same ledger gets the same.
// Then node 19's holder is replaced, at the same time, by a 4-GPU one that
// ends at +3 h: a third job's earliest start is node 18 at +2 h, not the
// answer from before the change.
TEST(SchedulerTest, EarliestStartFollowsEveryLedgerChangeAtTheSameTime) {
  testing::World w = TwentyFullH100Nodes();
  auto s = Make(w);
  const JobSpec eight = TwoHourJob("eight", 8, 40);
  const QueuedJob one = Queue(w, eight, 1), two = Queue(w, eight, 2);
  for (const QueuedJob* j : {&one, &two}) {
    Decision d = s->Decide(*j, w.At());
    ASSERT_EQ(d.kind, DecisionKind::kWait) << FormatDecision(d);
    EXPECT_EQ(d.start, kNow + 3600);
    EXPECT_EQ(d.start_nodes, std::vector<NodeId>{NodeId(19)});
  }
  // Room now on node 19, but a 4-GPU holder (ending at +3 h) keeps the job
  // from starting: only half the node is free.
  std::optional<Allocation> taken = w.ledger.Take(JobId(119));
  ASSERT_TRUE(taken.has_value());
  Allocation half;
  half.job = JobId(200);
  half.nodes.push_back({NodeId(19), 0x0f, std::nullopt, 0, 0});
  half.start = kNow;
  half.end = kNow + 3 * 3600;
  ASSERT_TRUE(w.ledger.Reserve(half).ok());
  Decision d = s->Decide(Queue(w, eight, 3), w.At());
  ASSERT_EQ(d.kind, DecisionKind::kWait) << FormatDecision(d);
  // Node 18 frees all 8 at +2 h; node 19 only at +3 h.
  EXPECT_EQ(d.start, kNow + 2 * 3600);
  EXPECT_EQ(d.start_nodes, std::vector<NodeId>{NodeId(18)});
}

// Verdicts of jobs that leave the queue without a commit (cancelled) are
// dropped once they outnumber the cycle's by more than 4,096: 5,000 waits
// kept in one cycle, then a cycle that asks about job 1 alone; job 2 is then
// decided in full again, job 1 still kept.
TEST(SchedulerTest, KeptVerdictsOfJobsGoneFromTheQueueAreDropped) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  auto s = Make(w);
  JobSpec huge = TwoHourJob("h", 16, 40);  // both 8-GPU H100 nodes; node 0 is held
  huge.resources.gpu_models = {"H100-80GB"};
  Allocation all;
  all.job = JobId(99999);
  all.nodes.push_back({NodeId(0), 0xff, std::nullopt, 0, 0});
  ASSERT_TRUE(w.ledger.Reserve(all).ok());
  std::vector<QueuedJob> jobs;
  for (uint32_t i = 1; i <= 5000; ++i) jobs.push_back(Queue(w, huge, i));
  s->BeginCycle(w.At());
  for (const QueuedJob& j : jobs) {
    Decision d = s->DecideInCycle(j, w.At());
    ASSERT_EQ(d.kind, DecisionKind::kWait) << FormatDecision(d);
  }
  s->EndCycle();
  ASSERT_EQ(s->full_decisions(), 5000);
  s->BeginCycle(w.At());
  EXPECT_TRUE(s->DecideInCycle(jobs[0], w.At()).kept);
  s->EndCycle();
  s->BeginCycle(w.At());
  EXPECT_TRUE(s->DecideInCycle(jobs[0], w.At()).kept);
  EXPECT_FALSE(s->DecideInCycle(jobs[1], w.At()).kept);
  s->EndCycle();
  EXPECT_EQ(s->full_decisions(), 5001);
}

TEST(SchedulerTest, HeadOfLineBlockingStopsTheCycle) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  auto p = EmbeddedProfile("fifo-strict");
  ASSERT_TRUE(p.ok());
  auto s = Scheduler::Create(*p, w.fleet);
  ASSERT_TRUE(s.ok());
  JobSpec h100 = TwoHourJob("h", 8, 40);
  h100.resources.gpu_models = {"H100-80GB"};
  std::vector<QueuedJob> jobs = {Queue(w, h100, 1), Queue(w, h100, 2), Queue(w, h100, 3),
                                 Queue(w, TwoHourJob("small", 1, 10), 4)};
  std::vector<Decision> ds = (*s)->RunCycle(w.At(), Ptrs(jobs), &w.ledger);
  ASSERT_EQ(ds.size(), 3u);  // job 3 waits; job 4 is not considered
  EXPECT_EQ(ds[2].kind, DecisionKind::kWait);
  // fifo: first fit in fleet order.
  EXPECT_EQ(ds[0].allocation->nodes[0].node, NodeId(0));
  EXPECT_EQ(ds[1].allocation->nodes[0].node, NodeId(1));
}

// Random small jobs over the test fleet, decided and committed in cycles:
// the ledger never over-allocates, and the same seed repeats every decision.
std::vector<std::string> RandomRun(uint64_t seed, testing::World* w) {
  Rng rng(seed);
  auto s = Make(*w, R"(name: r
options: {tie_break: random}
plugins: [{name: tier_sort}, {name: gpu_fit}, {name: cheapest_price}])",
                seed);
  std::vector<QueuedJob> jobs;
  for (uint32_t i = 0; i < 60; ++i) {
    const int sizes[] = {1, 2, 4, 8, 16};
    JobSpec j = TwoHourJob("r" + std::to_string(i), sizes[rng.Below(5)],
                           10 + static_cast<double>(rng.Below(60)),
                           static_cast<Priority>(rng.Below(4)));
    j.resources.mig = rng.Below(3) == 0 && j.resources.gpus == 1;
    j.resources.vcpus = static_cast<int>(rng.Below(40));
    jobs.push_back(Queue(*w, j, i + 1, kNow + static_cast<UnixSeconds>(rng.Below(100))));
  }
  std::vector<std::string> log;
  std::vector<Decision> ds = s->RunCycle(w->At(), Ptrs(jobs), &w->ledger);
  for (const Decision& d : ds) {
    std::string line = std::to_string(d.job.value()) + " " + std::string(ToString(d.kind));
    if (d.allocation) {
      for (const NodeShare& sh : d.allocation->nodes) {
        line += " n" + std::to_string(sh.node.value()) + ":" + std::to_string(sh.gpus);
        if (sh.mig) line += "m" + std::to_string(sh.mig->gpu) + "@" + std::to_string(sh.mig->shape.start);
      }
      if (d.allocation->elastic) line += " o" + std::to_string(d.allocation->elastic->offering.value());
    }
    EXPECT_NE(d.kind, DecisionKind::kError) << FormatDecision(d);
    log.push_back(line);
  }
  return log;
}

TEST(SchedulerTest, NeverOverAllocatesAndIsDeterministic) {
  for (bool elastic : {false, true}) {
    testing::World a = MakeWorld(testing::SmallFleetSpec(), elastic);
    testing::World b = MakeWorld(testing::SmallFleetSpec(), elastic);
    std::vector<std::string> la = RandomRun(7, &a), lb = RandomRun(7, &b);
    EXPECT_EQ(la, lb);
    // Sum the ledger's allocations per node against its capacity.
    for (const Node& n : a.fleet->nodes()) {
      uint64_t gpus = 0;
      int vcpus = 0;
      std::vector<uint8_t> mig(static_cast<size_t>(n.gpus), 0);
      for (const auto& [job, alloc] : a.ledger.allocations()) {
        for (const NodeShare& sh : alloc.nodes) {
          if (sh.node != n.id) continue;
          EXPECT_EQ(gpus & sh.gpus, 0u) << "GPU given twice on " << n.name;
          gpus |= sh.gpus;
          vcpus += sh.vcpus;
          if (sh.mig) {
            EXPECT_EQ(mig[sh.mig->gpu] & sh.mig->shape.mask(), 0) << "MIG slice twice";
            mig[sh.mig->gpu] |= sh.mig->shape.mask();
          }
        }
      }
      EXPECT_LE(std::popcount(gpus), n.gpus);
      EXPECT_LE(vcpus, n.vcpus);
      EXPECT_EQ(a.ledger.free_vcpus(n.id), n.vcpus - vcpus);
    }
  }
}

// Brute force over every node: the job can run now iff some node of a fitting
// model has enough free GPUs, and the chosen node's cost is the cheapest such.
TEST(SchedulerTest, MatchesBruteForceOnRandomSmallFleets) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
    auto s = Make(w);
    Rng rng(seed);
    for (uint32_t n = 0; n < w.fleet->nodes().size(); ++n) {  // random existing load
      if (w.fleet->node(NodeId(n)).mig_gpus != 0) continue;
      uint64_t taken = rng.Next() & rng.Next() & 0xff;
      if (taken == 0) continue;
      Allocation a;
      a.job = JobId(1000 + n);
      a.nodes.push_back({NodeId(n), taken, std::nullopt, 0, 0});
      a.end = kNow + 3600;
      ASSERT_TRUE(w.ledger.Reserve(a).ok());
    }
    for (uint32_t i = 0; i < 20; ++i) {
      const int sizes[] = {1, 2, 3, 4, 6, 8};
      QueuedJob job = Queue(w, TwoHourJob("j", sizes[rng.Below(6)], 10 + static_cast<double>(rng.Below(70))), i + 1);
      std::optional<int64_t> best;
      for (const Node& n : w.fleet->nodes()) {
        const ModelDemand* d = job.DemandFor(n.gpu_model);
        if (!d || w.ledger.free_gpu_count(n.id) < d->gpus) continue;
        // gpu_hour x GPUs x hours, in micro-dollars
        int64_t cost = w.fleet->cluster(n.cluster).gpu_hour.Times(d->gpus * d->run_hours).micros();
        if (!best || cost < *best) best = cost;
      }
      Decision d = s->Decide(job, w.At());
      ASSERT_EQ(d.kind == DecisionKind::kPlace, best.has_value()) << "seed " << seed << "\n" << FormatDecision(d);
      if (!best) continue;
      const NodeShare& sh = d.allocation->nodes.at(0);
      const Node& n = w.fleet->node(sh.node);
      const ModelDemand* dem = job.DemandFor(n.gpu_model);
      EXPECT_EQ(w.fleet->cluster(n.cluster).gpu_hour.Times(dem->gpus * dem->run_hours).micros(), *best)
          << "seed " << seed;
      ASSERT_TRUE(s->Commit(d, w.At(), &w.ledger).ok());
    }
  }
}

TEST(SchedulerTest, SameSnapshotAndSeedGiveTheSameDecision) {
  testing::World w = MakeWorld();
  auto s1 = Make(w, "name: r\noptions: {tie_break: random}\nplugins: [{name: gpu_fit}]", 42);
  auto s2 = Make(w, "name: r\noptions: {tie_break: random}\nplugins: [{name: gpu_fit}]", 42);
  QueuedJob job = Queue(w, TwoHourJob("j", 1, 10), 9);
  // No score plugin: every candidate ties, the seeded draw picks.
  Decision a = s1->Decide(job, w.At());
  Decision b = s2->Decide(job, w.At());
  Decision c = s1->Decide(job, w.At());  // history does not matter
  ASSERT_TRUE(a.allocation && b.allocation && c.allocation);
  EXPECT_EQ(*a.allocation, *b.allocation);
  EXPECT_EQ(*a.allocation, *c.allocation);
}

}  // namespace
}  // namespace meridian::sched
