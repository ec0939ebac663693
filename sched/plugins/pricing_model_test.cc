#include "sched/plugins/pricing_model.h"

#include <gtest/gtest.h>

#include "sched/cost.h"
#include "sched/explain.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

constexpr int64_t kHour = 3600;

Candidate Elastic(const testing::World& w, PricingModel m, UnixSeconds start = kNow) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.pricing = m;
  c.offering = testing::Offering(w, "gcp:us-central1", "a3-highgpu-1g");
  c.region = FindRegionId(*w.catalog, "gcp:us-central1");
  c.instances = 1;
  c.demand = 0;  // H100
  c.start = start;
  return c;
}

Candidate Node(uint32_t n, UnixSeconds start = kNow) {
  Candidate c;
  c.node = NodeId(n);
  c.gpus_per_node = 1;
  c.start = start;
  return c;
}

QueuedJob Job(const testing::World& w, std::optional<int64_t> deadline_h, bool preemptible = true,
              Priority tier = Priority::kNormal) {
  JobSpec spec = TwoHourJob("train", 1, 40, tier);
  spec.resources.gpu_models = {"H100-80GB"};
  spec.preemptible = preemptible;
  if (deadline_h) spec.deadline.after_submit_s = *deadline_h * kHour;
  return Queue(w, spec, 1);
}

// Every case: 2 h on-demand run, restart 5 min (0.0833 h), checkpoints every 30 min.
// slack = deadline - now - 2 - 0.0833.
// Spot: reclaims 0.47/h x (15 + 5) min = 0.1567 h lost per hour: run 2 / (1 - 0.1567) =
// 2.3715 h, 0.3715 h rework; loss bound = 2 x (0.5 + 0.0833) + 0.3715 = 1.5382 h.
// Flex-start: the test catalog's expected wait is 2 h.
TEST(PricingModelTest, GuaranteeKeepsAnOnDemandFallback) {
  testing::World w = MakeWorld();
  struct Case {
    const char* name;
    std::optional<int64_t> deadline_h;
    Candidate c;
    bool allowed;
  } cases[] = {
      // 48 h: slack 45.92 h >= 1.54 h
      {"spot, loose deadline", 48, Elastic(w, PricingModel::kSpot), true},
      // 4 h: slack 1.92 h >= 1.54 h
      {"spot, 4 h deadline", 4, Elastic(w, PricingModel::kSpot), true},
      // 3.5 h is not whole hours; 3 h: slack 0.92 h < 1.54 h
      {"spot, 3 h deadline", 3, Elastic(w, PricingModel::kSpot), false},
      // flex waits 2 h: 48 h slack 45.92 >= 2
      {"flex, loose deadline", 48, Elastic(w, PricingModel::kFlexStart, kNow + 2 * kHour), true},
      // 4 h: slack 1.92 h < 2 h wait
      {"flex, 4 h deadline", 4, Elastic(w, PricingModel::kFlexStart, kNow + 2 * kHour), false},
      // on-demand now is always allowed, even past the point of no return (slack -0.08 h)
      {"on-demand, 2 h deadline", 2, Elastic(w, PricingModel::kOnDemand), true},
      {"owned now, 2 h deadline", 2, Node(0), true},
      // a deferred start of 1 h: slack 0.92 h < 1 h
      {"owned at +1 h, 3 h deadline", 3, Node(0, kNow + kHour), false},
      // 4 h: slack 1.92 h >= 1 h
      {"owned at +1 h, 4 h deadline", 4, Node(0, kNow + kHour), true},
      // no deadline: anything goes
      {"spot, no deadline", std::nullopt, Elastic(w, PricingModel::kSpot), true},
      {"flex, no deadline", std::nullopt, Elastic(w, PricingModel::kFlexStart, kNow + 2 * kHour),
       true},
  };
  PricingModelChoice p({});
  for (const auto& c : cases) {
    QueuedJob job = Job(w, c.deadline_h);
    testing::Cycle cy(w, job);
    EXPECT_EQ(p.Judge(cy.ctx, c.c).allowed, c.allowed) << c.name;
    std::vector<Candidate> one = {c.c};
    Rejections r;
    r.Reset("pricing_model", true);
    EXPECT_EQ(p.Filter(cy.ctx, one, r), c.allowed ? 1u : 0u) << c.name;
  }
}

