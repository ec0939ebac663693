// Repartition proposals on hand-made H100-80GB GPUs.
#include "mig/repartition.h"

#include <gtest/gtest.h>

#include "mig/test_catalog.h"

namespace meridian::mig {
namespace {

const catalog::GpuModel& H100() { return Gpu("H100-80GB"); }

RunningInstance Held(const char* profile, int start, int64_t holder, int64_t cost) {
  return {{ProfileIndex(H100(), profile), start}, holder, cost};
}

WaitingRequest Wait(int64_t id, const char* profile) {
  return {id, NeedOf(*catalog::FindMigProfile(H100(), profile))};
}

std::string Names(const Layout& l) { return Describe(H100(), l); }

TEST(ProposeRepartition, MovesTheOneInstanceThatBlocksA4g) {
  // 1g at 0 (job 1) and at 4 (job 2); a 4g (start 0 only) waits. Draining job 1
  // and placing it again at 5 frees slices 0-3: 4g@0, 1g@4, 1g@5.
  std::vector<GpuNow> gpus = {{&H100(), {Held("1g.10gb", 0, 1, 600), Held("1g.10gb", 4, 2, 60)}}};
  std::vector<Proposal> p = ProposeRepartition(gpus, {Wait(10, "4g.40gb")});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].gpu, 0u);
  ASSERT_EQ(p[0].drained.size(), 1u);
  EXPECT_EQ(p[0].drained[0].holder, 1);
  EXPECT_EQ(p[0].cost, 600);
  EXPECT_EQ(Names(p[0].moved), "1g.10gb@5");
  EXPECT_EQ(p[0].moved_to, (std::vector<size_t>{0}));  // the same GPU
  ASSERT_EQ(p[0].served.size(), 1u);
  EXPECT_EQ(p[0].served[0].first, 10);
  EXPECT_EQ(p[0].gained, 1);
  EXPECT_EQ(Names(p[0].before), "1g.10gb@0 1g.10gb@4");
  EXPECT_EQ(Names(p[0].after), "4g.40gb@0 1g.10gb@4 1g.10gb@5");
  EXPECT_TRUE(CheckLayout(H100(), Named(H100(), p[0].after)).ok());
}

TEST(ProposeRepartition, FewestDrainsThenTheCheapest) {
  // 1g at 1 (job 1, cost 900) and at 5 (job 2, cost 100) block both 3g starts;
  // two 3g wait. Draining both gains 1 (the two 1g take slices 0-1 beside a
  // 3g at 4, no room for a second 3g); draining either one also gains 1: one
  // drain, and job 2 is the cheaper: 3g@4 and job 2 moved to 0.
  std::vector<GpuNow> gpus = {{&H100(), {Held("1g.10gb", 1, 1, 900), Held("1g.10gb", 5, 2, 100)}}};
  std::vector<Proposal> p = ProposeRepartition(gpus, {Wait(10, "3g.40gb"), Wait(11, "3g.40gb")});
  ASSERT_EQ(p.size(), 1u);
  ASSERT_EQ(p[0].drained.size(), 1u);
  EXPECT_EQ(p[0].drained[0].holder, 2);
  EXPECT_EQ(p[0].cost, 100);
  EXPECT_EQ(Names(p[0].after), "1g.10gb@0 1g.10gb@1 3g.40gb@4");
  EXPECT_EQ(p[0].served.size(), 1u);
}

TEST(ProposeRepartition, NothingWhenTheRequestFitsOrNeverCan) {
  // A 3g fits at 4 beside a 1g at 0 with no drain: no proposal.
  std::vector<GpuNow> a = {{&H100(), {Held("1g.10gb", 0, 1, 5)}}};
  EXPECT_TRUE(ProposeRepartition(a, {Wait(10, "3g.40gb")}).empty());
  // A 7g never fits beside an instance that must stay on the GPU.
  EXPECT_TRUE(ProposeRepartition(a, {Wait(10, "7g.80gb")}).empty());
  // No waiting work: nothing to do.
  std::vector<GpuNow> b = {{&H100(), {Held("1g.10gb", 1, 1, 5), Held("1g.10gb", 5, 2, 5)}}};
  EXPECT_TRUE(ProposeRepartition(b, {}).empty());
}

TEST(ProposeRepartition, OneProposalPerGpuTheCheapestFirstAndTheLimit) {
  // Two GPUs each blocked for a 4g by a 1g at 0; two 4g wait: both GPUs are
  // proposed, the cheaper drain first; with max_proposals 1 only that one.
  std::vector<GpuNow> gpus = {{&H100(), {Held("1g.10gb", 0, 1, 500)}},
                              {&H100(), {Held("1g.10gb", 0, 2, 50)}}};
  std::vector<WaitingRequest> w = {Wait(10, "4g.40gb"), Wait(11, "4g.40gb")};
  std::vector<Proposal> p = ProposeRepartition(gpus, w);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].gpu, 1u);
  EXPECT_EQ(p[1].gpu, 0u);
  EXPECT_NE(p[0].served[0].first, p[1].served[0].first);  // each request served once
  std::vector<Proposal> one = ProposeRepartition(gpus, w, {.max_proposals = 1});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].gpu, 1u);
  // Only one 4g waits: the second GPU gains nothing once the first serves it.
  std::vector<Proposal> single = ProposeRepartition(gpus, {Wait(10, "4g.40gb")});
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].gpu, 1u);
}

TEST(ProposeRepartition, MovesToAnotherGpuToMakeRoomForA7g) {
  // A 7g needs an empty GPU. GPU 0 holds one 1g (job 1, cost 10), GPU 1 one
  // 1g (job 2, cost 500): moving job 1 beside job 2 (slice 1 of GPU 1, best
  // fit) empties GPU 0 for the 7g; the other way round costs 500.
  std::vector<GpuNow> gpus = {{&H100(), {Held("1g.10gb", 0, 1, 10)}},
                              {&H100(), {Held("1g.10gb", 0, 2, 500)}}};
  std::vector<Proposal> p = ProposeRepartition(gpus, {Wait(10, "7g.80gb")});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].gpu, 0u);
  ASSERT_EQ(p[0].drained.size(), 1u);
  EXPECT_EQ(p[0].drained[0].holder, 1);
  EXPECT_EQ(p[0].moved_to, (std::vector<size_t>{1}));
  EXPECT_EQ(Names(p[0].moved), "1g.10gb@1");
  EXPECT_EQ(Names(p[0].after), "7g.80gb@0");
  EXPECT_EQ(p[0].cost, 10);
  // Moves kept on their own GPU: nothing can make room for the 7g.
  EXPECT_TRUE(ProposeRepartition(gpus, {Wait(10, "7g.80gb")}, {.move_elsewhere = false}).empty());
  // A third GPU that is already full cannot take the move: the same answer.
  gpus.push_back({&H100(), {Held("7g.80gb", 0, 3, 1)}});
  p = ProposeRepartition(gpus, {Wait(10, "7g.80gb")});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].moved_to, (std::vector<size_t>{1}));
}

}  // namespace
}  // namespace meridian::mig
