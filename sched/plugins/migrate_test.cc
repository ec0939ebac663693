#include "sched/plugins/migrate.h"

#include <gtest/gtest.h>

#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_cpu_fleet.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

// Shared figures of the spot jobs below (test catalog, estimate/test_catalog.h):
//   8 x H100 for 10 h of work left, on one a3-highgpu-8g under spot.
//   spot rework: one reclaim loses half the 30 min interval + the 5 min
//     restart = 0.333333 h; 1 / (1 - 0.47 x 0.333333) = 1.185771, so
//     10 h x 1.185771 = 11.857708 h of run either way.
//   here:  us-central1 spot 35.87358 $/h x 11.857708 h = 425.378419 $
//          8 x 700 W x 11.857708 h = 66.403162 kWh x 430 g/kWh = 28553 g
//   there: europe-west4 spot 32.62747 $/h x 11.857708 h = 386.886996 $
//          66.403162 kWh x 236 g/kWh = 15671 g
//   gross: 38.491423 $ + (28553 - 15671) g = 12.882 kg x 0.19 $/kg = 2.447580 $
//          = 40.939003 $; staying weighs 425.378419 + 5.425070 = 430.803489 $
//   a move: checkpoint GB x 0.05 $/GB (us-central1 -> europe-west4) egress;
//     GB x 8 / 25 Gbit/s transfer + 300 s restart on the new place at
//     32.62747 $/h and 15671 g / 11.857708 h.
// As in `default`, price leads the ranking (cheapest_price weight 50) and
// carbon breaks near-ties.
constexpr const char* kSpotProfile = R"(name: t
options:
  elastic: true
  pricing_models: [on-demand, spot]
plugins:
  - name: gpu_fit
  - name: residency
  - name: cheapest_price
    weight: 50
  - name: carbon
  - name: migrate
    args: {%s}
)";

FleetSpec CloudOnly() { return FleetSpec(); }

