// The one run-time model (run_time.h): which precision a job runs at on each
// model, how recorded run times scale between models, spot rework per
// instance and the checkpoint defaults. Expected values are worked by hand
// from the test catalog's figures (estimate/test_catalog.h).
#include "estimate/run_time.h"

#include <gtest/gtest.h>

#include "estimate/pricing.h"
#include "estimate/test_catalog.h"

namespace meridian::estimate {
namespace {

const catalog::GpuModel& Gpu(const std::string& name) {
  static const auto cat = testing::TestCatalog();
  const catalog::GpuModel* g = cat->FindGpu(name);
  if (!g) throw std::runtime_error("no GPU " + name);
  return *g;
}

ResolvedJob Job(WorkloadKind kind, std::optional<Precision> stated = std::nullopt,
                std::string recorded_on = "") {
  JobSpec s;
  s.name = "j";
  s.kind = kind;
  s.model.precision = stated;
  s.work.recorded_on = std::move(recorded_on);
  s.resources.gpus = 1;
  s.resources.vram_gib = 8;
  return Resolve(s);
}

TEST(RunPrecision, ADefaultedPrecisionFallsBackToTheNearestNativeOne) {
  struct Case {
    const char* name;
    ResolvedJob job;
    const char* gpu;
    std::optional<Precision> want;
  };
  const Case cases[] = {
      // Training defaults to bf16; V100 has fp16 (125 TFLOPS) but no bf16.
      {"bf16 default on V100", Job(WorkloadKind::kTraining), "V100-32GB", Precision::kFp16},
      {"bf16 default on H100", Job(WorkloadKind::kTraining), "H100-80GB", Precision::kBf16},
      // A stated bf16 is a requirement: no fallback off the recorded model.
      {"bf16 stated on V100", Job(WorkloadKind::kTraining, Precision::kBf16), "V100-32GB",
       std::nullopt},
      // ... but the job ran on its recorded model: it runs there at fp16.
      {"bf16 stated, recorded on V100", Job(WorkloadKind::kTraining, Precision::kBf16, "V100-32GB"),
       "V100-32GB", Precision::kFp16},
      {"bf16 stated, recorded elsewhere", Job(WorkloadKind::kTraining, Precision::kBf16, "H100-80GB"),
       "V100-32GB", std::nullopt},
      // fp8 recorded on A100 (no fp8): the nearest is bf16.
      {"fp8 recorded on A100", Job(WorkloadKind::kTraining, Precision::kFp8, "A100-80GB"),
       "A100-80GB", Precision::kBf16},
      // fp64 never falls back: L40S has no fp64 in the test catalog.
      {"fp64 on L40S", Job(WorkloadKind::kScientific), "L40S", std::nullopt},
      {"fp64 on A100", Job(WorkloadKind::kScientific), "A100-80GB", Precision::kFp64},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RunPrecision(c.job, Gpu(c.gpu)), c.want) << c.name;
    EXPECT_EQ(PrecisionRefusal(c.job, Gpu(c.gpu)).empty(), c.want.has_value()) << c.name;
  }
  EXPECT_NE(PrecisionRefusal(Job(WorkloadKind::kTraining, Precision::kBf16), Gpu("V100-32GB"))
                .find("model.precision is stated"),
            std::string::npos);
}

TEST(RunPrecision, TheEstimateOnAModelRunsAtItsPrecision) {
  auto cat = testing::TestCatalog();
  Result<GpuEstimate> e = EstimateOnGpu(Job(WorkloadKind::kTraining), Gpu("V100-32GB"), *cat);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->throughput.precision, Precision::kFp16);
  EXPECT_DOUBLE_EQ(e->throughput.peak_tflops_per_gpu, 125);
  Result<GpuEstimate> stated =
      EstimateOnGpu(Job(WorkloadKind::kTraining, Precision::kBf16), Gpu("V100-32GB"), *cat);
  EXPECT_EQ(stated.status().code(), StatusCode::kUnresolvable);
}

TEST(RecordedRunRatio, ScalesByEffectiveTflopsOrBandwidth) {
  struct Case {
    const char* name;
    WorkloadKind kind;
    const char* from;
    Precision p_from;
    const char* to;
    Precision p_to;
    double want;
  };
  const Case cases[] = {
      // V100 fp16: 125 x 0.75 (no measured efficiency) = 93.75 effective TFLOPS;
      // A100 bf16: 312 x 0.869 = 271.128; H100 bf16: 989 x 0.803 = 794.167.
      {"training V100 -> A100", WorkloadKind::kTraining, "V100-32GB", Precision::kFp16,
       "A100-80GB", Precision::kBf16, 93.75 / 271.128},
      {"training V100 -> H100", WorkloadKind::kTraining, "V100-32GB", Precision::kFp16,
       "H100-80GB", Precision::kBf16, 93.75 / 794.167},
      {"training A100 -> V100", WorkloadKind::kTraining, "A100-80GB", Precision::kBf16,
       "V100-32GB", Precision::kFp16, 271.128 / 93.75},
      // Batch inference is bandwidth-bound: 900 / 2000 GB/s.
      {"batch inference V100 -> A100", WorkloadKind::kBatchInference, "V100-32GB",
       Precision::kFp16, "A100-80GB", Precision::kBf16, 900.0 / 2000.0},
      // A service runs as long as it is needed, wherever it runs.
      {"service V100 -> A100", WorkloadKind::kRealtimeInference, "V100-32GB", Precision::kFp16,
       "A100-80GB", Precision::kBf16, 1.0},
      {"same model", WorkloadKind::kTraining, "L4", Precision::kBf16, "L4", Precision::kBf16, 1.0},
  };
  for (const Case& c : cases) {
    EXPECT_NEAR(RecordedRunRatio(c.kind, Gpu(c.from), c.p_from, Gpu(c.to), c.p_to), c.want,
                c.want * 1e-6)
        << c.name;
  }
}

