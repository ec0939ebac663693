// MIG repartitioning between cycles on a repartitionable fleet, and the
// fragmentation samples.
#include "sim/mig_cycle.h"

#include <gtest/gtest.h>

#include "sim/test_world.h"

namespace meridian::sim {
namespace {

using testing::AddJob;

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto c = catalog::Catalog::LoadEmbedded();
  return *c;
}

FleetSpec OneMigGpu(bool repartitionable) {
  FleetSpec f;
  ClusterSpec c;
  c.name = "flex";
  c.region = "gcp:us-central1";
  c.gpu_hour = Money::FromDollars(1.10);
  c.repartitionable = repartitionable;
  c.nodes.push_back({1, "H100-80GB", 1, 64, 512, {"7g.80gb"}, "mig-", {}, {}});
  f.clusters = {c};
  f.elastic = false;
  return f;
}

JobSpec Slice(double vram) {
  JobSpec j = testing::FixedJob(1, "H100-80GB", vram);
  j.resources.mig = true;
  j.preemptible = true;
  return j;
}

PolicyRun Replay(const Trace& t, const World& w, bool repartition) {
  auto profile = sched::EmbeddedProfile("default");
  JobShapes shapes = JobShapes::Make(t, *w.catalog);
  EngineOptions o;
  o.mig_repartition = repartition;
  auto run = Simulate(t, shapes, w, *profile, "default", o);
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  return std::move(run).value();
}

// Seven 1g.10gb jobs fill the GPU (slices 0-6) at t = 0; five end at 100 s,
// s0 and s4 (at slices 0 and 4) run for 10,000 s; a 3g.40gb job arrives at
// 200 s: both 3g starts (0, 4) are blocked. Without repartitioning it waits
// for s0 to end (starts at 10,000 s). With it, one drain (s4: 200 s run, no
// checkpoint yet: 200 x 1/7 = 28 GPU-seconds lost) moves s4 off slices 4-7
// and the 3g starts at once; s4 runs again from its start, so it ends later.
TEST(MigCycle, RepartitionStartsTheBlockedJobEarlier) {
  World w = testing::MakeWorld(Embedded(), OneMigGpu(true));
  Trace t;
  for (int i = 0; i < 7; ++i) {
    AddJob(t, Slice(8), "s" + std::to_string(i), 0, (i == 0 || i == 4) ? 10000 : 100);
  }
  AddJob(t, Slice(35), "big", 200, 1000);
  PolicyRun with = Replay(t, w, true);
  PolicyRun without = Replay(t, w, false);
  EXPECT_EQ(without.jobs[7].start_s, 10000);
  EXPECT_EQ(with.jobs[7].start_s, 200);
  EXPECT_EQ(with.mig.drains, 1);
  EXPECT_EQ(with.mig.drain_gpu_s, 28);
  EXPECT_EQ(with.mig.gpus_repartitioned, 1);
  EXPECT_EQ(without.mig.drains, 0);
  EXPECT_EQ(with.jobs[4].preemptions, 1);
  EXPECT_GT(with.jobs[4].end_s, without.jobs[4].end_s);
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    EXPECT_EQ(with.jobs[i].state, JobState::kDone) << i;
    EXPECT_EQ(without.jobs[i].state, JobState::kDone) << i;
  }
  // Fragmentation: without repartitioning, from 200 s to 10,000 s the
  // waiting 3g can use none of the 6 free memory slices (1-3 and 5-7: both 3g
  // starts blocked): 6 x 9,800 slice-seconds; with it, none is stranded.
  EXPECT_GT(with.mig.samples, 0);
  EXPECT_EQ(without.mig.unallocatable_demand_s, 6 * 9800);
  EXPECT_EQ(with.mig.unallocatable_demand_s, 0);
}

// The same trace on a cluster that is not repartitionable: no drains, ever.
TEST(MigCycle, NoDrainsWithoutTheFleetKey) {
  World w = testing::MakeWorld(Embedded(), OneMigGpu(false));
  Trace t;
  AddJob(t, Slice(8), "a", 0, 1000);
  AddJob(t, Slice(35), "b", 10, 1000);
  PolicyRun r = Replay(t, w, true);
  EXPECT_EQ(r.mig.drains, 0);
  EXPECT_EQ(r.jobs[0].state, JobState::kDone);
}

}  // namespace
}  // namespace meridian::sim