std::unique_ptr<Scheduler> Make(const testing::World& w, const std::string& profile_yaml) {
  auto p = ParseProfile(profile_yaml, "t.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  auto s = Scheduler::Create(*p, w.fleet);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::unique_ptr<Scheduler> SpotScheduler(const testing::World& w, const std::string& args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, kSpotProfile, args.c_str());
  return Make(w, buf);
}

QueuedJob SpotJob(const testing::World& w, std::optional<int64_t> deadline_after_s = {}) {
  JobSpec spec = TwoHourJob("train", 8, 70);
  spec.work.duration_s = 10 * 3600;
  spec.resources.gpu_models = {"H100-80GB"};
  spec.preemptible = true;
  if (deadline_after_s) spec.deadline.after_submit_s = *deadline_after_s;
  return Queue(w, spec, 1);
}

RunningJob OnUsCentralSpot(const testing::World& w, const QueuedJob& job, double checkpoint_gb) {
  RunningJob r;
  r.job = &job;
  r.placement.kind = CandidateKind::kElastic;
  r.placement.pricing = PricingModel::kSpot;
  r.placement.offering = testing::Offering(w, "gcp:us-central1", "a3-highgpu-8g");
  r.placement.instances = 1;
  r.placement.region = FindRegionId(*w.catalog, "gcp:us-central1");
  r.where = "gcp:us-central1 a3-highgpu-8g x1 spot";
  r.checkpoints = 7;
  r.checkpoint_gb = checkpoint_gb;
  return r;
}

// The same machine under on-demand, with a 0 GB checkpoint.
RunningJob OnUsCentralOnDemand(const testing::World& w, const QueuedJob& job) {
  RunningJob r = OnUsCentralSpot(w, job, 0);
  r.placement.pricing = PricingModel::kOnDemand;
  r.where = "gcp:us-central1 a3-highgpu-8g x1 on-demand";
  return r;
}

TEST(MigrateTest, MovesToACheaperSpotRegionWhenTheSavingBeatsEgressAndRestart) {
  testing::World w = MakeWorld(CloudOnly());
  auto s = SpotScheduler(w, "");
  QueuedJob job = SpotJob(w);
  // 200 GB: egress 200 x 0.05 = 10.00 $; transfer 200 x 8 / 25 = 64 s;
  //   overhead (64 + 300) s = 0.101111 h x 32.62747 $/h = 3.299000 $ and
  //   15671 g x 0.101111 / 11.857708 = 134 g (0.025 $);
  //   move cost 13.324 $ < gross 40.939 $ / 1.5; net 27.615 $ >= 1 $ and
  //   27.615 / 430.803 = 6.4% >= 5%: it moves.
  MoveDecision d = s->Reconsider(OnUsCentralSpot(w, job, 200), w.At(), &w.ledger);
  ASSERT_EQ(d.verdict, MoveVerdict::kMove) << d.reason;
  ASSERT_TRUE(d.quote && d.placement);
  const MoveQuote& q = *d.quote;
  EXPECT_EQ(q.costs.egress_usd.micros(), 10'000'000);
  EXPECT_NEAR(q.costs.transfer_hours * 3600, 64, 1e-6);
  EXPECT_NEAR(q.costs.restart_hours * 3600, 300, 1e-6);
  EXPECT_NEAR(q.stay.usd.dollars(), 425.378419, 1e-3);
  EXPECT_NEAR(q.move.usd.dollars(), 386.886996, 1e-3);
  EXPECT_NEAR(static_cast<double>(q.stay.grams), 28553, 1);
  EXPECT_NEAR(static_cast<double>(q.move.grams), 15671, 1);
  EXPECT_NEAR(q.costs.overhead_usd.dollars(), 3.299000, 1e-3);
  const Candidate& to = d.placement->chosen->candidate;
  EXPECT_EQ(to.offering, testing::Offering(w, "gcp:europe-west4", "a3-highgpu-8g"));
  EXPECT_EQ(to.pricing, PricingModel::kSpot);
  EXPECT_NE(d.reason.find("moves from gcp:us-central1 a3-highgpu-8g x1 spot to "), std::string::npos)
      << d.reason;
  // saves 425.378419 - 386.886996 = 38.49 $ and 12.882 kg; net 27.61 $
  EXPECT_NE(d.reason.find("after checkpoint 7: saves $38.49 and 12.9 kg CO2, costs $10.00 egress "
                          "and 6 min restart ($3.30): $27.61 net"),
            std::string::npos)
      << d.reason;
}

TEST(MigrateTest, StaysWhenTheCheckpointsEgressCostsMoreThanItSaves) {
  testing::World w = MakeWorld(CloudOnly());
  auto s = SpotScheduler(w, "");
  QueuedJob job = SpotJob(w);
  // 2000 GB: egress 2000 x 0.05 = 100.00 $ alone exceeds the gross 40.94 $.
  MoveDecision d = s->Reconsider(OnUsCentralSpot(w, job, 2000), w.At(), &w.ledger);
  EXPECT_EQ(d.verdict, MoveVerdict::kStay);
  ASSERT_TRUE(d.quote);
  EXPECT_EQ(d.quote->costs.egress_usd.micros(), 100'000'000);
  EXPECT_FALSE(d.placement);
  EXPECT_NE(d.reason.find("stays on gcp:us-central1 a3-highgpu-8g x1 spot after checkpoint 7"),
            std::string::npos)
      << d.reason;
  EXPECT_NE(d.reason.find("not more than the move's cost"), std::string::npos) << d.reason;
}

TEST(MigrateTest, AJobJustMovedDoesNotMoveAgainWithinTheInterval) {
  testing::World w = MakeWorld(CloudOnly());
  auto s = SpotScheduler(w, "");
  QueuedJob job = SpotJob(w);
  // The 200 GB move above is worth it; 2 checkpoints x 30 min = 60 min must
  // pass after a move: one interval after it stays, two after it moves.
  struct Case {
    int64_t since_s;
    MoveVerdict want;
  } cases[] = {{1800, MoveVerdict::kStay}, {3600, MoveVerdict::kMove}};
  for (const Case& c : cases) {
    RunningJob r = OnUsCentralSpot(w, job, 200);
    r.last_move = kNow - c.since_s;
    MoveDecision d = s->Reconsider(r, w.At(), &w.ledger);
    EXPECT_EQ(d.verdict, c.want) << c.since_s << ": " << d.reason;
    if (c.want == MoveVerdict::kStay) {
      EXPECT_NE(d.reason.find("no move again within 2 checkpoints (60 min"), std::string::npos)
          << d.reason;
      EXPECT_FALSE(d.quote);  // held before any re-decision
    }
  }
}

TEST(MigrateTest, HysteresisKeepsASmallSwingFromMovingIt) {
  testing::World w = MakeWorld(CloudOnly());
  QueuedJob job = SpotJob(w);
  // 600 GB: egress 30.00 $; transfer 600 x 8 / 25 = 192 s; overhead 492 s =
  //   0.136667 h x 32.62747 = 4.459088 $ + 15671 g x 0.136667 / 11.857708
  //   = 181 g (0.034 $); move cost 34.493 $.
  //   gross 40.939 $ > 34.493 $ (net 6.45 $), but < 34.493 x 1.5 = 51.74 $.
  struct Case {
    const char* args;
    MoveVerdict want;
  } cases[] = {
      {"hysteresis: 0.5, min_relative_saving: 0", MoveVerdict::kStay},
      {"hysteresis: 0, min_relative_saving: 0", MoveVerdict::kMove},
  };
  for (const Case& c : cases) {
    auto s = SpotScheduler(w, c.args);
    MoveDecision d = s->Reconsider(OnUsCentralSpot(w, job, 600), w.At(), &w.ledger);
    EXPECT_EQ(d.verdict, c.want) << c.args << ": " << d.reason;
    ASSERT_TRUE(d.quote);
    EXPECT_EQ(d.quote->costs.egress_usd.micros(), 30'000'000);
  }
  // With the defaults the net 6.45 $ is 1.5% of 430.80 $, below 5% too.
  auto s = SpotScheduler(w, "hysteresis: 0");
  MoveDecision d = s->Reconsider(OnUsCentralSpot(w, job, 600), w.At(), &w.ledger);
  EXPECT_EQ(d.verdict, MoveVerdict::kStay);
  EXPECT_NE(d.reason.find("below min_relative_saving 5.0%"), std::string::npos) << d.reason;
}

TEST(MigrateTest, NearItsDeadlineStaysWhenTheMoveRisksIt) {
  testing::World w = MakeWorld(CloudOnly());
  auto s = SpotScheduler(w, "");
  // Staying finishes in ceil(11.857708 h) = 42688 s; moving (200 GB) adds
  // 64 + 300 s: 43052 s. The move must leave one reclaim (1800 + 300 s).
  struct Case {
    int64_t deadline_s;
    MoveVerdict want;
  } cases[] = {
      {44000, MoveVerdict::kStay},  // 43052 > 44000 - 2100 = 41900
      {46000, MoveVerdict::kMove},  // 43052 <= 46000 - 2100 = 43900
  };
  for (const Case& c : cases) {
    QueuedJob job = SpotJob(w, c.deadline_s);
    MoveDecision d = s->Reconsider(OnUsCentralSpot(w, job, 200), w.At(), &w.ledger);
    EXPECT_EQ(d.verdict, c.want) << c.deadline_s << ": " << d.reason;
    ASSERT_TRUE(d.quote);
    EXPECT_EQ(d.quote->stay.finish, kNow + 42688);
    EXPECT_EQ(d.quote->move.finish, kNow + 43052);
    if (c.want == MoveVerdict::kStay) {
      EXPECT_NE(d.reason.find("less than 35 min (one reclaim's loss) before the deadline"),
                std::string::npos)
          << d.reason;
    }
  }
}

TEST(MigrateTest, ACpuFallbackJobMovesToAGpuThatFreesUpWhenWorthIt) {
  // 2 h of work left on 1 GPU; on CPU x slowdown 4 = 8 h at
  // (16 vCPUs x 0.031611 + 64 GiB x 0.004237) = 0.776944 $/h = 6.215552 $.
  // Carbon is not weighed: CPU nodes have no power figure.
  const std::string profile = R"(name: t
options: {elastic: false}
plugins:
  - name: gpu_fit
  - name: cpu_ram
  - name: cpu_fallback
  - name: cheapest_price
  - name: carbon
  - name: migrate
)";
  struct Case {
    double gpu_hour;
    MoveVerdict want;
  } cases[] = {
      // GPU 1 x 1.10 x 2 h = 2.20 $; 10 GB: transfer 3.2 s + 300 s restart =
      // 0.084222 h of 1.10 $/h = 0.092644 $ (no egress within the region);
      // gross 4.015552 $ > 0.092644 x 1.5; net 3.922908 $ is 63% of 6.215552 $.
      {1.10, MoveVerdict::kMove},
      // GPU 1 x 5.00 x 2 h = 10.00 $ > 6.22 $: the CPU is still the best place.
      {5.00, MoveVerdict::kStay},
  };
  for (const Case& c : cases) {
    testing::World w = MakeWorld(testing::CpuFleet(c.gpu_hour), false);
    JobSpec spec = TwoHourJob("f", 1, 40);
    spec.resources.gpu_models = {"H100-80GB"};
    spec.resources.cpu_fallback = meridian::CpuFallback{4};
    spec.resources.vcpus = 16;
    spec.resources.ram_gib = 64;
    spec.preemptible = true;
    QueuedJob job = Queue(w, spec, 1);
    Allocation on_cpu;  // what the job holds on the CPU node
    on_cpu.job = job.id;
    on_cpu.start = kNow - 3600;
    on_cpu.end = kNow + 8 * 3600;
    on_cpu.nodes.push_back({NodeId(1), 0, std::nullopt, 16, 64 * 1024});
    ASSERT_TRUE(w.ledger.Reserve(on_cpu).ok());
    RunningJob r;
    r.job = &job;
    r.placement.kind = CandidateKind::kCpuNode;
    r.placement.node = NodeId(1);
    r.where = "onprem-a CPU node";
    r.checkpoints = 2;
    r.checkpoint_gb = 10;
    auto s = Make(w, profile);
    MoveDecision d = s->Reconsider(r, w.At(), &w.ledger);
    EXPECT_EQ(d.verdict, c.want) << c.gpu_hour << ": " << d.reason;
    if (c.want == MoveVerdict::kMove) {
      ASSERT_TRUE(d.quote && d.placement);
      EXPECT_EQ(d.quote->stay.usd.micros(), 6'215'552);
      EXPECT_EQ(d.quote->move.usd.micros(), 2'200'000);
      EXPECT_EQ(d.quote->costs.egress_usd.micros(), 0);
      EXPECT_NEAR(d.quote->costs.overhead_usd.dollars(), 0.092644, 1e-6);
      EXPECT_EQ(d.placement->chosen->candidate.kind, CandidateKind::kNode);
      EXPECT_EQ(d.placement->chosen->candidate.node, NodeId(0));
      EXPECT_NE(d.reason.find("carbon not weighed"), std::string::npos) << d.reason;
    } else {
      EXPECT_NE(d.reason.find("the best placement for the work left is where it runs"),
                std::string::npos)
          << d.reason;
    }
  }
}

