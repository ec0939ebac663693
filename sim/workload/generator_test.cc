// The workload generator: bytes fixed by the seed, output the JSONL reader
// accepts, and distributions that match their calibration over 20,000 jobs.
#include "sim/workload/generator.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/trace.h"

namespace meridian::sim {
namespace {

std::string Generate(const WorkloadOptions& o) {
  std::ostringstream out;
  Status s = GenerateWorkload(o, out);
  EXPECT_TRUE(s.ok()) << s.message();
  return out.str();
}

Trace ReadBack(const std::string& text, const std::string& name) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("meridian-workload-" + name + ".jsonl");
  std::ofstream(p) << text;
  Result<Trace> t = ReadTrace(p.string(), TraceFormat::kJsonl);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(t).value() : Trace{};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(Workload, SameSeedSameBytes) {
  for (WorkloadLike like : {WorkloadLike::kPhilly, WorkloadLike::kHelios, WorkloadLike::kPai,
                            WorkloadLike::kAcmeSeren}) {
    WorkloadOptions o;
    o.jobs = 2000;
    o.seed = 42;
    o.like = like;
    o.deadline_slack = 2;
    o.preemptible_frac = 0.3;
    const std::string a = Generate(o);
    EXPECT_EQ(a, Generate(o)) << ToString(like);
    o.seed = 43;
    EXPECT_NE(a, Generate(o)) << ToString(like);
  }
}

TEST(Workload, OutputReadsBack) {
  WorkloadOptions o;
  o.jobs = 5000;
  o.like = WorkloadLike::kPai;
  o.deadline_slack = 3;
  o.preemptible_frac = 0.5;
  o.gpu_model = "A100-80GB";
  const Trace t = ReadBack(Generate(o), "readback");
  ASSERT_EQ(t.jobs.size(), 5000u);
  size_t preemptible = 0;
  for (const TraceJob& j : t.jobs) {
    const JobSpec& s = *t.specs[j.spec];
    EXPECT_GT(j.duration_s, 0);
    EXPECT_GE(j.deadline_s, j.duration_s * 3) << j.name;
    EXPECT_LT(j.deadline_s, j.duration_s * 3 + 3600) << j.name;
    EXPECT_EQ(j.deadline_s % 3600, 0);
    if (*s.resources.gpus > 0) {
      EXPECT_EQ(s.resources.gpu_models, std::vector<std::string>{"A100-80GB"});
    }
    EXPECT_EQ(s.resources.mig, j.gpu_fraction > 0);
    preemptible += s.preemptible ? 1 : 0;
  }
  EXPECT_NEAR(static_cast<double>(preemptible) / 5000, 0.5, 0.03);
  // Shapes are shared: far fewer specs than jobs.
  EXPECT_LT(t.specs.size(), 1000u);
}

struct Stats {
  double jobs_per_day = 0, cpu_share = 0, mean_gpus = 0, median_gpus = 0, median_run = 0;
  double fractional = 0, max_gpus = 0, multi_node = 0;
  std::vector<double> hour_share = std::vector<double>(24);
};

// `n` jobs at a rate scaled so they span four weeks, so the daily and weekly
// cycles average out; jobs_per_day is reported unscaled.
Stats Measure(WorkloadLike like, int64_t n) {
  WorkloadOptions o;
  o.jobs = n;
  o.seed = 7;
  o.like = like;
  o.rate_scale = static_cast<double>(n) / 28 / CalibrationOf(like).jobs_per_day;
  const Trace t = ReadBack(Generate(o), std::string(ToString(like)));
  Stats s;
  std::vector<double> gpus, runs;
  double cpu = 0, frac = 0, multi = 0;
  for (const TraceJob& j : t.jobs) {
    const int g = *t.specs[j.spec]->resources.gpus;
    s.hour_share[(j.submit_s / 3600) % 24] += 1.0 / static_cast<double>(n);
    if (g == 0) {
      ++cpu;
      continue;
    }
    gpus.push_back(j.gpu_fraction > 0 ? j.gpu_fraction : g);
    runs.push_back(static_cast<double>(j.duration_s));
    frac += j.gpu_fraction > 0 ? 1 : 0;
    multi += g > 8 ? 1 : 0;
    s.max_gpus = std::max<double>(s.max_gpus, g);
  }
  s.jobs_per_day = static_cast<double>(n) /
                   (static_cast<double>(t.jobs.back().submit_s) / 86400) / o.rate_scale;
  s.cpu_share = cpu / static_cast<double>(n);
  double sum = 0;
  for (double g : gpus) sum += g;
  s.mean_gpus = sum / static_cast<double>(gpus.size());
  s.median_gpus = Median(gpus);
  s.median_run = Median(runs);
  s.fractional = frac / static_cast<double>(gpus.size());
  s.multi_node = multi / static_cast<double>(gpus.size());
  return s;
}

TEST(Workload, DistributionsMatchTheirCalibration) {
  for (WorkloadLike like : {WorkloadLike::kPhilly, WorkloadLike::kHelios, WorkloadLike::kPai,
                            WorkloadLike::kAcmeSeren}) {
    SCOPED_TRACE(std::string(ToString(like)));
    const WorkloadCalibration c = CalibrationOf(like);
    const Stats s = Measure(like, 20000);
    EXPECT_NEAR(s.jobs_per_day / c.jobs_per_day, 1.0, 0.08);
    EXPECT_NEAR(s.cpu_share, c.cpu_share, 0.015);
    EXPECT_NEAR(s.mean_gpus / c.mean_gpus, 1.0, like == WorkloadLike::kAcmeSeren ? 0.2 : 0.1);
    EXPECT_LE(s.max_gpus, c.max_gpus);
    if (like != WorkloadLike::kPai) {
      EXPECT_EQ(s.median_gpus, c.median_gpus);
    }
    EXPECT_NEAR(s.median_run / c.median_run_s, 1.0, 0.1);
    EXPECT_NEAR(s.fractional, c.fractional_share, 0.015);
    if (like == WorkloadLike::kPai) {
      EXPECT_EQ(s.multi_node, 0.0);
    }
    // Hour-of-day shares follow the calibrated cycle (mean 1 -> 1/24 each).
    for (int h = 0; h < 24; ++h) {
      EXPECT_NEAR(s.hour_share[h] * 24, c.hourly[h], 0.15 * c.hourly[h] + 0.05) << "hour " << h;
    }
  }
}

TEST(Workload, BadOptionsNameTheFlag) {
  WorkloadOptions o;
  o.jobs = 0;
  EXPECT_NE(CheckWorkloadOptions(o).message().find("--jobs: 0"), std::string::npos);
  o = {};
  o.preemptible_frac = 1.5;
  EXPECT_NE(CheckWorkloadOptions(o).message().find("--preemptible-frac"), std::string::npos);
  o = {};
  o.deadline_slack = 0.5;
  EXPECT_NE(CheckWorkloadOptions(o).message().find("--deadline-slack"), std::string::npos);
  EXPECT_FALSE(ParseWorkloadLike("alibaba").ok());
  EXPECT_EQ(*ParseWorkloadLike("acme-seren"), WorkloadLike::kAcmeSeren);
}

}  // namespace
}  // namespace meridian::sim
