// Fill on hand-made nodes: the same pods whole, shared as the trace does, and
// as MIG slices, with the arithmetic in comments.
#include "mig/fractional.h"

#include <gtest/gtest.h>

#include "mig/test_catalog.h"

namespace meridian::mig {
namespace {

TracePod Share(int milli, int64_t cpu = 1000) { return {1, milli, cpu, 1024}; }

struct FillCase {
  Sharing how;
  int64_t placed, held_milli, idle_gpus;
  std::map<std::string, int64_t> profiles;
};

TEST(Fill, OneNodeTwoGpusThreeWays) {
  const std::vector<TraceNode> nodes = {{"G3", 2, 64000, 1 << 20, &Gpu("A100-80GB")}};
  const std::vector<TracePod> pods = {Share(460), Share(460), Share(460), Share(320)};
  const std::vector<FillCase> cases = {
      // One pod per GPU: 2 placed, 2,000 milli held.
      {Sharing::kWhole, 2, 2000, 0, {}},
      // 460 + 460 on GPU 0 (80 left), 460 + 320 on GPU 1 (220 left): all, 1,700 held.
      {Sharing::kShared, 4, 1700, 0, {}},
      // 460 -> 4g (ceil(3.22) = 4 compute), one per GPU: GPU 0 and GPU 1; the
      // third finds no 4g start and no empty GPU; 320 -> 3g (3 compute, 4
      // memory) at 4 beside a 4g: 3 placed, held 571 + 571 + 428 = 1,570.
      {Sharing::kMig, 3, 1570, 0, {{"4g.40gb", 2}, {"3g.40gb", 1}}},
  };
  for (const FillCase& c : cases) {
    FillResult r = Fill(nodes, pods, c.how);
    EXPECT_EQ(r.pods, 4);
    EXPECT_EQ(r.fractional_pods, 4);
    EXPECT_EQ(r.placed, c.placed) << static_cast<int>(c.how);
    EXPECT_EQ(r.held_milli, c.held_milli) << static_cast<int>(c.how);
    EXPECT_EQ(r.idle_gpus, c.idle_gpus) << static_cast<int>(c.how);
    EXPECT_EQ(r.profiles, c.profiles) << static_cast<int>(c.how);
    EXPECT_EQ(r.gpus, 2);
  }
}

TEST(Fill, SmallSharesPackSevenToAGpuWithMig) {
  // 7 pods of 100 milli: 1g each (ceil(0.7) compute, ceil(0.8) memory), all on GPU 0.
  const std::vector<TraceNode> nodes = {{"G2", 2, 64000, 1 << 20, &Gpu("A100-40GB")}};
  std::vector<TracePod> pods(8, Share(100));
  FillResult r = Fill(nodes, pods, Sharing::kMig);
  EXPECT_EQ(r.placed, 8);
  EXPECT_EQ(r.mig_gpus, 2);  // the 8th 1g goes to GPU 1 (a 1g cannot start at slice 7)
  EXPECT_EQ(r.profiles.at("1g.5gb"), 8);
  EXPECT_EQ(r.held_milli, 8 * 142);
  FillResult s = Fill(nodes, pods, Sharing::kShared);
  EXPECT_EQ(s.placed, 8);
  EXPECT_EQ(s.idle_gpus, 1);  // 800 milli on GPU 0
}

TEST(Fill, CpuMemoryAndNodesWithoutMig) {
  // A T4 node (no MIG): a share takes a whole GPU under kMig; a pod needing
  // more CPU than any node has is not placed; an 8-GPU pod needs 8 empty GPUs.
  const std::vector<TraceNode> nodes = {{"T4", 2, 8000, 1 << 16, nullptr},
                                        {"G2", 8, 96000, 1 << 20, &Gpu("A100-40GB")}};
  const std::vector<TracePod> pods = {Share(300, 4000), Share(300, 200000), {8, 1000, 8000, 1024},
                                      Share(300, 4000)};
  FillResult mig = Fill(nodes, pods, Sharing::kMig);
  // pod 0 -> a 3g on the G2 node (MIG first); pod 1: no CPU; pod 2: the G2
  // node has 7 empty GPUs, not 8: refused; pod 3 -> a 3g beside pod 0's.
  EXPECT_EQ(mig.placed, 2);
  EXPECT_EQ(mig.profiles.at("3g.20gb"), 2);
  FillResult whole = Fill(nodes, pods, Sharing::kWhole);
  // pod 0 -> T4 node (fewest free GPUs: 2 < 8); pod 2 -> the G2 node; pod 3 -> T4.
  EXPECT_EQ(whole.placed, 3);
  EXPECT_EQ(whole.idle_gpus, 0);
  EXPECT_DOUBLE_EQ(whole.unallocated_gpus(), 0.0);
}

}  // namespace
}  // namespace meridian::mig
