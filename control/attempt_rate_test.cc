// An attempt's hourly rate, as the daemon bills it when it ends and the
// dashboard shows it while it runs: the same rates `simulate` bills a run at
// (sched::FleetHourRate). Expected figures by hand in each comment.
#include "control/attempt_rate.h"

#include <gtest/gtest.h>

#include "control/reconciler.h"

namespace meridian::control {
namespace {

sched::Cluster Rates() {
  ReconcilerOptions o;
  o.gpu_hour_usd = 2.0;  // the CPU rates left at the defaults, GCP N2's list rates
  return DaemonRates(o);
}

TEST(AttemptRate, WholeGpusOverEveryNodeOfAGang) {
  JobRow row;
  // Two nodes, 8 GPUs each (0xff): 16 x $2 = $32/h; their vCPUs are not billed.
  row.allocation_json =
      R"({"nodes":[{"node":"a","gpus":255,"vcpus":96,"ram_mib":1024},)"
      R"({"node":"b","gpus":255,"vcpus":96,"ram_mib":1024}]})";
  const std::vector<HeldShare> held = HeldShares(row, nullptr);
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[1].node, "b");
  EXPECT_EQ(AttemptHourRate(held, Rates()), Money::FromDollars(32.0));
}

TEST(AttemptRate, AMigSliceIsItsMemorySlicesShareOfAGpu) {
  JobRow row;
  // A 3g.40gb slice spans 4 of a GPU's 8 memory slices: 4/8 x $2 = $1/h, as
  // `simulate` bills it (it was billed as a whole GPU, $2).
  row.allocation_json = R"({"nodes":[{"node":"a","gpus":0,"vcpus":4,"ram_mib":0,"mig":[0,0,4]}]})";
  const std::vector<HeldShare> held = HeldShares(row, nullptr);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].gpu_milli, 500);
  EXPECT_EQ(AttemptHourRate(held, Rates()), Money::FromDollars(1.0));
}

TEST(AttemptRate, ARunOnCpusPaysForItsVcpusAndRam) {
  JobRow row;
  // 4 vCPUs x $0.031611 + 8 GiB x $0.004237 = $0.126444 + $0.033896 = $0.16034/h.
  row.allocation_json = R"({"nodes":[{"node":"cpu0","gpus":0,"vcpus":4,"ram_mib":8192}]})";
  EXPECT_EQ(AttemptHourRate(HeldShares(row, nullptr), Rates()), Money::FromMicros(160340));

  // Without a stored allocation: the placement's node with the spec's vCPUs
  // and RAM; its GPUs when it lists some (2 x $2).
  JobRow bare;
  bare.placement.node = "cpu0";
  JobSpec spec;
  spec.resources.vcpus = 4;
  spec.resources.ram_gib = 8;
  EXPECT_EQ(AttemptHourRate(HeldShares(bare, &spec), Rates()), Money::FromMicros(160340));
  bare.placement.gpus = {0, 1};
  EXPECT_EQ(AttemptHourRate(HeldShares(bare, &spec), Rates()), Money::FromDollars(4.0));
}

}  // namespace
}  // namespace meridian::control