TEST(MigrateTest, StaysWhenTheMoveSavesDollarsButRaisesCo2BeyondMaxWorse) {
  testing::World w = MakeWorld(CloudOnly());
  // Kept to us-central1 (residency), on on-demand there: 10 h at 43.06615 $/h
  //   = 430.661500 $; 56 kWh x 430 g/kWh = 24080 g. The best place for the
  //   work left is us-central1 spot: 425.378419 $ and 28553 g (its rework).
  // A 0 GB checkpoint within the region: no egress, no transfer; 300 s
  //   restart = 0.083333 h x 35.87358 $/h = 2.989465 $ and 28553 g /
  //   11.857708 h x 0.083333 h = 201 g.
  // At 0.19 $/kg: stay 430.661500 + 4.575200 = 435.236700 $; there
  //   425.378419 + 5.425070 = 430.803489 $; gross 4.433211 $; move cost
  //   2.989465 + 0.038190 = 3.027655 $; net 1.405556 $ >= 1 $ (hysteresis
  //   and min_relative_saving 0 let it pass those rules).
  // Dollars with the move: 425.378419 + 2.989465 = 428.367884 $, 0.5% less;
  //   CO2: 28553 + 201 = 28754 g against 24080 g, 19.4% more.
  JobSpec spec = TwoHourJob("train", 8, 70);
  spec.work.duration_s = 10 * 3600;
  spec.resources.gpu_models = {"H100-80GB"};
  spec.preemptible = true;
  spec.residency = {"gcp:us-central1"};
  QueuedJob job = Queue(w, spec, 1);
  RunningJob r = OnUsCentralOnDemand(w, job);
  struct Case {
    const char* max_worse;
    MoveVerdict want;
  } cases[] = {
      {"0.02", MoveVerdict::kStay},  // 19.4% > 2%
      {"0.2", MoveVerdict::kMove},   // 19.4% <= 20%
  };
  for (const Case& c : cases) {
    auto s = SpotScheduler(
        w, std::string("hysteresis: 0, min_relative_saving: 0, max_worse: ") + c.max_worse);
    MoveDecision d = s->Reconsider(r, w.At(), &w.ledger);
    EXPECT_EQ(d.verdict, c.want) << c.max_worse << ": " << d.reason;
    ASSERT_TRUE(d.quote) << d.reason;
    EXPECT_NEAR(d.quote->stay.usd.dollars(), 430.661500, 1e-3);
    EXPECT_NEAR(d.quote->move.usd.dollars(), 425.378419, 1e-3);
    EXPECT_NEAR(static_cast<double>(d.quote->stay.grams), 24080, 1);
    EXPECT_NEAR(static_cast<double>(d.quote->move.grams), 28553, 1);
    EXPECT_NEAR(static_cast<double>(d.quote->costs.overhead_grams), 201, 1);
    if (c.want == MoveVerdict::kStay) {
      EXPECT_NE(d.reason.find("it would emit 28.8 kg CO2 with the move against staying's "
                              "24.1 kg CO2, 19.4% more, beyond max_worse 2.0%"),
                std::string::npos)
          << d.reason;
    } else {
      ASSERT_TRUE(d.placement);
      EXPECT_EQ(d.placement->chosen->candidate.pricing, PricingModel::kSpot);
    }
  }
}

