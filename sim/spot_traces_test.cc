#include "sim/spot_traces.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace meridian::sim {
namespace {

SpotTrace Parse(const std::string& runs, int64_t gap = 10) {
  int64_t ticks = 0;
  for (size_t p = 0; (p = runs.find('*', p)) != std::string::npos; ++p) ticks += std::stoll(runs.substr(p + 1));
  const std::string csv =
      "trace,kind,provider,zone,instance_type,gpu_model,gpus,gap_s,date,ticks,runs\n"
      "t,availability,aws,us-east-1a,p3.2xlarge,V100-16GB,1," + std::to_string(gap) + ",d," +
      std::to_string(ticks) + "," + runs + "\n";
  auto t = ParseSpotTraces(csv, "t.csv");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t->front();
}

TEST(SpotTraces, EmbeddedTracesAreTheGpuTracesOfTheData) {
  const auto& traces = EmbeddedSpotTraces();
  ASSERT_EQ(traces.size(), 21u);  // 17 availability (V100, K80) + 4 V100 preemption
  for (const SpotTrace& t : traces) {
    EXPECT_EQ(t.run_end.back(), t.ticks) << t.name;
    EXPECT_GT(t.gap_s, 0) << t.name;
  }
  // The data's README: us-east-1a is up 17% of the time, us-west-2b 91%.
  for (const SpotTrace& t : traces) {
    if (t.name == "availability/1-node/aws-02-15-2023/us-east-1a_v100_1") {
      EXPECT_NEAR(t.UpFraction(), 0.17, 0.01);
      EXPECT_EQ(t.region, "aws:us-east-1");
      EXPECT_EQ(t.instance_type, "p3.2xlarge");
      EXPECT_EQ(t.ticks, 20158);
      EXPECT_EQ(t.gap_s, 195);
    }
    if (t.name == "availability/1-node/aws-02-15-2023/us-west-2b_v100_1") {
      EXPECT_NEAR(t.UpFraction(), 0.91, 0.01);
    }
  }
}

TEST(SpotTraces, StateAndNextDownCycleThroughTheTrace) {
  // Ticks of 10 s: down 0-19, up 20-49, down 50-59; period 60 s.
  SpotTrace t = Parse("0*2 1*3 0*1");
  EXPECT_FALSE(t.UpAt(0));
  EXPECT_TRUE(t.UpAt(25));
  EXPECT_FALSE(t.UpAt(55));
  EXPECT_TRUE(t.UpAt(85));  // 85 - 60 = 25: the second cycle
  EXPECT_EQ(t.NextDown(20), 50);
  EXPECT_EQ(t.NextDown(0), 0);  // down already
  EXPECT_EQ(t.NextDown(81), 110);
  EXPECT_DOUBLE_EQ(t.UpFraction(), 0.5);
  EXPECT_EQ(t.Reclaims(), 1);
  // Up at the end and the start: the next down run is in the next cycle.
  SpotTrace wrap = Parse("1*2 0*1 1*3");  // period 60, down 20-29
  EXPECT_EQ(wrap.NextDown(35), 80);
  EXPECT_EQ(wrap.Reclaims(), 1);
  EXPECT_EQ(Parse("1*5").NextDown(7), std::nullopt);
}

// Ticks of 10 s: up 0-19, down 20-29, up 30-59 (period 60 s). The up runs
// at the end and the start are one (cyclic): 1 reclaim over 50 s up, 1 /
// (50 / 3600 h) = 72 reclaims per hour up. Never up: -1.
TEST(SpotTraces, ReclaimsPerHourUpCountsOnlyTheHoursUp) {
  EXPECT_DOUBLE_EQ(Parse("1*2 0*1 1*3").ReclaimsPerHourUp(), 72.0);
  // Two reclaims in 40 s up of 80 s: 2 / (40 / 3600) = 180.
  EXPECT_DOUBLE_EQ(Parse("1*2 0*2 1*2 0*2").ReclaimsPerHourUp(), 180.0);
  EXPECT_DOUBLE_EQ(Parse("0*3").ReclaimsPerHourUp(), -1.0);
  EXPECT_DOUBLE_EQ(Parse("1*3").ReclaimsPerHourUp(), 0.0);  // up throughout: never reclaimed
}

// "1*2 0*1 1*3" at 10 s a tick: up at ticks 0-1, down at 2, up at 3-5; its one
// reclaim is the step into tick 2.
TEST(SpotTraces, ATrailingRateSeesOnlyTheTicksBeforeItsSecond) {
  const SpotTrace t = Parse("1*2 0*1 1*3");
  // Before second 20: ticks 0-1, 20 s up and no reclaim yet.
  EXPECT_DOUBLE_EQ(t.ReclaimsPerHourUpBefore(20, 20), 0.0);
  // Before second 30: ticks 0-2, the reclaim in 20 s up: 1 / (20/3600) = 180/h.
  EXPECT_DOUBLE_EQ(t.ReclaimsPerHourUpBefore(30, 30), 180.0);
  // Before second 10 with 30 s of window: ticks 4, 5 (the period before) and
  // 0, all up, no step down among them.
  EXPECT_DOUBLE_EQ(t.ReclaimsPerHourUpBefore(10, 30), 0.0);
  // A window past the period is the whole period: the whole trace's 72/h.
  EXPECT_DOUBLE_EQ(t.ReclaimsPerHourUpBefore(60, 1000), 72.0);
  EXPECT_DOUBLE_EQ(Parse("0*3").ReclaimsPerHourUpBefore(30, 30), -1.0);
}

// The trailing rate from the runs' running sums against a count tick by tick
// (CountAt): over every embedded trace, windows of 1 tick to past a period
// ending at seconds spread over two periods, the up ticks and the up -> down
// steps (a tick at 0 after a tick above it, the tick before the window's
// first read cyclically) give the same rate.
TEST(SpotTraces, TrailingRateMatchesACountTickByTick) {
  for (const SpotTrace& t : EmbeddedSpotTraces()) {
    const int64_t period = t.period_s();
    for (int64_t window : {t.gap_s, 7 * t.gap_s, 86400L, 30 * 86400L, 2 * period}) {
      for (int64_t s : {int64_t{0}, t.gap_s * 3, period / 3, period - 1, period + period / 2}) {
        const int64_t n = std::min(std::max<int64_t>(window / t.gap_s, 1), t.ticks);
        const int64_t end = s / t.gap_s;  // first tick not seen
        int64_t up = 0;
        int reclaims = 0;
        for (int64_t k = end - n; k < end; ++k) {
          const int64_t at = ((k % t.ticks) + t.ticks) % t.ticks * t.gap_s;
          const int64_t before = ((k - 1) % t.ticks + t.ticks) % t.ticks * t.gap_s;
          up += t.CountAt(at) > 0 ? 1 : 0;
          reclaims += t.CountAt(at) == 0 && t.CountAt(before) > 0 ? 1 : 0;
        }
        const double up_h = static_cast<double>(up * t.gap_s) / 3600.0;
        const double want = up_h > 0 ? reclaims / up_h : -1;
        EXPECT_DOUBLE_EQ(t.ReclaimsPerHourUpBefore(s, window), want) << t.name << " s=" << s << " window=" << window;
      }
    }
  }
}

TEST(SpotTraces, CountsAreKeptPerTick) {
  // Ticks of 10 s: 3, 3, 1, 0, 2 (period 50 s); the CSV's 3*2 is one run.
  SpotTrace t = Parse("3*2 1*1 0*1 2*1");
  EXPECT_EQ(t.count.size(), 4u);
  EXPECT_EQ(t.CountAt(15), 3);
  EXPECT_EQ(t.CountAt(25), 1);
  EXPECT_EQ(t.CountAt(35), 0);
  EXPECT_EQ(t.CountAt(45), 2);
  EXPECT_EQ(t.CountAt(65), 3);  // 65 - 50 = 15: the second period
  EXPECT_EQ(t.MaxCount(), 3);
  // Below 3 from 20; below 2 from 20; below 1 from 30; from 40 (count 2)
  // below 2 next at 50 + 20 = 70; never below 0.
  EXPECT_EQ(t.NextBelow(0, 3), 20);
  EXPECT_EQ(t.NextBelow(5, 2), 20);
  EXPECT_EQ(t.NextBelow(5, 1), 30);
  EXPECT_EQ(t.NextBelow(40, 2), 70);
  EXPECT_EQ(t.NextBelow(40, 3), 40);  // 2 < 3 now
  EXPECT_EQ(t.NextBelow(0, 0), std::nullopt);
  EXPECT_EQ(t.NextDown(40), 80);      // below 1: the next period's 30
  EXPECT_DOUBLE_EQ(t.UpFraction(), 0.8);
  EXPECT_EQ(t.Reclaims(), 1);
}

TEST(SpotTraces, SkyPilotJsonIsReadAsCounts) {
  auto t = ParseSpotTraceJson(R"({"metadata": {"gap_seconds": 60}, "data": [0, 16, 16, 4, 0]})", "a.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->gap_s, 60);
  EXPECT_EQ(t->ticks, 5);
  EXPECT_EQ(t->run_end, (std::vector<int64_t>{1, 3, 4, 5}));
  EXPECT_EQ(t->count, (std::vector<int32_t>{0, 16, 4, 0}));
  struct Bad {
    const char* json;
    const char* message;
  };
  for (const Bad& b : std::vector<Bad>{
           {"{", "a.json: not JSON"},
           {"[1]", "a.json: not a JSON object"},
           {R"({"data": [1]})", "a.json: metadata.gap_seconds is missing"},
           {R"({"metadata": {"gap_seconds": 0}, "data": [1]})",
            "a.json: metadata.gap_seconds is 0, not a whole number of seconds > 0"},
           {R"({"metadata": {"gap_seconds": -5}, "data": [1]})", "metadata.gap_seconds is -5"},
           {R"({"metadata": {"gap_seconds": 60}})", "a.json: data is missing or empty"},
           {R"({"metadata": {"gap_seconds": 60}, "data": [1, -1]})",
            "a.json: data[1] is -1, not a count of instances"},
           {R"({"metadata": {"gap_seconds": 60}, "data": [1, "x"]})", "data[1] is \"x\""},
       }) {
    auto r = ParseSpotTraceJson(b.json, "a.json");
    ASSERT_FALSE(r.ok()) << b.json;
    EXPECT_NE(r.status().message().find(b.message), std::string::npos) << r.status().message();
  }
}

TEST(SpotTraces, MalformedRowsNameFileAndLine) {
  auto bad = ParseSpotTraces(
      "trace,kind,provider,zone,instance_type,gpu_model,gpus,gap_s,date,ticks,runs\n"
      "t,availability,aws,us-east-1a,p3.2xlarge,V100-16GB,1,10,d,3,1*2 0-1\n",
      "t.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("t.csv:2"), std::string::npos) << bad.status().message();
  auto short_runs = ParseSpotTraces(
      "trace,kind,provider,zone,instance_type,gpu_model,gpus,gap_s,date,ticks,runs\n"
      "t,availability,aws,us-east-1a,p3.2xlarge,V100-16GB,1,10,d,4,1*2 0*1\n",
      "t.csv");
  ASSERT_FALSE(short_runs.ok());
  EXPECT_NE(short_runs.status().message().find("covers 3 ticks, not 4"), std::string::npos);
}

}  // namespace
}  // namespace meridian::sim
