#include "sched/plugins/carbon.h"

#include <malloc.h>

#include <gtest/gtest.h>

#include "sched/plugins/time_shift.h"
#include "sched/registry.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

Candidate Node(uint32_t n, uint8_t demand) {
  Candidate c;
  c.node = NodeId(n);
  c.gpus_per_node = 1;
  c.demand = demand;
  c.start = kNow;
  return c;
}

TEST(CarbonTest, GramsAtTheHoursTheJobRuns) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("one", 1, 40);
  spec.resources.gpu_models = {"H100-80GB", "A100-80GB", "L40S"};
  QueuedJob job = Queue(w, spec, 1);  // demands: 0 H100, 1 A100, 2 L40S; 2 h on each
  testing::Cycle cy(w, job);
  Candidate east;
  east.kind = CandidateKind::kElastic;
  east.offering = testing::Offering(w, "aws:us-east-1", "g6e.xlarge");
  east.region = FindRegionId(*w.catalog, "aws:us-east-1");
  east.instances = 1;
  east.demand = 2;
  east.start = kNow;
  Candidate east_late = east;
  east_late.start = kNow + 11 * 3600;
  Candidate cpu;
  cpu.kind = CandidateKind::kCpuNode;
  cpu.node = NodeId(0);
  cpu.start = kNow;
  struct Case {
    const char* name;
    Candidate c;
    int64_t raw;
    int64_t normalized;
  } cases[] = {
      // H100 700 W x 2 h = 1.4 kWh x 430 g/kWh (us-central1 yearly) = 602 g: the dirtiest, 0
      {"onprem-a H100", Node(0, 0), -602, 0},
      // A100 400 W x 2 h = 0.8 kWh x 236 (europe-west4 yearly) = 188.8 -> 189 g: the cleanest, 100
      {"onprem-b A100", Node(3, 1), -189, 100},
      // L40S 350 W x 2 h = 0.7 kWh x 300 (us-east-1 hours 00-01: 300, 300) = 210 g:
      // (602 - 210) / (602 - 189) x 100 = 94.9 -> 94
      {"us-east-1 now", east, -210, 94},
      // deferred to 11:00: hours 11 (300) and 12 (500), mean 400: 0.7 x 400 = 280 g:
      // (602 - 280) / 413 x 100 = 77.9 -> 77
      {"us-east-1 at 11:00", east_late, -280, 77},
      // no CPU power figure: skipped, neutral 50
      {"CPU node", cpu, Carbon::kUnknown, 50},
  };
  Carbon carbon({});
  std::vector<int64_t> raw;
  for (const auto& c : cases) {
    raw.push_back(carbon.Score(cy.ctx, c.c));
    EXPECT_EQ(raw.back(), c.raw) << c.name;
  }
  carbon.NormalizeScore(cy.ctx, raw);
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(raw[i], cases[i].normalized) << cases[i].name;
  EXPECT_EQ(carbon.ExplainScore(cy.ctx, cases[0].c, 0),
            "700 W x 2.00 h = 1.40 kWh x 430 g/kWh (mean over the run from "
            "2026-01-01T00:00:00Z) = 602 g CO2");
}

TEST(CarbonTest, GpuCountsAndCpuFigure) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("small", 1, 15);
  spec.resources.mig = true;
  spec.resources.gpu_models = {"H100-80GB"};
  spec.resources.vcpus = 8;
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  Candidate mig;
  mig.kind = CandidateKind::kMigSlice;
  mig.node = NodeId(2);
  mig.mig_profile = 1;
  mig.mig_shape = {6, 2};
  mig.start = kNow;
  Candidate gang = Node(0, 0);
  gang.kind = CandidateKind::kGang;
  gang.gpus_per_node = 4;
  gang.gang_size = 2;
  cy.members = {NodeId(0), NodeId(1)};
  Candidate cpu;
  cpu.kind = CandidateKind::kCpuNode;
  cpu.node = NodeId(0);
  cpu.start = kNow;
  Carbon carbon({48, 10});
  struct Case {
    const char* name;
    Candidate c;
    double watts;
  } cases[] = {
      {"MIG 2 of 8 slices: 700 x 2 / 8", mig, 175},
      {"gang 2 x 4 H100: 700 x 8", gang, 5600},
      {"CPU 8 vCPUs x 10 W", cpu, 80},
  };
  for (const auto& c : cases) {
    Carbon::Emission e = carbon.EmissionOf(cy.ctx, c.c);
    EXPECT_TRUE(e.known) << c.name;
    EXPECT_DOUBLE_EQ(e.watts, c.watts) << c.name;
    EXPECT_DOUBLE_EQ(e.gco2_per_kwh, 430) << c.name;
  }
}

TEST(CarbonTest, MeanIsHourlyAndBounded) {
  testing::World w = MakeWorld();
  RegionId east = FindRegionId(*w.catalog, "aws:us-east-1");
  const UnixSeconds nine = kNow + 9 * 3600;
  struct Case {
    const char* name;
    UnixSeconds start;
    double hours;
    int max_samples;
    double want;
  } cases[] = {
      // 09, 10, 11 at 300 and 12, 13 at 500: 1900 / 5 = 380
      {"5 h from 09:00, every hour", nine, 5, 48, 380},
      // at most 2 samples: every 3rd hour, 09 (300) and 12 (500): 400
      {"5 h from 09:00, 2 samples", nine, 5, 2, 400},
      // a part hour counts as a sample: 09 and 10 -> 300
      {"1.5 h from 09:00", nine, 1.5, 48, 300},
      // 24 h, 4 samples: 00, 06 (300), 12, 18 (500): 400
      {"a day in 4 samples", kNow, 24, 4, 400},
  };
  for (const auto& c : cases) {
    EXPECT_DOUBLE_EQ(MeanCarbonGPerKwh(*w.market, east, c.start, c.hours, c.max_samples), c.want)
        << c.name;
  }
}

TEST(CarbonTest, ArgumentsAreValidated) {
  auto bad = PluginArgs::FromYaml("{max_samples: 0}");
  ASSERT_TRUE(bad.ok());
  auto made = Carbon::Create(*bad);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("max_samples"), std::string::npos);
}

// CheckProfile builds every plugin of a profile and scores nothing (a profile
// check, a fuzz input): carbon's memo (4096 entries of 40 bytes, 160 KiB) and
// time_shift's (128 regions x 96 hourly samples x 8 bytes, 96 KiB) come with
// the first cycle, not with the plugin.
TEST(CarbonTest, CarbonAndTimeShiftAreBuiltWithoutTheirMemos) {
  // glibc's heap in use, from its arenas and mmap; a sanitizer's allocator
  // does not report through mallinfo2.
  auto in_use = [] {
    const struct mallinfo2 m = mallinfo2();
    return static_cast<size_t>(m.uordblks + m.hblkhd);
  };
  const size_t before_probe = in_use();
  auto* probe = new std::vector<char>(64 * 1024);
  const bool measurable = in_use() >= before_probe + 64 * 1024;
  delete probe;
  if (!measurable) GTEST_SKIP() << "the allocator does not report through mallinfo2";

  for (std::string_view name : {Carbon::kName, TimeShift::kName}) {
    PluginArgs args;
    const size_t before = in_use();
    Result<std::unique_ptr<Plugin>> made = MakePlugin(name, args);
    ASSERT_TRUE(made.ok()) << made.status().message();
    // The plugin object and its options: far below either memo.
    EXPECT_LT(in_use() - before, 16u * 1024) << name;
  }
}

}  // namespace
}  // namespace meridian::sched
