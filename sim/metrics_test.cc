#include "sim/metrics.h"

#include <gtest/gtest.h>

#include "sim/hourly_carbon.h"
#include "sim/test_world.h"

namespace meridian::sim {
namespace {

TEST(Timeline, LevelsAreTimeWeightedMeansPerBucket) {
  Timeline t(100);
  t.Level(Timeline::kQueued, 0, 2);    // 2 over [0, 50)
  t.Level(Timeline::kQueued, 50, 4);   // 4 over [50, 150)
  t.Finish(150);
  EXPECT_DOUBLE_EQ(t.Value(Timeline::kQueued, 0), 3.0);  // (2 x 50 + 4 x 50) / 100
  EXPECT_DOUBLE_EQ(t.Value(Timeline::kQueued, 1), 2.0);  // 4 x 50 / 100
}

TEST(Timeline, AmountsSpreadEvenlyAndSurviveMerging) {
  Timeline t(10);
  t.Spread(Timeline::kSpend, 5, 25, 100);  // 5 per second: 25 + 50 + 25
  EXPECT_DOUBLE_EQ(t.Value(Timeline::kSpend, 0), 25);
  EXPECT_DOUBLE_EQ(t.Value(Timeline::kSpend, 1), 50);
  EXPECT_DOUBLE_EQ(t.Value(Timeline::kSpend, 2), 25);
  // Far beyond kMaxBuckets x 10 s: the width doubles, totals stay.
  t.Spread(Timeline::kSpend, 100000, 100010, 7);
  EXPECT_LE(t.buckets(), Timeline::kMaxBuckets);
  EXPECT_GT(t.bucket_s(), 10);
  double total = 0;
  for (size_t i = 0; i < t.buckets(); ++i) total += t.Value(Timeline::kSpend, i);
  EXPECT_DOUBLE_EQ(total, 107);
}

TEST(RegionHours, SplitsRunsIntoUtcHoursOfDay) {
  RegionHours h;
  // 2 GPUs from 23:30 on day 0 for 26 hours: one whole day in every hour,
  // plus 23:30-24:00 and 00:00-01:30 again.
  const int64_t a = 23 * 3600 + 1800;
  h.Add(RegionId(3), a, a + 26 * 3600, 2);
  const auto& row = h.by_region()[3];
  EXPECT_DOUBLE_EQ(row[23], 2 * (1 + 0.5));
  EXPECT_DOUBLE_EQ(row[0], 2 * (1 + 1));
  EXPECT_DOUBLE_EQ(row[1], 2 * (1 + 0.5));
  EXPECT_DOUBLE_EQ(row[12], 2);
  double sum = 0;
  for (double v : row) sum += v;
  EXPECT_DOUBLE_EQ(sum, 52);
}

TEST(HourlyCarbon, PrefixSumsEqualTheHourlyLoop) {
  World w = testing::TestWorld(testing::OneCluster(1, 8));
  const UnixSeconds start = testing::kStart + 1234;
  HourlyCarbon c(*w.market, testing::kStart);
  for (uint16_t r = 0; r < w.catalog->regions().size(); ++r) {
    for (int64_t len : {int64_t{60}, int64_t{5000}, int64_t{86400 * 9 + 77}}) {
      double loop = 0;
      for (UnixSeconds t = start; t < start + len; t += 60) {  // hours start on minutes here
        loop += w.market->CarbonGPerKwh(RegionId(r), t) *
                static_cast<double>(std::min<int64_t>(60, start + len - t)) / 3600.0;
      }
      EXPECT_NEAR(c.GramHoursPerKwh(RegionId(r), start, start + len), loop, 1e-6 * (1 + loop));
    }
  }
}

TEST(Percentile, NearestRank) {
  std::vector<int64_t> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(Percentile(v, 50), 5);
  EXPECT_EQ(Percentile(v, 99), 10);
  EXPECT_EQ(Percentile(v, 0), 1);
  EXPECT_EQ(Percentile({}, 50), 0);
}

// Three jobs under two policies; job 1 is done only under the first, so the
// common set is jobs 0 and 2 (submitted at 0 and 100):
//   policy A: job 0 runs 10..110, job 2 runs 100..400:
//     JCT (110 + 300) / 2 = 205, wait (10 + 0) / 2 = 5, cost 1.5 + 2.5 = 4 $, CO2 7 + 11 = 18 g
//   policy B: job 0 runs 50..150, job 2 runs 200..260:
//     JCT (150 + 160) / 2 = 155, wait (50 + 100) / 2 = 75, cost 1 + 0.25 = 1.25 $, CO2 5 + 3 = 8 g
// Job 1's run under A (a long one) counts in neither.
TEST(CommonToAll, AveragesOverTheJobsEveryRunFinished) {
  auto done = [](int64_t start, int64_t end, int64_t cost, int64_t co2) {
    JobOutcome o;
    o.start_s = start;
    o.end_s = end;
    o.cost_micros = cost;
    o.co2_g = co2;
    o.state = JobState::kDone;
    return o;
  };
  JobOutcome rejected;
  rejected.state = JobState::kRejected;
  const std::vector<JobOutcome> a = {done(10, 110, 1'500'000, 7), done(20, 90'000, 9'000'000, 99),
                                     done(100, 400, 2'500'000, 11)};
  const std::vector<JobOutcome> b = {done(50, 150, 1'000'000, 5), rejected,
                                     done(200, 260, 250'000, 3)};
  const std::vector<int64_t> submit = {0, 20, 100};
  std::vector<CommonFigures> c = CommonToAll({&a, &b}, submit);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].jobs, 2);
  EXPECT_DOUBLE_EQ(c[0].avg_jct_s, 205);
  EXPECT_DOUBLE_EQ(c[0].avg_wait_s, 5);
  EXPECT_EQ(c[0].cost_micros, 4'000'000);
  EXPECT_EQ(c[0].co2_g, 18);
  EXPECT_EQ(c[1].jobs, 2);
  EXPECT_DOUBLE_EQ(c[1].avg_jct_s, 155);
  EXPECT_DOUBLE_EQ(c[1].avg_wait_s, 75);
  EXPECT_EQ(c[1].cost_micros, 1'250'000);
  EXPECT_EQ(c[1].co2_g, 8);

  // One run alone: its own done jobs, all three: JCT (110 + 89,980 + 300) / 3 = 30,130.
  std::vector<CommonFigures> alone = CommonToAll({&a}, submit);
  EXPECT_EQ(alone[0].jobs, 3);
  EXPECT_DOUBLE_EQ(alone[0].avg_jct_s, 30130);
  // No job done everywhere: zeros, not a division by zero.
  const std::vector<JobOutcome> none = {rejected, rejected, rejected};
  std::vector<CommonFigures> empty = CommonToAll({&a, &none}, submit);
  EXPECT_EQ(empty[0].jobs, 0);
  EXPECT_EQ(empty[0].avg_jct_s, 0);
  EXPECT_EQ(empty[0].cost_micros, 0);
}

}  // namespace
}  // namespace meridian::sim
