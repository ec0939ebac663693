#include "sched/plugins/deadline_urgency.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

QueuedJob WithDeadline(const testing::World& w, uint32_t id, std::optional<int64_t> after_s,
                       int64_t run_s = 7200) {
  JobSpec spec = TwoHourJob("j", 1, 40);
  spec.work.duration_s = run_s;
  if (after_s) spec.deadline.after_submit_s = *after_s;
  return Queue(w, spec, id);
}

TEST(DeadlineUrgencyTest, LatestStartFirst) {
  testing::World w = MakeWorld();
  // latest start = deadline - run on the fastest model (a stated duration runs as long on all)
  QueuedJob a = WithDeadline(w, 1, 10 * 3600);         // now + 10 h - 2 h = now + 8 h
  QueuedJob b = WithDeadline(w, 2, 6 * 3600, 3600);    // now + 6 h - 1 h = now + 5 h
  QueuedJob c = WithDeadline(w, 3, 9 * 3600, 3600);    // now + 9 h - 1 h = now + 8 h
  QueuedJob none = WithDeadline(w, 4, std::nullopt);
  QueuedJob none2 = WithDeadline(w, 5, std::nullopt);
  EXPECT_EQ(DeadlineUrgency::LatestStart(a), kNow + 8 * 3600);
  EXPECT_EQ(DeadlineUrgency::LatestStart(b), kNow + 5 * 3600);
  EXPECT_FALSE(DeadlineUrgency::LatestStart(none));
  DeadlineUrgency exact(0), hourly(6 * 3600);
  struct Case {
    const char* name;
    const DeadlineUrgency& p;
    const QueuedJob& x;
    const QueuedJob& y;
    std::weak_ordering want;
  } cases[] = {
      {"+5 h before +8 h", exact, b, a, std::weak_ordering::less},
      {"+8 h and +8 h tie", exact, a, c, std::weak_ordering::equivalent},
      {"a deadline before none", exact, a, none, std::weak_ordering::less},
      {"none after a deadline", exact, none, b, std::weak_ordering::greater},
      {"two without tie", exact, none, none2, std::weak_ordering::equivalent},
      // steps of 6 h: +5 h in step 0, +8 h in step 1
      {"6 h steps: +5 h before +8 h", hourly, b, a, std::weak_ordering::less},
  };
  for (const Case& k : cases) EXPECT_EQ(k.p.Compare(w.At(), k.x, k.y), k.want) << k.name;

  auto args = PluginArgs::FromYaml("{step: soon}", "p.yaml", "plugins[3].args");
  ASSERT_TRUE(args.ok());
  auto made = DeadlineUrgency::Create(*args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("plugins[3].args.step: \"soon\""), std::string::npos)
      << made.status().message();
}

}  // namespace
}  // namespace meridian::sched
