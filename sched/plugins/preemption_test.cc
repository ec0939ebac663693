#include "sched/plugins/preemption.h"

#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

constexpr const char* kProfile = R"(name: t
options: {elastic: false}
plugins:
  - name: tier_sort
  - name: gpu_fit
  - name: cheapest_price
  - name: preemption
)";

struct Running {
  uint32_t job;
  uint32_t node;
  Priority tier;
  bool preemptible;
  int64_t started_ago_s;
  int64_t checkpoint_s;  // 0: not stated (30 min)
};

void Hold(testing::World& w, const Running& r) {
  Allocation a;
  a.job = JobId(r.job);
  a.priority = r.tier;
  a.preemptible = r.preemptible;
  a.start = kNow - r.started_ago_s;
  a.end = kNow + 10 * 3600;
  a.checkpoint_interval_s = r.checkpoint_s;
  a.nodes.push_back({NodeId(r.node), 0xff, std::nullopt, 0, 0});
  ASSERT_TRUE(w.ledger.Reserve(a).ok());
}

QueuedJob Preemptor(const testing::World& w, Priority tier, int gpus, uint32_t id = 1) {
  JobSpec spec = TwoHourJob("p", gpus, 40, tier);
  spec.resources.gpu_models = {"H100-80GB"};  // nodes 0 and 1 (node 2 is MIG)
  return Queue(w, spec, id);
}

std::unique_ptr<Scheduler> Make(const testing::World& w) {
  auto p = ParseProfile(kProfile, "t.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  auto s = Scheduler::Create(*p, w.fleet);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

TEST(PreemptionTest, VictimCost) {
  Preemption p({});
  struct Case {
    const char* name;
    Priority tier;
    int64_t ago, interval, restart;
    double want;
  } cases[] = {
      // low (w 1) x 8 GPUs x (10 min lost + 5 min restart) = 8 x 0.25 h = 2.0
      {"10 min into a 30 min interval", Priority::kLow, 600, 0, 0, 2.0},
      // 70 min mod 30 min = 10 min: just checkpointed twice, as cheap
      {"70 min, checkpoint every 30 min", Priority::kLow, 4200, 1800, 0, 2.0},
      // normal (w 2) x 8 x (9 h lost + 5 min) = 16 x 9.0833 = 145.33
      {"9 h without a checkpoint (10 h interval)", Priority::kNormal, 9 * 3600, 36000, 0, 16 * (9 + 1.0 / 12)},
      // stated restart 30 min: 1 x 8 x (10 min + 30 min) = 5.33
      {"restart 30 min", Priority::kLow, 600, 1800, 1800, 8 * (40.0 / 60)},
      {"not started yet", Priority::kLow, -600, 0, 0, 0},
  };
  for (const Case& c : cases) {
    Allocation a;
    a.priority = c.tier;
    a.start = kNow - c.ago;
    a.checkpoint_interval_s = c.interval;
    a.restart_overhead_s = c.restart;
    a.nodes.push_back({NodeId(0), 0xff, std::nullopt, 0, 0});
    EXPECT_NEAR(p.VictimCost(a, kNow), c.want, 1e-9) << c.name;
  }
}

TEST(PreemptionTest, CriticalPreemptsLowPreemptibleOnly) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  Hold(w, {10, 0, Priority::kLow, false, 600, 0});  // node 0: low, not preemptible
  Hold(w, {11, 1, Priority::kLow, true, 600, 0});   // node 1: low, preemptible
  auto s = Make(w);
  QueuedJob crit = Preemptor(w, Priority::kCritical, 8);
  Decision d = s->Decide(crit, w.At());
  // value: critical (8) x 8 GPUs x 2 h = 128 > cost 1 x 8 x 0.25 h = 2
  ASSERT_EQ(d.kind, DecisionKind::kPreempt) << d.status.ToString();
  EXPECT_EQ(d.victims, (std::vector<JobId>{JobId(11)}));
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->nodes[0].node, NodeId(1));
  EXPECT_NE(d.start_reason.find("value 128.00 > 1.00 x lost work 2.00"), std::string::npos)
      << d.start_reason;
  ASSERT_TRUE(s->Commit(d, w.At(), &w.ledger).ok());
  EXPECT_EQ(w.ledger.Find(JobId(11)), nullptr);
  EXPECT_NE(w.ledger.Find(JobId(10)), nullptr);
}

