// The CPU model (sim/cpu_model.h) and the two vCPU policies in a replay.
#include "sim/cpu_model.h"

#include <gtest/gtest.h>

#include "sim/test_world.h"

namespace meridian::sim {
namespace {

TEST(CpuModel, TimeFactorIsTheSlowerOfLoaderAndGpu) {
  CpuProfile p{0.4, 0.9};
  // At its GPU share the recorded time holds: max(0.6, 0.1 + 0.9) = 1.
  EXPECT_DOUBLE_EQ(CpuTimeFactor(p, 16, 16), 1.0);
  // Twice the share: loader 0.1 + 0.9 / 2 = 0.55 < GPU 0.6: the GPU bounds it.
  EXPECT_DOUBLE_EQ(CpuTimeFactor(p, 16, 32), 0.6);
  // Half the share: loader 0.1 + 0.9 x 2 = 1.9: CPUs short, 1.9x slower.
  EXPECT_DOUBLE_EQ(CpuTimeFactor(p, 16, 8), 1.9);
  // Storage-bound (k = 0): cores change nothing.
  EXPECT_DOUBLE_EQ(CpuTimeFactor({0.3, 0}, 16, 2), 1.0);
  // No profile: recorded speed.
  EXPECT_DOUBLE_EQ(CpuTimeFactor({}, 16, 1), 1.0);
}

TEST(CpuModel, SensitiveVcpusKeepTheLoaderUp) {
  // c = k x share / (k - f) = 0.9 x 16 / 0.5 = 28.8 -> 29, under the cap 32.
  EXPECT_EQ(SensitiveVcpus({0.4, 0.9}, 16, 2.0), 29);
  // f = 0: balanced at its share.
  EXPECT_EQ(SensitiveVcpus({0, 0.5}, 16, 2.0), 16);
  // k = 0: cores do not help: one is enough.
  EXPECT_EQ(SensitiveVcpus({0.3, 0}, 16, 2.0), 1);
  // k <= f: never catches up: the cap, 2 x 16.
  EXPECT_EQ(SensitiveVcpus({0.6, 0.5}, 16, 2.0), 32);
}

// One node of 8 H100s and 96 vCPUs (12 per GPU). A (4 GPUs, 2 h recorded)
// waits for input a quarter of each step, its loader all CPU (f 0.25, k 1);
// B (4 GPUs, 2 h) has a loader that cores do not speed up (f 0, k 0).
TEST(CpuModel, SensitivityPolicyGivesCpusWhereTheyHelp) {
  Trace t;
  testing::AddJob(t, testing::FixedJob(4, "H100-80GB"), "A", 0, 7200);
  testing::AddJob(t, testing::FixedJob(4, "H100-80GB"), "B", 0, 7200);
  t.jobs[0].cpu = {0.25, 1.0};
  t.jobs[1].cpu = {0.0, 0.0};
  World w = testing::TestWorld(testing::OneCluster(1, 8));
  JobShapes shapes = JobShapes::Make(t, *w.catalog);
  auto run = [&](sched::CpuAllocation a) {
    auto profile = sched::EmbeddedProfile("default");
    EXPECT_TRUE(profile.ok());
    profile->options.cpu_allocation = a;
    auto r = Simulate(t, shapes, w, *profile, "p", EngineOptions{});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(r).value();
  };
  // GPU share: both get 48 vCPUs and run their recorded 2 h.
  PolicyRun share = run(sched::CpuAllocation::kGpuShare);
  EXPECT_EQ(share.jobs[0].end_s, 7200);
  EXPECT_EQ(share.jobs[1].end_s, 7200);
  // Sensitivity: A gets 1 x 48 / (1 - 0.25) = 64 vCPUs: loader 48 / 64 =
  // 0.75 = the GPU's 0.75: 5400 s. B gets 1 and runs its 2 h; 65 <= 96 fit.
  PolicyRun sens = run(sched::CpuAllocation::kSensitivity);
  EXPECT_EQ(sens.jobs[0].start_s, 0);
  EXPECT_EQ(sens.jobs[0].end_s, 5400);
  EXPECT_EQ(sens.jobs[1].start_s, 0);
  EXPECT_EQ(sens.jobs[1].end_s, 7200);
}

}  // namespace
}  // namespace meridian::sim