// On-demand only and ranked by carbon: europe-west4 (236 g/kWh) is the best
// place for the work left, at 2.6 times us-central1's on-demand rate.
constexpr const char* kGreenProfile = R"(name: t
options:
  elastic: true
  pricing_models: [on-demand]
plugins:
  - name: gpu_fit
  - name: residency
  - name: carbon
  - name: migrate
    args: {%s}
)";

TEST(MigrateTest, StaysWhenTheMoveCutsCo2ButRaisesDollarsBeyondMaxWorse) {
  testing::World w = MakeWorld(CloudOnly());
  // On us-central1 on-demand: 10 h at 43.06615 $/h = 430.661500 $;
  //   8 x 700 W x 10 h = 56 kWh x 430 g/kWh = 24080 g.
  // The best place for the work left is europe-west4 on-demand: 10 h at
  //   111.81719 $/h = 1118.171900 $; 56 kWh x 236 g/kWh = 13216 g.
  // A 0 GB checkpoint: no egress, no transfer; 300 s restart there =
  //   0.083333 h: 1118.171900 x 0.083333 / 10 = 9.318099 $ and
  //   13216 x 0.083333 / 10 = 110.13 -> 110 g.
  // At usd_per_kg_co2 100: stay 430.661500 + 24.080 x 100 = 2838.661500 $;
  //   there 1118.171900 + 13.216 x 100 = 2439.771900 $; gross 398.889600 $;
  //   move cost 9.318099 + 0.110 x 100 = 20.318099 $, x 1.5 = 30.48 $ < gross;
  //   net 378.571501 $ >= 1 $ and 378.57 / 2838.66 = 13.3% >= 5%.
  // CO2 with the move: 13216 + 110 = 13326 g, 44.7% less than 24080 g;
  //   dollars: 1118.171900 + 9.318099 = 1127.489999 $ against 430.661500 $,
  //   1127.49 / 430.6615 - 1 = 161.8% more.
  QueuedJob job = SpotJob(w);
  RunningJob r = OnUsCentralOnDemand(w, job);
  struct Case {
    const char* max_worse;
    const char* shown;  // as the refusal prints it
    MoveVerdict want;
  } cases[] = {
      {"0.02", "2.0%", MoveVerdict::kStay},   // 161.8% > 2%
      {"1.6", "160.0%", MoveVerdict::kStay},  // 161.8% > 160%
      {"1.7", "", MoveVerdict::kMove},        // 161.8% <= 170%
  };
  for (const Case& c : cases) {
    char buf[512];
    std::snprintf(buf, sizeof buf, kGreenProfile,
                  (std::string("usd_per_kg_co2: 100, max_worse: ") + c.max_worse).c_str());
    auto s = Make(w, buf);
    MoveDecision d = s->Reconsider(r, w.At(), &w.ledger);
    EXPECT_EQ(d.verdict, c.want) << c.max_worse << ": " << d.reason;
    ASSERT_TRUE(d.quote) << d.reason;
    EXPECT_NEAR(d.quote->stay.usd.dollars(), 430.661500, 1e-3);
    EXPECT_NEAR(d.quote->move.usd.dollars(), 1118.171900, 1e-3);
    EXPECT_NEAR(d.quote->costs.overhead_usd.dollars(), 9.318099, 1e-3);
    EXPECT_EQ(d.quote->costs.egress_usd.micros(), 0);
    EXPECT_NEAR(static_cast<double>(d.quote->stay.grams), 24080, 1);
    EXPECT_NEAR(static_cast<double>(d.quote->move.grams), 13216, 1);
    EXPECT_NEAR(static_cast<double>(d.quote->costs.overhead_grams), 110, 1);
    if (c.want == MoveVerdict::kStay) {
      const std::string want = std::string("it would cost $1127.49 with the move against staying's "
                                           "$430.66, 161.8% more, beyond max_worse ") +
                               c.shown;
      EXPECT_NE(d.reason.find(want), std::string::npos) << d.reason;
    } else {
      ASSERT_TRUE(d.placement);
      EXPECT_EQ(d.placement->chosen->candidate.pricing, PricingModel::kOnDemand);
      EXPECT_EQ(d.placement->chosen->candidate.region, FindRegionId(*w.catalog, "gcp:europe-west4"));
    }
  }
}