TEST(PreemptionTest, NeverSameTierOrNonPreemptible) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  Hold(w, {10, 0, Priority::kLow, false, 600, 0});      // not preemptible
  Hold(w, {11, 1, Priority::kCritical, true, 600, 0});  // same tier as the preemptor
  auto s = Make(w);
  Decision d = s->Decide(Preemptor(w, Priority::kCritical, 8), w.At());
  EXPECT_EQ(d.kind, DecisionKind::kWait);
  EXPECT_TRUE(d.victims.empty());
  // A low job has no lower tier to preempt.
  testing::World w2 = MakeWorld(testing::SmallFleetSpec(), false);
  Hold(w2, {10, 0, Priority::kLow, true, 600, 0});
  Hold(w2, {11, 1, Priority::kLow, true, 600, 0});
  auto s2 = Make(w2);
  EXPECT_EQ(s2->Decide(Preemptor(w2, Priority::kLow, 8), w2.At()).kind, DecisionKind::kWait);
}

TEST(PreemptionTest, RefusesWhenItGainsLessThanItCosts) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  // Both nodes: low preemptible jobs 9 h past their last checkpoint (10 h interval).
  Hold(w, {10, 0, Priority::kLow, true, 9 * 3600, 36000});
  Hold(w, {11, 1, Priority::kLow, true, 9 * 3600, 36000});
  auto s = Make(w);
  // value: high (4) x 1 GPU x 2 h = 8 < cost 1 x 8 x (9 h + 5 min) = 72.67: refused
  QueuedJob high = Preemptor(w, Priority::kHigh, 1);
  Decision d = s->Decide(high, w.At());
  EXPECT_EQ(d.kind, DecisionKind::kWait);
  Preemption p({});
  testing::Cycle cy(w, high);
  std::optional<Preemption::Plan> plan = p.Best(cy.ctx);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->passes);
  EXPECT_NEAR(plan->value, 8.0, 1e-9);
  EXPECT_NEAR(plan->cost, 8 * (9 + 1.0 / 12), 1e-9);
  // The same job, critical and needing 8 GPUs: 8 x 8 x 2 = 128 > 72.67: preempts one.
  Decision d2 = s->Decide(Preemptor(w, Priority::kCritical, 8, 2), w.At());
  EXPECT_EQ(d2.kind, DecisionKind::kPreempt);
  EXPECT_EQ(d2.victims.size(), 1u);
}

TEST(PreemptionTest, RecentlyCheckpointedVictimFirst) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  Hold(w, {10, 0, Priority::kLow, true, 1500, 0});  // 25 min since its checkpoint: 8 x 0.5 h = 4
  Hold(w, {11, 1, Priority::kLow, true, 1860, 0});  // 1 min since its checkpoint: 8 x 0.1 h = 0.8
  auto s = Make(w);
  Decision d = s->Decide(Preemptor(w, Priority::kNormal, 8), w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPreempt);
  EXPECT_EQ(d.victims, (std::vector<JobId>{JobId(11)}));
}

// Quotas and permits: the framework checks a nomination as it checks a
// placement (sched/plugins/preemption.h).

constexpr const char* kQuotaProfile = R"(name: t
options: {elastic: false}
plugins:
  - name: tier_sort
  - name: gpu_fit
  - name: cheapest_price
  - name: quota
    args: {tenants: {research: 8}}
  - name: preemption
)";

