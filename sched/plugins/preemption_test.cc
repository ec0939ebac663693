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
