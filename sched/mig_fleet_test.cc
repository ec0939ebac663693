// The MIG planner over a fleet and ledger: fragmentation of fixed and
// free-form GPUs, and drains proposed only on repartitionable clusters.
#include "sched/mig_fleet.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;

void Hold(testing::World& w, uint32_t job, uint32_t node, MigShape shape, UnixSeconds start,
          int64_t interval_s) {
  Allocation a;
  a.job = JobId(job);
  a.nodes.push_back({NodeId(node), 0, MigShare{0, shape}, 0, 0});
  a.start = start;
  a.end = start + 7200;
  a.checkpoint_interval_s = interval_s;
  ASSERT_TRUE(w.ledger.Reserve(a).ok());
}

FleetSpec FlexFleet(bool repartitionable) {
  FleetSpec f;
  ClusterSpec c;
  c.name = "flex";
  c.region = "gcp:us-central1";
  c.gpu_hour = Money::FromDollars(1.10);
  c.repartitionable = repartitionable;
  c.nodes.push_back({1, "H100-80GB", 1, 16, 128, {"7g.80gb"}, "mig-", {}, {}});
  f.clusters = {c};
  return f;
}

QueuedJob MigJob(const testing::World& w, uint32_t id, double vram) {
  JobSpec spec = testing::TwoHourJob("m" + std::to_string(id), 1, vram);
  spec.resources.mig = true;
  spec.resources.gpu_models = {"H100-80GB"};
  return testing::Queue(w, spec, id);
}

// 1g.10gb held at 0 (job 1, since 1,000 s, checkpoints every 600 s: 400 s
// lost) and at 4 (job 2, since 100 s, no checkpoints: 100 s lost); a 3g.40gb
// job waits, both 3g starts blocked. Costs: 400 x 1/7 = 57 and 100 x 1/7 = 14
// GPU-seconds: drain job 2 (it moves to slice 1), the 3g goes to 4-7.
TEST(MigFleet, DrainsTheCheapestBlockerOnARepartitionableGpu) {
  testing::World w = testing::MakeWorld(FlexFleet(true), false);
  Hold(w, 1, 0, {0, 1}, kNow - 1000, 600);
  Hold(w, 2, 0, {4, 1}, kNow - 100, 0);
  QueuedJob big = MigJob(w, 3, 35);
  ASSERT_GE(big.demands[0].mig_profile, 0);
  ASSERT_EQ(w.catalog->gpus()[big.demands[0].model.index()].mig_profiles[big.demands[0].mig_profile].name,
            "3g.40gb");
  std::vector<const QueuedJob*> queue = {&big};
  MigRepartition r = ProposeMigRepartition(*w.fleet, w.ledger, queue, kNow);
  ASSERT_EQ(r.drains.size(), 1u);
  EXPECT_EQ(r.drains[0].job, JobId(2));
  EXPECT_EQ(r.drains[0].cost_gpu_s, 14);
  EXPECT_EQ(r.drains[0].shape, (MigShape{4, 1}));
  EXPECT_EQ(r.gpus_changed, 1);
  EXPECT_EQ(r.requests_served, 1);
  // Skipping job 2 (drained a moment ago): job 1 is drained instead.
  MigRepartition s = ProposeMigRepartition(*w.fleet, w.ledger, queue, kNow, nullptr,
                                           [](JobId j) { return j == JobId(2); });
  ASSERT_EQ(s.drains.size(), 1u);
  EXPECT_EQ(s.drains[0].job, JobId(1));
  EXPECT_EQ(s.drains[0].cost_gpu_s, 57);
  // Fragmentation: 6 memory / 5 compute slices free, all usable by some
  // profile, none by the waiting 3g.
  MigFleetFragmentation f = MeasureMigFragmentation(*w.fleet, w.ledger, queue);
  EXPECT_EQ(f.structural, (mig::Fragmentation{1, 6, 6, 5, 5}));
  EXPECT_EQ(f.demand, (mig::Fragmentation{1, 6, 0, 5, 0}));
}

TEST(MigFleet, NoDrainsOutsideRepartitionableClusters) {
  testing::World w = testing::MakeWorld(FlexFleet(false), false);
  EXPECT_FALSE(HasRepartitionableMig(*w.fleet));
  Hold(w, 1, 0, {0, 8}, kNow - 10, 0);  // the fixed 7g layout, held
  QueuedJob small = MigJob(w, 3, 8);
  std::vector<const QueuedJob*> queue = {&small};
  EXPECT_TRUE(ProposeMigRepartition(*w.fleet, w.ledger, queue, kNow).drains.empty());
  EXPECT_TRUE(HasRepartitionableMig(*testing::MakeWorld(FlexFleet(true), false).fleet));
}

