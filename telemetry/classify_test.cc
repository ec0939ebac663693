// The classifier on recorded sample series (testdata/*.csv; make_series.py
// says how each was made): one per class and the edge cases.
#include "telemetry/classify.h"

#include <gtest/gtest.h>

#include "telemetry/attribution.h"
#include "telemetry/series_csv.h"

namespace meridian::telemetry {
namespace {

Classification ClassifyFile(const std::string& name, Thresholds t = {}) {
  auto s = ReadSeriesCsv("telemetry/testdata/" + name);
  EXPECT_TRUE(s.ok()) << s.status().message();
  if (!s.ok()) return {};
  return Classify(ComputeWindow(*s, t, 16), t);
}

bool HasEvidence(const Classification& c, const std::string& figure, const std::string& op) {
  for (const Evidence& e : c.evidence) {
    if (e.figure == figure && e.op == op) return true;
  }
  return false;
}

struct Case {
  const char* file;
  JobClass want;
  Stall stall;
};

TEST(Classify, EachRecordedSeries) {
  const Case cases[] = {
      {"healthy.csv", JobClass::kHealthy, Stall::kNone},
      {"input_bound_cpu.csv", JobClass::kInputBound, Stall::kCpuSaturated},
      {"input_bound_io.csv", JobClass::kInputBound, Stall::kIoWait},
      {"memory_bound.csv", JobClass::kMemoryBound, Stall::kNone},
      {"idle.csv", JobClass::kIdle, Stall::kNone},
      {"underused.csv", JobClass::kHealthy, Stall::kNone},
      // One 0% sample among 95%: mean (12 x 95) / 13 = 87.7% >= 60.
      {"burst_dip.csv", JobClass::kHealthy, Stall::kNone},
      // One 100% sample among 0%: mean 100 / 13 = 7.7% < 10 and CPU 0.01 cores.
      {"burst_spike.csv", JobClass::kIdle, Stall::kNone},
      {"missing_samples.csv", JobClass::kInputBound, Stall::kCpuSaturated},
      {"too_few.csv", JobClass::kUnknown, Stall::kNone},
      {"mig_no_util.csv", JobClass::kHealthy, Stall::kNone},
      // Recorded from real processes on a loaded 2-core machine: the busy loop
      // got 0.3 of a core (it waited 0.7 s per second to run); the sleeper none.
      {"cpu_busy.csv", JobClass::kHealthy, Stall::kNone},
      {"cpu_sleep.csv", JobClass::kIdle, Stall::kNone},
  };
  for (const Case& c : cases) {
    Classification got = ClassifyFile(c.file);
    EXPECT_EQ(ToString(got.job_class), ToString(c.want)) << c.file << ": " << got.summary;
    EXPECT_EQ(ToString(got.stall), ToString(c.stall)) << c.file << ": " << got.summary;
    EXPECT_FALSE(got.summary.empty()) << c.file;
  }
}

TEST(Classify, EvidenceNamesFiguresAndThresholds) {
  Classification c = ClassifyFile("input_bound_cpu.csv");
  // 13 samples 5 s apart, window 60 s: 12 intervals. CPU about 3.9 s per
  // second on 4 vCPUs: saturation about 0.98 >= 0.85.
  EXPECT_EQ(c.figures.samples, 13);
  EXPECT_EQ(c.figures.intervals, 12);
  EXPECT_NEAR(c.figures.cpu_cores, 3.9, 0.15);
  EXPECT_EQ(c.figures.cpu_capacity, 4);
  EXPECT_TRUE(HasEvidence(c, "gpu_sm_pct", "<"));
  EXPECT_TRUE(HasEvidence(c, "cpu_saturation", ">="));
  for (const Evidence& e : c.evidence) {
    if (e.figure == "cpu_saturation") {
      EXPECT_EQ(e.threshold, "cpu_saturated_frac");
      EXPECT_DOUBLE_EQ(e.limit, 0.85);
    }
  }
}

TEST(Classify, ThresholdsAreConfiguration) {
  // The same series, with "busy" at 15%: the GPU at 18-24% is busy now.
  Thresholds t;
  t.gpu_busy_sm_pct = 15;
  EXPECT_EQ(ClassifyFile("input_bound_cpu.csv", t).job_class, JobClass::kHealthy);
  // The I/O series with the I/O-wait rule off (above its 0.7 s/s): GPU 12-16%,
  // CPU 0.6 cores, not idle (>= 10%): a partly used GPU.
  t = Thresholds{};
  t.iowait_dominant_frac = 5;
  EXPECT_EQ(ClassifyFile("input_bound_io.csv", t).job_class, JobClass::kHealthy);
}

TEST(Classify, MissingSamplesAreGapsNotRates) {
  Classification c = ClassifyFile("missing_samples.csv");
  // Window 60 s before t=75: samples 3 and 10-15 (4-9 missing): 7 samples, the
  // 35 s gap from 3 to 10 left out (> max_gap 30 s), 5 intervals; GPU figures
  // unknown in samples 11 and 12: 5 of 7 samples with an SM figure.
  EXPECT_EQ(c.figures.samples, 7);
  EXPECT_EQ(c.figures.gaps, 1);
  EXPECT_EQ(c.figures.intervals, 5);
  EXPECT_NEAR(c.figures.covered_s, 25, 1e-9);
  EXPECT_EQ(c.figures.gpu_samples, 5);
  EXPECT_NEAR(c.figures.gpu_sm_pct, 20, 1e-9);
  // Only gaps: nothing to take a rate over.
  Thresholds t;
  t.max_gap_s = 4;
  EXPECT_EQ(ClassifyFile("missing_samples.csv", t).job_class, JobClass::kUnknown);
}

TEST(Classify, MigInstancesAttributedToTheirJob) {
  auto s = ReadSeriesCsv("telemetry/testdata/mig_instances.csv");
  ASSERT_TRUE(s.ok()) << s.status().message();
  // The job's own instance (where its processes hold memory) is 4% busy while
  // its 2 vCPUs are saturated: input-bound.
  std::vector<JobSample> mine = *s;
  for (JobSample& x : mine) x.gpus = JobGpus(x.gpus, {0}, /*mig=*/true);
  ASSERT_EQ(mine[0].gpus.size(), 1u);
  EXPECT_EQ(mine[0].gpus[0].mig_gi, 2);
  Classification c = Classify(ComputeWindow(mine, Thresholds{}, 16), Thresholds{});
  EXPECT_EQ(c.job_class, JobClass::kInputBound) << c.summary;
  EXPECT_TRUE(c.figures.mig);
  EXPECT_NEAR(c.figures.gpu_sm_pct, 4, 1e-9);
  // Whole-GPU attribution finds no whole-GPU reading on a MIG GPU.
  EXPECT_TRUE(JobGpus((*s)[0].gpus, {0}, /*mig=*/false).empty());
}

TEST(Classify, MigWithoutUtilizationFallsBackToCpuRules) {
  Classification c = ClassifyFile("mig_no_util.csv");
  EXPECT_EQ(c.figures.gpu_samples, 0);
  EXPECT_TRUE(c.figures.mig);
  EXPECT_NE(c.summary.find("no GPU figures"), std::string::npos) << c.summary;
}

TEST(Classify, CpuOnlyRulesTellBusyFromIdle) {
  JobSample a, b, c;
  a.t_ms = 0;
  b.t_ms = 5000;
  c.t_ms = 10000;
  b.cpu_user_s = 5;   // 1 core
  c.cpu_user_s = 10;
  a.threads = b.threads = c.threads = 1;
  Classification busy = Classify(ComputeWindow({a, b, c}, Thresholds{}, 4), Thresholds{});
  EXPECT_EQ(busy.job_class, JobClass::kHealthy) << busy.summary;
  EXPECT_NEAR(busy.figures.cpu_saturation, 1.0, 1e-9);
  b.cpu_user_s = c.cpu_user_s = 0.01;
  Classification idle = Classify(ComputeWindow({a, b, c}, Thresholds{}, 4), Thresholds{});
  EXPECT_EQ(idle.job_class, JobClass::kIdle) << idle.summary;
  // Counters that go backwards (a pid reused by another process) are a gap.
  c.cpu_user_s = 0;
  EXPECT_EQ(ComputeWindow({a, b, c}, Thresholds{}, 4).gaps, 1);
}

TEST(SeriesCsv, BadInputNamesLineAndColumn) {
  auto r = ParseSeriesCsv(SeriesCsvHeader() + "1,2,3\n", "x.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "x.csv:2: 3 columns; expected 19");
  r = ParseSeriesCsv(SeriesCsvHeader() + "1,abc,0,0,0,0,0,0,0,1,0,,,,,,,,\n", "x.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "x.csv:2: column 2: \"abc\" is not a number");
  // Writing and reading back gives the same sample.
  JobSample s;
  s.t_ms = 1500;
  s.cpu_user_s = 2.5;
  s.threads = 3;
  GpuReading g;
  g.index = 1;
  g.mig_gi = 4;
  g.sm_util_pct = 42;
  s.gpus.push_back(g);
  auto back = ParseSeriesCsv(SeriesCsvHeader() + SeriesCsvRows(s), "y.csv");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].t_ms, 1500);
  ASSERT_EQ((*back)[0].gpus.size(), 1u);
  EXPECT_EQ((*back)[0].gpus[0].mig_gi, 4);
  EXPECT_DOUBLE_EQ((*back)[0].gpus[0].sm_util_pct, 42);
  EXPECT_FALSE(Known((*back)[0].gpus[0].mem_bw_util_pct));
}

}  // namespace
}  // namespace meridian::telemetry