std::unique_ptr<Scheduler> MakeWith(const testing::World& w, const char* profile) {
  auto p = ParseProfile(profile, "t.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  auto s = Scheduler::Create(*p, w.fleet);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// Places `r` (8 GPUs of its node) for `tenant` through the scheduler's
// commit, as a fresh placement is, so Reserve plugins (quota) count it.
void Place(Scheduler& s, testing::World& w, const Running& r, uint32_t tenant) {
  Allocation a;
  a.job = JobId(r.job);
  a.priority = r.tier;
  a.preemptible = r.preemptible;
  a.tenant = TenantId(tenant);
  a.start = kNow - r.started_ago_s;
  a.end = kNow + 10 * 3600;
  a.nodes.push_back({NodeId(r.node), 0xff, std::nullopt, 0, 0});
  Decision d;
  d.job = a.job;
  d.kind = DecisionKind::kPlace;
  d.allocation = a;
  ASSERT_TRUE(s.Commit(d, w.At(), &w.ledger).ok());
}

QueuedJob TenantJob(const testing::World& w, const char* tenant, uint32_t tenant_id, Priority tier,
                    int gpus, uint32_t id) {
  JobSpec spec = TwoHourJob("p", gpus, 40, tier);
  spec.resources.gpu_models = {"H100-80GB"};  // nodes 0 and 1 (node 2 is MIG)
  spec.tenant = tenant;
  QueuedJob q = Queue(w, spec, id);
  q.tenant = TenantId(tenant_id);
  return q;
}

TEST(PreemptionTest, ATenantAtItsQuotaCannotPreemptOthersToExceedIt) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  auto s = MakeWith(w, kQuotaProfile);
  Place(*s, w, {10, 0, Priority::kNormal, false, 600, 0}, 0);  // research: 8 GPUs = its quota
  Place(*s, w, {11, 1, Priority::kLow, true, 600, 0}, 1);      // prod: low, preemptible
  // research, critical, 8 GPUs: evicting prod's job 11 frees node 1, but
  // research would hold 64 + 64 = 128 eighths > its 64; its own job 10 is
  // not preemptible, so no nomination is left.
  Decision d = s->Decide(TenantJob(w, "research", 0, Priority::kCritical, 8, 1), w.At());
  EXPECT_EQ(d.kind, DecisionKind::kWait) << d.start_reason;
  EXPECT_TRUE(d.victims.empty());
  // The same job of a tenant without a quota (unlimited): value 8 x 8 x 2 h
  // = 128 > cost 1 x 8 x (10 + 5) min = 2, so it preempts job 11.
  Decision other = s->Decide(TenantJob(w, "other", 2, Priority::kCritical, 8, 2), w.At());
  ASSERT_EQ(other.kind, DecisionKind::kPreempt) << other.status.ToString();
  EXPECT_EQ(other.victims, (std::vector<JobId>{JobId(11)}));
}

TEST(PreemptionTest, ATenantMayPreemptItsOwnLowerTierJobWithinItsQuota) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  auto s = MakeWith(w, kQuotaProfile);
  // research's job 10: 25 min since its checkpoint: 1 x 8 x (25 + 5) min = 4.
  Place(*s, w, {10, 0, Priority::kLow, true, 1500, 0}, 0);
  // prod's job 11: 1 min since its checkpoint: 1 x 8 x (1 + 5) min = 0.8, the
  // cheaper victim, but evicting it leaves research at 64 + 64 > 64.
  Place(*s, w, {11, 1, Priority::kLow, true, 1860, 0}, 1);
  QueuedJob crit = TenantJob(w, "research", 0, Priority::kCritical, 8, 1);
  Decision d = s->Decide(crit, w.At());
  // Asked again for research's own victims: job 10, 64 - 64 + 64 = 64 <= 64.
  ASSERT_EQ(d.kind, DecisionKind::kPreempt) << d.status.ToString();
  EXPECT_EQ(d.victims, (std::vector<JobId>{JobId(10)}));
  ASSERT_TRUE(d.allocation);
  EXPECT_EQ(d.allocation->nodes[0].node, NodeId(0));
  ASSERT_TRUE(s->Commit(d, w.At(), &w.ledger).ok());
  EXPECT_EQ(w.ledger.Find(JobId(10)), nullptr);
  EXPECT_NE(w.ledger.Find(JobId(11)), nullptr);
  // research now holds job 1's 64 eighths: one more GPU (64 + 8 > 64) waits,
  // though the A100 nodes are free.
  JobSpec one = TwoHourJob("one", 1, 40, Priority::kNormal);
  one.tenant = "research";
  QueuedJob more = Queue(w, one, 3);
  Decision d2 = s->Decide(more, w.At());
  EXPECT_EQ(d2.kind, DecisionKind::kWait);
  bool quota_named = false;
  for (const FilterLine& f : d2.filters) quota_named = quota_named || f.plugin == "quota";
  EXPECT_TRUE(quota_named);
}