// SmallFleetSpec's node 2: 2 x H100 laid out 3g.40gb + 1g.20gb + 1g.10gb +
// 1g.10gb (6 of 7 compute slices). Empty: per GPU 8 memory / 7 compute free,
// 8 / 6 allocatable (the layout leaves one compute slice unused). With the
// 3g held on GPU 0 and only a 3g waiting: GPU 0 has 4 memory / 4 compute
// free and no 3g instance free; GPU 1's 3g (4 / 3) holds it.
TEST(MigFleet, FixedLayoutFragmentation) {
  testing::World w = testing::MakeWorld(testing::SmallFleetSpec(), false);
  MigFleetFragmentation empty = MeasureMigFragmentation(*w.fleet, w.ledger, {});
  EXPECT_EQ(empty.structural, (mig::Fragmentation{2, 16, 16, 14, 12}));
  // The 3g of GPU 0 sits where the layout placed it.
  uint8_t start = 0;
  for (const MigInstance& m : w.fleet->node(NodeId(2)).mig) {
    if (m.shape.span == 4) start = m.shape.start;
  }
  Hold(w, 1, 2, {start, 4}, kNow - 10, 0);
  QueuedJob big = MigJob(w, 3, 35);
  std::vector<const QueuedJob*> queue = {&big};
  MigFleetFragmentation f = MeasureMigFragmentation(*w.fleet, w.ledger, queue);
  EXPECT_EQ(f.demand, (mig::Fragmentation{2, 12, 4, 11, 3}));
  EXPECT_EQ(f.structural, (mig::Fragmentation{2, 12, 12, 11, 9}));
}

}  // namespace
}  // namespace meridian::sched

namespace meridian::sched {
namespace {

// A fractional job's slice follows its share (mig::NeedForShare), on the test
// catalog's H100 (1g.10gb, 1g.20gb, 3g.40gb, 7g.80gb): 460 milli -> 4
// compute, 4 memory: only the 7g has 4 compute; 100 -> 1 / 1: 1g.10gb; 200 ->
// 2 / 2: 3g.40gb; 650 -> 7g.80gb. The estimator alone sizes this small job to
// 1g.10gb. A job without a MIG demand is left as it is.
TEST(MigFleet, SizeMigByShare) {
  testing::World w = testing::MakeWorld(testing::SmallFleetSpec(), false);
  const catalog::GpuModel& h100 = w.catalog->gpus()[testing::Model(w, "H100-80GB").index()];
  struct Case {
    int milli;
    const char* profile;
    int span;
  };
  for (const Case& c : {Case{460, "7g.80gb", 8}, Case{100, "1g.10gb", 1}, Case{650, "7g.80gb", 8},
                        Case{200, "3g.40gb", 4}}) {
    JobSpec spec = testing::TwoHourJob("f", 1, 4);
    spec.resources.mig = true;
    spec.resources.gpu_models = {"H100-80GB"};
    QueuedJob q = testing::Queue(w, spec, 1);
    ASSERT_EQ(h100.mig_profiles[q.demands[0].mig_profile].name, "1g.10gb");
    SizeMigByShare(q, c.milli, *w.fleet);
    EXPECT_EQ(h100.mig_profiles[q.demands[0].mig_profile].name, c.profile) << c.milli;
    EXPECT_EQ(q.demands[0].mig_span, c.span) << c.milli;
    // A stated duration (a service's) lasts as long on any slice.
    EXPECT_EQ(q.demands[0].mig_run_hours, q.demands[0].run_hours);
  }
  JobSpec whole = testing::TwoHourJob("w", 1, 4);
  QueuedJob q = testing::Queue(w, whole, 2);
  const QueuedJob before = q;
  SizeMigByShare(q, 460, *w.fleet);
  EXPECT_EQ(q.demands[0].mig_profile, before.demands[0].mig_profile);
}

// Decode of a 1B model at batch 1 reads its 2 GB of weights per token: bound
// by memory bandwidth. Sized up from 1g.10gb (1 of 8 memory slices) to
// 3g.40gb (4 of 8) by a 200-milli share, it runs 4x faster, not 3x (compute
// 1 -> 3 of 7): 8/1 = 8x its whole-GPU hours on 1g.10gb, 8/4 = 2x on 3g.40gb.
TEST(MigFleet, SizeMigByShareScalesBandwidthBoundDecodeByMemorySlices) {
  testing::World w = testing::MakeWorld(testing::SmallFleetSpec(), false);
  const catalog::GpuModel& h100 = w.catalog->gpus()[testing::Model(w, "H100-80GB").index()];
  JobSpec spec;
  spec.name = "decode";
  spec.kind = WorkloadKind::kBatchInference;
  spec.model.params_b = 1;
  spec.model.batch = 1;
  spec.model.seq_len = 1024;
  spec.work.form = Work::Form::kTokens;
  spec.work.tokens = 1e8;
  spec.resources.gpus = 1;
  spec.resources.mig = true;
  spec.resources.gpu_models = {"H100-80GB"};
  QueuedJob q = testing::Queue(w, spec, 1);
  const ModelDemand& d = q.demands[0];
  ASSERT_EQ(h100.mig_profiles[d.mig_profile].name, "1g.10gb");
  ASSERT_TRUE(d.mig_bandwidth_bound);
  EXPECT_FLOAT_EQ(d.mig_run_hours, d.run_hours * 8);
  SizeMigByShare(q, 200, *w.fleet);
  EXPECT_EQ(h100.mig_profiles[d.mig_profile].name, "3g.40gb");
  EXPECT_FLOAT_EQ(d.mig_run_hours, d.run_hours * 2);
}

}  // namespace
}  // namespace meridian::sched