TEST(PricingModelTest, ExplainsTheModelAndWhy) {
  testing::World w = MakeWorld();
  PricingModelChoice p({});
  {
    QueuedJob job = Job(w, 48);
    testing::Cycle cy(w, job);
    Candidate spot = Elastic(w, PricingModel::kSpot);
    // 4.4842 $/h x 2.3715 h = 10.63 $
    EXPECT_EQ(p.ExplainScore(cy.ctx, spot, 0),
              "spot: slack 45.9 h >= 2 x (30m + 5m) + 0.37 h rework = 1.54 h loss bound; 10.63 $");
  }
  {
    QueuedJob job = Job(w, 3);
    testing::Cycle cy(w, job);
    EXPECT_EQ(p.ExplainScore(cy.ctx, Elastic(w, PricingModel::kOnDemand), 0),
              "on-demand: slack 0.9 h < spot loss bound 1.54 h; slack 0.9 h < flex wait 2.0 h; "
              "10.77 $");
    // not preemptible, no deadline
    QueuedJob firm = Job(w, std::nullopt, false);
    testing::Cycle fc(w, firm);
    EXPECT_EQ(p.ExplainScore(fc.ctx, Elastic(w, PricingModel::kOnDemand), 0),
              "on-demand: no deadline; no spot (not preemptible, or reclaims would cost too much); "
              "10.77 $");
    std::vector<Candidate> one = {Elastic(w, PricingModel::kSpot)};
    Rejections r;
    r.Reset("pricing_model", true);
    EXPECT_EQ(p.Filter(cy.ctx, one, r), 0u);
    EXPECT_EQ(r.examples()[0].second,
              "spot: slack 0.9 h < 2 x (30m + 5m) + 0.37 h rework = 1.54 h loss bound");
  }
}

TEST(PricingModelTest, PrefersCheaperPricingAndLendsReservedCapacity) {
  FleetSpec f = testing::SmallFleetSpec();
  ClusterSpec resv;
  resv.name = "resv";
  resv.region = "aws:us-east-1";
  resv.pricing = CapacityPricing::kReserved;
  resv.instance_type = "g6e.xlarge";  // 1.17243 $/h reserved, one L40S
  resv.nodes.push_back({2, "L40S", 1, 4, 32, {}, "", {}, {}});
  f.clusters.push_back(resv);
  testing::World w = MakeWorld(f);
  const uint32_t reserved_node = 7;  // after onprem-a (0..2) and onprem-b (3..6)
  auto job_for = [&](bool preemptible, Priority tier) {
    JobSpec spec = TwoHourJob("serve", 1, 40, tier);
    spec.resources.gpu_models = {"L40S"};
    spec.preemptible = preemptible;
    return Queue(w, spec, 1);
  };
  Candidate term;
  term.kind = CandidateKind::kElastic;
  term.pricing = PricingModel::kReserved;
  term.offering = testing::Offering(w, "aws:us-east-1", "g6e.xlarge");
  term.region = FindRegionId(*w.catalog, "aws:us-east-1");
  term.instances = 1;
  term.start = kNow;
  Candidate od = term;
  od.pricing = PricingModel::kOnDemand;
  struct Case {
    const char* name;
    bool preemptible;
    Priority tier;
    Candidate c;
    int64_t cost_micros;
  } cases[] = {
      // idle reserved capacity lent to preemptible work: already paid, 0 $
      {"reserved node, preemptible", true, Priority::kNormal, Node(reserved_node), 0},
      // critical work may take it too: 0 $
      {"reserved node, critical", false, Priority::kCritical, Node(reserved_node), 0},
      // other work pays its committed rate: 1 GPU x 1.17243 $/GPU-h x 2 h = 2.34486 $
      {"reserved node, normal", false, Priority::kNormal, Node(reserved_node), 2'344'860},
      // on-demand: 1.861 $/h x 2 h = 3.722 $
      {"on-demand", false, Priority::kNormal, od, 3'722'000},
      // buying a reserved term for a 2 h run: 1.17243 $/h x 8760 h = 10270.4868 $
      {"reserved term", false, Priority::kNormal, term, 10'270'486'800},
  };
  PricingModelChoice p({});
  for (const auto& c : cases) {
    QueuedJob job = job_for(c.preemptible, c.tier);
    testing::Cycle cy(w, job);
    EXPECT_EQ(p.EffectiveCost(cy.ctx, c.c).micros(), c.cost_micros) << c.name;
    EXPECT_EQ(p.Score(cy.ctx, c.c), -c.cost_micros) << c.name;
  }
  QueuedJob job = job_for(true, Priority::kNormal);
  testing::Cycle cy(w, job);
  EXPECT_EQ(p.ExplainScore(cy.ctx, Node(reserved_node), 0),
            "reserved fleet: idle reserved capacity, lent first to preemptible work at 0 $; 0.00 $");
}

TEST(PricingModelTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{flex_wait_margin: 0.5}");
  ASSERT_TRUE(args.ok());
  auto made = PricingModelChoice::Create(*args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("flex_wait_margin"), std::string::npos);
}

}  // namespace
}  // namespace meridian::sched

