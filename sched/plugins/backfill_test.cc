#include "sched/plugins/backfill.h"

#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

constexpr const char* kWith = R"(name: t
options: {elastic: false}
plugins:
  - name: tier_sort
  - name: gpu_fit
  - name: first_fit
  - name: backfill
)";
constexpr const char* kWithout = R"(name: t
options: {elastic: false}
plugins:
  - name: tier_sort
  - name: gpu_fit
  - name: first_fit
)";

QueuedJob A100Job(const testing::World& w, uint32_t id, int gpus, int64_t run_s, Priority p) {
  JobSpec spec = TwoHourJob("j" + std::to_string(id), gpus, 40, p);
  spec.resources.gpu_models = {"A100-80GB"};  // nodes 3..6, 8 GPUs each
  spec.work.duration_s = run_s;
  return Queue(w, spec, id, kNow + id);
}

// Runs one cycle: nodes 3..6 each hold 6 of 8 GPUs until now + 4 h; the head
// (high, 32 GPUs = 4 nodes x 8) waits for all four; then a 2 h and a 10 h job
// of 2 GPUs each.
std::vector<Decision> Cycle(testing::World& w, const char* profile) {
  for (uint32_t n = 3; n <= 6; ++n) {
    Allocation a;
    a.job = JobId(100 + n);
    a.start = kNow - 3600;
    a.end = kNow + 4 * 3600;
    a.nodes.push_back({NodeId(n), 0x3f, std::nullopt, 0, 0});
    EXPECT_TRUE(w.ledger.Reserve(a).ok());
  }
  std::vector<QueuedJob> jobs = {A100Job(w, 1, 32, 7200, Priority::kHigh),
                                 A100Job(w, 2, 2, 2 * 3600, Priority::kNormal),
                                 A100Job(w, 3, 2, 10 * 3600, Priority::kNormal)};
  auto p = ParseProfile(profile, "t.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  auto s = Scheduler::Create(*p, w.fleet);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  std::vector<const QueuedJob*> ptrs = {&jobs[0], &jobs[1], &jobs[2]};
  return (*s)->RunCycle(w.At(), ptrs, &w.ledger);
}

TEST(BackfillTest, ShortJobsFillAroundTheHeadsReservation) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  std::vector<Decision> d = Cycle(w, kWith);
  ASSERT_EQ(d.size(), 3u);
  // The head waits; its earliest start is now + 4 h on all four A100 nodes.
  EXPECT_EQ(d[0].job, JobId(1));
  EXPECT_EQ(d[0].kind, DecisionKind::kWait);
  EXPECT_EQ(d[0].start, kNow + 4 * 3600);
  EXPECT_EQ(d[0].start_nodes.size(), 4u);
  // 2 h job: ends at now + 2 h <= now + 4 h: it may use a reserved node.
  EXPECT_EQ(d[1].kind, DecisionKind::kPlace) << d[1].status.ToString();
  // 10 h job: ends at now + 10 h > now + 4 h on a reserved node: it waits.
  EXPECT_EQ(d[2].kind, DecisionKind::kWait);
  ASSERT_FALSE(d[2].filters.empty());
  EXPECT_EQ(d[2].filters.back().plugin, "ledger");
  EXPECT_NE(d[2].filters.back().examples[0].find("backfill: would run past the start reserved"),
            std::string::npos)
      << d[2].filters.back().examples[0];
}

TEST(BackfillTest, WithoutBackfillTheLongJobDelaysTheHead) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  std::vector<Decision> d = Cycle(w, kWithout);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].kind, DecisionKind::kWait);
  EXPECT_EQ(d[1].kind, DecisionKind::kPlace);
  EXPECT_EQ(d[2].kind, DecisionKind::kPlace);  // holds a node the head needs for 10 h
}

TEST(BackfillTest, PermitOutsideACycleAllowsAll) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  Backfill b(1);
  QueuedJob j = A100Job(w, 3, 2, 10 * 3600, Priority::kNormal);
  testing::Cycle cy(w, j);
  Candidate c;
  c.node = NodeId(3);
  c.gpus_per_node = 2;
  c.start = kNow;
  EXPECT_TRUE(b.Permit(cy.ctx, c).ok());
  // A reservation on node 3 from now + 4 h: 10 h from now runs past it; node 4 is free of it.
  Decision head;
  head.kind = DecisionKind::kWait;
  head.start = kNow + 4 * 3600;
  head.start_nodes = {NodeId(3)};
  QueuedJob h = A100Job(w, 1, 32, 7200, Priority::kHigh);
  b.BeginCycle(w.At());
  b.Decided(w.At(), h, &head);
  EXPECT_TRUE(head.reserved);
  EXPECT_EQ(b.Permit(cy.ctx, c).code(), StatusCode::kUnschedulable);
  c.node = NodeId(4);
  EXPECT_TRUE(b.Permit(cy.ctx, c).ok());
  b.EndCycle();
  c.node = NodeId(3);
  EXPECT_TRUE(b.Permit(cy.ctx, c).ok());

  auto args = PluginArgs::FromYaml("{reservations: 0}", "p.yaml", "plugins[3].args");
  ASSERT_TRUE(args.ok());
  auto made = Backfill::Create(*args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("plugins[3].args.reservations: \"0\" must be >= 1"),
            std::string::npos);
}

}  // namespace
}  // namespace meridian::sched
