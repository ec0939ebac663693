// Recommendations on the recorded series, priced with the embedded catalog
// (data/catalog: GPU specs, MIG profiles, offerings, egress).
#include "telemetry/recommend.h"

#include <gtest/gtest.h>

#include <cmath>

#include "telemetry/series_csv.h"

namespace meridian::telemetry {
namespace {

class RecommendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = catalog::Catalog::LoadEmbedded();
    ASSERT_TRUE(c.ok()) << c.status().message();
    cat_ = *c;
  }
  Classification Of(const std::string& file) {
    auto s = ReadSeriesCsv("telemetry/testdata/" + file);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return Classify(ComputeWindow(*s, t_, 32), t_);
  }
  JobContext H100Job(int vcpus) {
    JobContext j;
    j.gpu_model = "H100-80GB";
    j.gpus = 1;
    j.vcpus = vcpus;
    j.run_region = "gcp:us-central1";
    j.gpu_hour_usd = 3.0;
    return j;
  }
  std::shared_ptr<const catalog::Catalog> cat_;
  Thresholds t_;
};

TEST_F(RecommendTest, InputBoundCpuAsksForEnoughVcpus) {
  Classification c = Of("input_bound_cpu.csv");
  ASSERT_EQ(c.job_class, JobClass::kInputBound);
  Recommendation r = Recommend(c, H100Job(4), t_, *cat_);
  EXPECT_EQ(r.action, "more-vcpus");
  // GPU at about 21% on 4 vCPUs; fed it reaches 90%: ceil(4 x 90 / sm).
  const int want = static_cast<int>(std::ceil(4 * 90.0 / c.figures.gpu_sm_pct));
  EXPECT_EQ(r.vcpus, want);
  EXPECT_NEAR(r.speedup, 90.0 / c.figures.gpu_sm_pct, 1e-9);
  // A node of 8 vCPUs caps it: 8, twice the steps per hour.
  JobContext small = H100Job(4);
  small.node_vcpus = 8;
  r = Recommend(c, small, t_, *cat_);
  EXPECT_EQ(r.vcpus, 8);
  EXPECT_NEAR(r.speedup, 2.0, 1e-9);
  EXPECT_NE(r.expected_effect.find("2.0x"), std::string::npos) << r.expected_effect;
}

TEST_F(RecommendTest, InputBoundIoWeighsEgressAgainstStall) {
  Classification c = Of("input_bound_io.csv");
  JobContext j = H100Job(8);
  j.data_region = "aws:us-east-1";
  j.data_gb = 2000;
  Recommendation r = Recommend(c, j, t_, *cat_);
  ASSERT_EQ(r.action, "move-data");
  const auto per_gb = cat_->EgressUsdPerGb("aws:us-east-1", "gcp:us-central1");
  ASSERT_TRUE(per_gb.has_value());
  EXPECT_NEAR(r.egress_usd, *per_gb * 2000, 1e-6);
  // GPU about 14% of the 90% a fed GPU reaches: (1 - 14/90) x 1 GPU x $3/h.
  EXPECT_NEAR(r.stall_usd_per_hour, (1 - c.figures.gpu_sm_pct / 90) * 3.0, 1e-9);
  EXPECT_NE(r.expected_effect.find("pays back after"), std::string::npos) << r.expected_effect;
  // Data already in the run's region: faster storage.
  j.data_region = j.run_region;
  EXPECT_EQ(Recommend(c, j, t_, *cat_).action, "faster-storage");
}

TEST_F(RecommendTest, MemoryBoundNamesAGpuWithMoreBandwidth) {
  Recommendation r = Recommend(Of("memory_bound.csv"), H100Job(8), t_, *cat_);
  ASSERT_EQ(r.action, "more-bandwidth-gpu");
  const catalog::GpuModel* g = cat_->FindGpu(r.gpu_model);
  ASSERT_NE(g, nullptr);
  EXPECT_GT(g->memory_bandwidth_gbps, 3350);
  EXPECT_NEAR(r.speedup, g->memory_bandwidth_gbps / 3350.0, 1e-9);
}

TEST_F(RecommendTest, UnderusedGpuGetsAMigSlice) {
  Classification c = Of("underused.csv");
  ASSERT_EQ(c.job_class, JobClass::kHealthy);
  Recommendation r = Recommend(c, H100Job(8), t_, *cat_);
  ASSERT_EQ(r.action, "mig-slice");
  // SM about 22% of 90% = 0.24 of the GPU, 6000 MiB x 1.2 = 7 GiB: the
  // smallest H100 profile with >= 0.24 of the 7 compute slices and 7 GiB is
  // 2g.20gb (2/7 = 0.29; 1g.* have 1/7 = 0.14).
  EXPECT_EQ(r.mig_profile, "2g.20gb");
  EXPECT_NEAR(r.usd_per_hour_after, 3.0 * 2 / 7, 1e-9);
}

TEST_F(RecommendTest, CpuJobShortOfCoresAsksForThem) {
  // No GPU figures; 1 vCPU, 0.9 cores running and 1.3 s per second queued
  // for a CPU: ceil(0.9 + 1.3 - 0.25 of noise) = 2 vCPUs, (0.9 + 1.3) / 0.9 = 2.4x.
  Classification c;
  c.job_class = JobClass::kHealthy;
  c.figures.cpu_cores = 0.9;
  c.figures.run_delay_frac = 1.3;
  c.figures.cpu_capacity = 1;
  c.figures.cpu_saturation = 0.9;
  JobContext j;
  j.vcpus = 1;
  j.node_vcpus = 8;
  Recommendation r = Recommend(c, j, t_, *cat_);
  EXPECT_EQ(r.action, "more-vcpus");
  EXPECT_EQ(r.vcpus, 2);
  EXPECT_NEAR(r.speedup, 2.2 / 0.9, 1e-9);
  // One busy thread on its 1 vCPU: ceil(1.0 - 0.25) = 1, nothing to add.
  c.figures.cpu_cores = c.figures.cpu_saturation = 1.0;
  c.figures.run_delay_frac = 0.02;
  EXPECT_EQ(Recommend(c, j, t_, *cat_).action, "none");
  // Not saturating its vCPUs: the wait is the machine's, not its allocation's.
  c.figures.cpu_cores = 0.5;
  c.figures.run_delay_frac = 1.3;
  c.figures.cpu_saturation = 0.5;
  EXPECT_EQ(Recommend(c, j, t_, *cat_).action, "none");
}

TEST_F(RecommendTest, IdleAndHealthy) {
  Recommendation idle = Recommend(Of("idle.csv"), H100Job(8), t_, *cat_);
  EXPECT_EQ(idle.action, "check-job");
  EXPECT_NE(idle.expected_effect.find("$3.00/h"), std::string::npos) << idle.expected_effect;
  EXPECT_EQ(Recommend(Of("healthy.csv"), H100Job(8), t_, *cat_).action, "none");
}

}  // namespace
}  // namespace meridian::telemetry