TEST(MigrateTest, AJobThatIsNotPreemptibleNeverMoves) {
  testing::World w = MakeWorld(CloudOnly());
  auto s = SpotScheduler(w, "");
  JobSpec spec = TwoHourJob("steady", 8, 70);
  spec.resources.gpu_models = {"H100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  RunningJob r = OnUsCentralSpot(w, job, 0);
  r.placement.pricing = PricingModel::kOnDemand;
  MoveDecision d = s->Reconsider(r, w.At(), &w.ledger);
  EXPECT_EQ(d.verdict, MoveVerdict::kStay);
  EXPECT_NE(d.reason.find("not preemptible"), std::string::npos) << d.reason;
}

TEST(MigrateTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml(
      "{hysteresis: -1, min_relative_saving: 2, transfer_gbit_s: 0, max_wait: soon, "
      "max_worse: -0.1}", "p.yaml",
      "plugins[9].args");
  ASSERT_TRUE(args.ok());
  auto made = Migrate::Create(*args);
  ASSERT_FALSE(made.ok());
  // Each bad argument is named with its value and the reason.
  const char* wants[] = {
      "plugins[9].args.hysteresis: \"-1\" must be >= 0",
      "plugins[9].args.min_relative_saving: \"2\" must be <= 1",
      "plugins[9].args.transfer_gbit_s: \"0\" must be >= 0.001",
      "plugins[9].args.max_wait: \"soon\"",
      "plugins[9].args.max_worse: \"-0.1\" must be >= 0",
  };
  for (const char* want : wants) {
    EXPECT_NE(made.status().message().find(want), std::string::npos) << made.status().message();
  }
}

}  // namespace
}  // namespace meridian::sched