// A gang that gang_permit refuses (wider than max_gang_size) is not
// nominated into an eviction: before the permit ran, both nodes' jobs went.
TEST(PreemptionTest, APreemptionGangThatGangPermitRefusesEvictsNobody) {
  const char* with_permit = R"(name: t
options: {elastic: false}
plugins:
  - name: tier_sort
  - name: gpu_fit
  - name: cheapest_price
  - name: gang_permit
    args: {max_gang_size: 1}
  - name: preemption
)";
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  Hold(w, {10, 0, Priority::kLow, true, 600, 0});
  Hold(w, {11, 1, Priority::kLow, true, 600, 0});
  // 16 H100 GPUs: a gang of nodes 0 and 1, value 8 x 16 x 2 h x span > cost 4.
  QueuedJob wide = Preemptor(w, Priority::kCritical, 16);
  Decision d = MakeWith(w, with_permit)->Decide(wide, w.At());
  EXPECT_NE(d.kind, DecisionKind::kPreempt);
  EXPECT_TRUE(d.victims.empty());
  // Without gang_permit the same gang is nominated.
  Decision free = Make(w)->Decide(wide, w.At());
  ASSERT_EQ(free.kind, DecisionKind::kPreempt) << free.status.ToString();
  EXPECT_EQ(free.victims.size(), 2u);
}

// The queue's head (low, nothing to preempt) reserves node 0 from job 10's
// end in 1 h (backfill); a critical job whose only victim is on node 0 would
// run 2 h there, past that start, so backfill refuses it and nobody is evicted.
TEST(PreemptionTest, APreemptionThatWouldDelayTheBackfillHeadEvictsNobody) {
  const char* profile = R"(name: t
options: {elastic: false, head_of_line_blocking: false}
plugins:
  - name: gpu_fit
  - name: cheapest_price
  - name: preemption
  - name: backfill
)";
  const char* no_backfill = R"(name: t
options: {elastic: false, head_of_line_blocking: false}
plugins:
  - name: gpu_fit
  - name: cheapest_price
  - name: preemption
)";
  for (const char* p : {profile, no_backfill}) {
    testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
    Allocation x;  // node 0: low, preemptible, ends in 1 h
    x.job = JobId(10);
    x.priority = Priority::kLow;
    x.preemptible = true;
    x.start = kNow - 600;
    x.end = kNow + 3600;
    x.nodes.push_back({NodeId(0), 0xff, std::nullopt, 0, 0});
    ASSERT_TRUE(w.ledger.Reserve(x).ok());
    Hold(w, {11, 1, Priority::kNormal, false, 600, 0});  // node 1: not preemptible, 10 h
    JobSpec head_spec = TwoHourJob("head", 8, 40, Priority::kLow);
    head_spec.resources.gpu_models = {"H100-80GB"};
    QueuedJob head = Queue(w, head_spec, 1, kNow - 100);  // submitted first: no tier_sort
    QueuedJob crit = Preemptor(w, Priority::kCritical, 8, 2);
    std::vector<const QueuedJob*> queue = {&head, &crit};
    auto s = MakeWith(w, p);
    std::vector<Decision> ds = s->RunCycle(w.At(), queue, &w.ledger);
    ASSERT_EQ(ds.size(), 2u);
    EXPECT_EQ(ds[0].kind, DecisionKind::kWait);
    if (p == profile) {
      EXPECT_TRUE(ds[0].reserved);
      EXPECT_EQ(ds[0].start, kNow + 3600);
      EXPECT_EQ(ds[1].kind, DecisionKind::kWait) << ds[1].start_reason;
      EXPECT_TRUE(ds[1].victims.empty());
      EXPECT_NE(w.ledger.Find(JobId(10)), nullptr);
    } else {
      // value 8 x 8 x 2 h = 128 > cost 1 x 8 x (10 + 5) min = 2
      ASSERT_EQ(ds[1].kind, DecisionKind::kPreempt) << ds[1].status.ToString();
      EXPECT_EQ(ds[1].victims, (std::vector<JobId>{JobId(10)}));
    }
  }
}

TEST(PreemptionTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{min_gain_ratio: 0.5, weight_low: 0, max_nodes: 0}", "p.yaml",
                                   "plugins[4].args");
  ASSERT_TRUE(args.ok());
  auto made = Preemption::Create(*args);
  ASSERT_FALSE(made.ok());
  const std::string& m = made.status().message();
  EXPECT_NE(m.find("plugins[4].args.min_gain_ratio: \"0.5\" must be >= 1"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[4].args.weight_low: \"0\" must be >= 0"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[4].args.max_nodes: \"0\" must be >= 1"), std::string::npos) << m;
}

}  // namespace
}  // namespace meridian::sched
