// FIFO semantics as the literature uses them, on a trace replayed onto a
// fixed fleet with fixed durations: exact start and end times, worked out by
// hand below. One node of 8 GPUs, no elastic capacity:
//   A  t=0    4 GPUs  2 h        B  t=60   8 GPUs  1 h
//   C  t=120  4 GPUs  1 h        D  t=180  2 GPUs  3 h
#include <gtest/gtest.h>

#include "sim/test_world.h"

namespace meridian::sim {
namespace {

using testing::AddJob;
using testing::FixedJob;

Trace FourJobs() {
  Trace t;
  AddJob(t, FixedJob(4, "H100-80GB"), "A", 0, 7200);
  AddJob(t, FixedJob(8, "H100-80GB"), "B", 60, 3600);
  AddJob(t, FixedJob(4, "H100-80GB"), "C", 120, 3600);
  AddJob(t, FixedJob(2, "H100-80GB"), "D", 180, 10800);
  return t;
}

struct Times {
  int64_t start, end;
};

void ExpectTimes(const PolicyRun& run, const std::vector<Times>& want) {
  ASSERT_EQ(run.jobs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(run.jobs[i].state, JobState::kDone) << "job " << i;
    EXPECT_EQ(run.jobs[i].start_s, want[i].start) << "job " << "ABCD"[i] << " start";
    EXPECT_EQ(run.jobs[i].end_s, want[i].end) << "job " << "ABCD"[i] << " end";
  }
}

TEST(Fifo, StrictBlocksAtTheHead) {
  World w = testing::TestWorld(testing::OneCluster(1, 8));
  PolicyRun run = testing::RunPolicy(FourJobs(), w, "fifo-strict");
  // A runs 0-7200. B (8 GPUs) waits for A and blocks C and D behind it,
  // though 4 GPUs are free. A ends: B 7200-10800. B ends: C (4) and D (2)
  // both fit: C 10800-14400, D 10800-21600.
  ExpectTimes(run, {{0, 7200}, {7200, 10800}, {10800, 14400}, {10800, 21600}});
}

TEST(Fifo, GreedyStartsAnyJobThatFitsInOrder) {
  World w = testing::TestWorld(testing::OneCluster(1, 8));
  PolicyRun run = testing::RunPolicy(FourJobs(), w, "fifo-greedy");
  // A 0-7200. B waits. C fits beside A: 120-3720. D finds the node full
  // (A 4 + C 4) and waits. C ends at 3720: in order, B (8) still does not
  // fit, D (2) does: 3720-14520. A ends at 7200: 6 free, B still waits. D
  // ends at 14520: B 14520-18120.
  ExpectTimes(run, {{0, 7200}, {14520, 18120}, {120, 3720}, {3720, 14520}});
}

TEST(Fifo, BackfillReservesForTheHeadAndBackfills) {
  World w = testing::TestWorld(testing::OneCluster(1, 8));
  PolicyRun run = testing::RunPolicy(FourJobs(), w, "fifo-backfill");
  // A 0-7200. B waits and reserves the node from A's end, 7200. C (1 h)
  // ends at 3720 <= 7200, so it backfills: 120-3720. D waits (node full).
  // C ends at 3720: D (3 h) would run past 7200 on the reserved node:
  // refused, waits. A ends: B 7200-10800, then D 10800-21600.
  ExpectTimes(run, {{0, 7200}, {7200, 10800}, {120, 3720}, {10800, 21600}});
}

TEST(Fifo, ResultsDoNotDependOnTheSeed) {
  World w = testing::TestWorld(testing::OneCluster(1, 8));
  for (const char* p : {"fifo-strict", "fifo-greedy", "fifo-backfill"}) {
    PolicyRun a = testing::RunPolicy(FourJobs(), w, p, 1);
    PolicyRun b = testing::RunPolicy(FourJobs(), w, p, 99);
    for (size_t i = 0; i < a.jobs.size(); ++i) {
      EXPECT_EQ(a.jobs[i].start_s, b.jobs[i].start_s) << p;
      EXPECT_EQ(a.jobs[i].end_s, b.jobs[i].end_s) << p;
    }
  }
}

}  // namespace
}  // namespace meridian::sim