TEST(SpotRunMultiplier, EachInstanceIsReclaimedOnItsOwn) {
  JobSpec s;
  s.preemptible = true;
  // Defaults: a 30 min interval and 5 min restart lose 15 + 5 = 20 min = 1/3 h a reclaim.
  EXPECT_DOUBLE_EQ(SpotLossHours(s), 1.0 / 3.0);
  // 1 instance: 0.47 x 1/3 = 0.156667 h lost an hour -> 1 / (1 - 0.156667) = 1.185771.
  EXPECT_NEAR(*SpotRunMultiplier(s, 1), 1.0 / (1.0 - 0.47 / 3.0), 1e-12);
  // 2 instances: 0.313333 -> 1 / 0.686667 = 1.456311.
  EXPECT_NEAR(*SpotRunMultiplier(s, 2), 1.0 / (1.0 - 2 * 0.47 / 3.0), 1e-12);
  // 4 instances: 0.626667 >= 0.5: spot refused.
  EXPECT_FALSE(SpotRunMultiplier(s, 4).has_value());
}

TEST(CheckpointOf, DefaultsWhereTheJobStatesNone) {
  EXPECT_EQ(CheckpointOf({}).interval_s, 1800);
  EXPECT_EQ(CheckpointOf({}).restart_overhead_s, 300);
  Checkpoint stated;
  stated.interval_s = 600;
  EXPECT_EQ(CheckpointOf(stated).interval_s, 600);
  EXPECT_EQ(CheckpointOf(stated).restart_overhead_s, 300);
}

TEST(MigRunHours, BandwidthBoundBySliceMemoryComputeBoundByComputeSlices) {
  auto cat = testing::TestCatalog();
  const catalog::GpuModel& h100 = *cat->FindGpu("H100-80GB");
  const catalog::MigProfile& slice = h100.mig_profiles[2];  // 3g.40gb: 3 of 7, 4 of 8
  ASSERT_EQ(slice.name, "3g.40gb");
  JobSpec counted;
  counted.work.form = Work::Form::kTokens;
  GpuEstimate e;
  e.throughput.run_hours = 2;
  e.throughput.bound = "memory-bandwidth";  // decode reads half the GPU's bandwidth
  EXPECT_DOUBLE_EQ(MigRunHours(counted, e, h100, slice), 2.0 * 8 / 4);
  e.throughput.bound = "compute";  // 3 of 7 compute slices
  EXPECT_DOUBLE_EQ(MigRunHours(counted, e, h100, slice), 2.0 * 7 / 3);
  JobSpec stated;  // a run of stated duration lasts as long
  EXPECT_DOUBLE_EQ(MigRunHours(stated, e, h100, slice), 2.0);
}

TEST(SpanFactor, SpreadGpusPayTheNetworkForEveryCollective) {
  auto cat = testing::TestCatalog();
  const catalog::GpuModel& h100 = *cat->FindGpu("H100-80GB");
  JobSpec s;
  s.kind = WorkloadKind::kFineTuning;
  s.model.params_b = 7;
  s.model.layers = 32;
  s.model.hidden = 4096;
  s.work.form = Work::Form::kTokens;
  s.work.tokens = 1e9;
  const ResolvedJob job = Resolve(s);
  ThroughputQuery q;
  q.gpus = 2;
  q.net = ReferenceInterconnect(h100, *cat);  // NVLink 4 900 GB/s; 1,000 Gbit/s a node
  // One node: ZeRO-3 over 2 GPUs, a step of 2048 x 2048 tokens computes
  // (6 x 7e9 + 12 x 32 x 2048 x 4096) x 4194304 / (2 x 989e12 x 0.803 x 4096
  // / (4096 + 2177) = 2 x 989e12 x 0.52432) = 182.883 s of matmuls +
  // element-wise kernels, 13,456,725 B a token ((22 + 88/3) x 32 x 4096 x 2)
  // x 4194304 / (2 x 3350 GB/s x 0.80) = 10.530 s: 193.413 s; its gathers,
  // 1024 x 3 x 1/2 x 14e9 B / 360 GB/s = 59.7 s, hide in 2/3 of it.
  // Spread, one GPU a node at 1000 / 8 Gbit/s x 0.80 = 12.5 GB/s: ZeRO-3's
  // 1024 x 3 x 1/2 x 14e9 / 12.5e9 = 1720 s would not hide; ZeRO-1 over 2
  // (74.7 GiB) does not fit 72; two pipeline stages (61.7 GiB) do: bubble
  // 193.413 / 2048 = 0.094 s + sends 2 x 2048 x 2048 x 4096 x 2 B / 12.5e9 =
  // 5.498 s: 199.005 / 193.413 = 1.0289.
  EXPECT_NEAR(SpanFactor(job, h100, *cat, q), 1.0289, 1e-4);
  q.gpus = 16;  // past one node the estimate already spans nodes
  EXPECT_DOUBLE_EQ(SpanFactor(job, h100, *cat, q), 1.0);
  q.gpus = 1;
  EXPECT_DOUBLE_EQ(SpanFactor(job, h100, *cat, q), 1.0);
  JobSpec stated;  // a run of stated duration does not speed up or slow down
  q.gpus = 2;
  EXPECT_DOUBLE_EQ(SpanFactor(Resolve(stated), h100, *cat, q), 1.0);
}

}  // namespace
}  // namespace meridian::estimate
