#include "sched/plugins/tier_sort.h"

#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

TEST(TierSortTest, ComparesTiers) {
  testing::World w = MakeWorld();
  struct Case {
    Priority a, b;
    std::weak_ordering want;
  } cases[] = {
      {Priority::kCritical, Priority::kHigh, std::weak_ordering::less},
      {Priority::kHigh, Priority::kNormal, std::weak_ordering::less},
      {Priority::kNormal, Priority::kLow, std::weak_ordering::less},
      {Priority::kLow, Priority::kCritical, std::weak_ordering::greater},
      {Priority::kNormal, Priority::kNormal, std::weak_ordering::equivalent},
  };
  TierSort sort;
  for (const Case& c : cases) {
    QueuedJob a = Queue(w, TwoHourJob("a", 1, 10, c.a), 1);
    QueuedJob b = Queue(w, TwoHourJob("b", 1, 10, c.b), 2);
    EXPECT_EQ(sort.Compare(w.At(), a, b), c.want) << ToString(c.a) << " vs " << ToString(c.b);
  }
}

TEST(TierSortTest, QueueIsTierThenSubmissionTime) {
  testing::World w = MakeWorld();
  // Submission times: id 1 at +30 s (low), 2 at +20 (normal), 3 at +10
  // (normal), 4 at +40 (critical), 5 at +10 (normal, later in the trace than 3).
  std::vector<QueuedJob> jobs = {
      Queue(w, TwoHourJob("j1", 1, 10, Priority::kLow), 1, testing::kNow + 30),
      Queue(w, TwoHourJob("j2", 1, 10, Priority::kNormal), 2, testing::kNow + 20),
      Queue(w, TwoHourJob("j3", 1, 10, Priority::kNormal), 3, testing::kNow + 10),
      Queue(w, TwoHourJob("j4", 1, 10, Priority::kCritical), 4, testing::kNow + 40),
      Queue(w, TwoHourJob("j5", 1, 10, Priority::kNormal), 5, testing::kNow + 10),
  };
  auto profile = ParseProfile("name: t\nplugins:\n  - name: tier_sort\n  - name: gpu_fit\n", "t.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<const QueuedJob*> ptrs;
  for (const auto& j : jobs) ptrs.push_back(&j);
  std::vector<uint32_t> order;
  for (const QueuedJob* j : (*s)->SortQueue(w.At(), ptrs)) order.push_back(j->id.value());
  EXPECT_EQ(order, (std::vector<uint32_t>{4, 3, 5, 2, 1}));
}

}  // namespace
}  // namespace meridian::sched