namespace meridian::sched {
namespace {

// Through the scheduler with the shipped default profile: an L4 job (the
// fleet has no L4, so only offerings compete): g2-standard-4 in us-central1,
// on-demand 0.70683 $/h, spot 0.29598 $/h, flex-start 0.70683 x 0.47 =
// 0.33221 $/h after a 2 h wait. 2 h run; spot 2.3715 h. The profile waits
// for spot (spot_wait, loss_margin 1): spot while slack >= 1 x (30m + 5m)
// = 0.58 h, no rework in the bound.
TEST(PricingModelTest, DefaultProfileTakesRiskOnlyWithSlack) {
  testing::World w = MakeWorld();
  auto profile = EmbeddedProfile("default");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  struct Case {
    const char* name;
    double deadline_h;
    PricingModel want;
    DecisionKind kind;
  } cases[] = {
      // slack 45.9 h: flex-start 0.66 $ < spot 0.70 $ < on-demand 1.41 $; a deferral of 2 h
      {"48 h", 48, PricingModel::kFlexStart, DecisionKind::kDefer},
      // slack 1.92 h < 2 h wait, >= 0.58 h loss bound: spot
      {"4 h", 4, PricingModel::kSpot, DecisionKind::kPlace},
      // slack 3 - 2 - 5m = 0.92 h >= 0.58 h: still spot
      {"3 h", 3, PricingModel::kSpot, DecisionKind::kPlace},
      // slack 2.5 - 2 - 5m = 0.42 h < 0.58 h: on-demand
      {"2.5 h", 2.5, PricingModel::kOnDemand, DecisionKind::kPlace},
  };
  for (const auto& c : cases) {
    JobSpec spec = TwoHourJob("l4", 1, 20);
    spec.resources.gpu_models = {"L4"};
    spec.preemptible = true;
    spec.deadline.after_submit_s = static_cast<int64_t>(c.deadline_h * kHour);
    QueuedJob job = Queue(w, spec, 1);
    Decision d = (*s)->Decide(job, w.At());
    ASSERT_TRUE(d.pricing.has_value()) << c.name << "\n" << FormatDecision(d);
    EXPECT_EQ(*d.pricing, c.want) << c.name << "\n" << FormatDecision(d);
    EXPECT_EQ(d.kind, c.kind) << c.name;
  }
}

}  // namespace
}  // namespace meridian::sched
