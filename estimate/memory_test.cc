#include "estimate/memory.h"

#include <gtest/gtest.h>

#include "estimate/test_catalog.h"

namespace meridian::estimate {
namespace {

using testing::TestCatalog;

JobSpec FineTune7B() {
  JobSpec j;
  j.kind = WorkloadKind::kFineTuning;
  j.model.params_b = 7;
  j.model.layers = 32;
  j.model.hidden = 4096;
  j.model.heads = 32;
  j.model.seq_len = 2048;
  j.model.micro_batch = 1;
  return j;
}

TEST(MemoryTest, TrainingStateIsSixteenBytesPerParam) {
  ModelDims d{7e9, 32, 4096, 32, 32, 2048, 1, 1, 0};
  MemoryEstimate m = TrainingMemory(d, Precision::kBf16, 1);
  // 7e9 x 2 B = 13.04 GiB weights, 13.04 GiB grads, 7e9 x 12 B = 78.23 GiB
  // optimizer (fp32 master 4 + Adam moments 8): 7e9 x 16 = 112e9 B = 104.3 GiB.
  EXPECT_NEAR(m.weights_gib, 13.04, 0.01);
  EXPECT_NEAR(m.gradients_gib, 13.04, 0.01);
  EXPECT_NEAR(m.optimizer_gib, 78.23, 0.01);
  // Activations 34 x 2048 x 1 x 4096 x 32 = 9.126e9 B = 8.50 GiB.
  EXPECT_NEAR(m.activations_gib, 8.50, 0.01);
  // 104.31 + 8.50 + 1.0 overhead = 113.81 GiB on one GPU.
  EXPECT_NEAR(m.per_gpu_gib, 113.81, 0.01);
  // fp32 training: 4 + 4 + 8 = still 16 B/param.
  MemoryEstimate f = TrainingMemory(d, Precision::kFp32, 1);
  EXPECT_NEAR(f.weights_gib + f.gradients_gib + f.optimizer_gib, 104.31, 0.01);
}

TEST(MemoryTest, ZeroThreeShardsStateNotActivations) {
  ModelDims d{7e9, 32, 4096, 32, 32, 2048, 1, 1, 0};
  MemoryEstimate m = TrainingMemory(d, Precision::kBf16, 2);
  // 104.31 / 2 = 52.15 state + 8.50 act + 1.0 = 61.65 GiB per GPU.
  EXPECT_NEAR(m.per_gpu_gib, 61.65, 0.01);
  // total: 104.31 + 2 x (8.50 + 1.0) = 123.31 GiB.
  EXPECT_NEAR(m.total_gib, 123.31, 0.01);
}

struct FitCase {
  const char* gpu;
  int gpus;  // 0 = rejected
};

TEST(MemoryTest, SmallestCountThatFitsEachGpu) {
  auto cat = TestCatalog();
  ResolvedJob job = Resolve(FineTune7B());
  const FitCase cases[] = {
      // one 80 GiB H100 (72 GiB usable) cannot hold 113.8 GiB; two can (61.65).
      {"H100-80GB", 2},
      {"A100-80GB", 2},
      // L40S 48 x 0.9 = 43.2 usable: 2 GPUs 61.65 no; 4 GPUs 26.08 + 9.5 = 35.58 yes.
      {"L40S", 4},
      // L4 21.6 usable: 8 GPUs 13.04 + 9.5 = 22.54 no; 16 GPUs 6.52 + 9.5 = 16.02 yes.
      {"L4", 16},
  };
  for (const auto& c : cases) {
    MemoryFit fit = FitMemory(job, *cat->FindGpu(c.gpu));
    ASSERT_TRUE(fit.memory.has_value()) << c.gpu << ": " << fit.reason;
    EXPECT_EQ(fit.memory->gpus, c.gpus) << c.gpu;
    EXPECT_FALSE(fit.shortfall.has_value()) << c.gpu;
  }
}

TEST(MemoryTest, StatedCountThatCannotHoldTheStateIsRejected) {
  auto cat = TestCatalog();
  JobSpec spec = FineTune7B();
  spec.resources.gpus = 1;
  MemoryFit fit = FitMemory(Resolve(spec), *cat->FindGpu("H100-80GB"));
  EXPECT_FALSE(fit.memory.has_value());
  // 104.31 + 8.50 + 1.0 = 113.8 GiB even at micro_batch 1.
  EXPECT_NE(fit.reason.find("113.8 GiB per GPU at gpus: 1 with micro_batch 1"), std::string::npos)
      << fit.reason;
}

TEST(MemoryTest, ShortfallHalvesMicroBatchAndPricesTheSlowdown) {
  auto cat = TestCatalog();
  JobSpec spec;
  spec.kind = WorkloadKind::kTraining;
  spec.model.params_b = 1.3;
  spec.model.layers = 24;
  spec.model.hidden = 2048;
  spec.model.heads = 16;
  spec.model.seq_len = 2048;
  spec.model.micro_batch = 8;
  spec.resources.gpus = 1;
  // 1.3e9 x 16 = 20.8e9 B = 19.37 GiB state; act 34 x 2048 x 8 x 2048 x 24 =
  // 27.38e9 B = 25.50 GiB; + 1.0 = 45.87 GiB > 43.2 usable on L40S. micro_batch
  // 4: 19.37 + 12.75 + 1.0 = 33.12 fits; one halving = run time x 1.10.
  MemoryFit fit = FitMemory(Resolve(spec), *cat->FindGpu("L40S"));
  ASSERT_TRUE(fit.memory.has_value()) << fit.reason;
  ASSERT_TRUE(fit.shortfall.has_value());
  EXPECT_EQ(fit.shortfall->reduced_micro_batch, 4);
  EXPECT_NEAR(fit.shortfall->needed_gib, 45.87, 0.01);
  EXPECT_NEAR(fit.shortfall->available_gib, 43.2, 0.01);
  EXPECT_NEAR(fit.shortfall->slowdown, 1.10, 1e-9);
  EXPECT_NEAR(fit.memory->per_gpu_gib, 33.12, 0.01);
}

TEST(MemoryTest, InferenceIsWeightsPlusKvCache) {
  JobSpec spec;
  spec.kind = WorkloadKind::kRealtimeInference;
  spec.model.params_b = 7;
  spec.model.layers = 32;
  spec.model.hidden = 4096;
  spec.model.heads = 32;
  spec.model.seq_len = 4096;
  spec.model.batch = 8;
  ResolvedJob job = Resolve(spec);
  MemoryEstimate m = MemoryAt(job, 1, 1);
  // weights 7e9 x 2 B = 13.04 GiB; KV 2 x 32 x 32 x 128 x 4096 x 8 x 2 B =
  // 17.18e9 B = 16.00 GiB; + 1.0 = 30.04 GiB: one L40S (43.2 usable) holds it,
  // one L4 (21.6) does not; two L4s: 29.04 / 2 + 1.0 = 15.52 GiB each.
  EXPECT_NEAR(m.weights_gib, 13.04, 0.01);
  EXPECT_NEAR(m.kv_cache_gib, 16.00, 0.01);
  EXPECT_NEAR(m.per_gpu_gib, 30.04, 0.01);
  auto cat = TestCatalog();
  EXPECT_EQ(FitMemory(job, *cat->FindGpu("L40S")).memory->gpus, 1);
  MemoryFit fit = FitMemory(job, *cat->FindGpu("L4"));
  ASSERT_TRUE(fit.memory.has_value());
  EXPECT_EQ(fit.memory->gpus, 2);
  EXPECT_NEAR(fit.memory->per_gpu_gib, 15.52, 0.01);
  // Grouped-query attention with 8 KV heads: KV is a quarter, 4.00 GiB.
  spec.model.kv_heads = 8;
  EXPECT_NEAR(MemoryAt(Resolve(spec), 1, 1).kv_cache_gib, 4.00, 0.01);
}

TEST(MemoryTest, StatedVramUsesAllOfTheGpu) {
  auto cat = TestCatalog();
  JobSpec spec;
  spec.kind = WorkloadKind::kRendering;
  spec.resources.vram_gib = 30;
  ResolvedJob job = Resolve(spec);
  // A stated need may use all 32 GiB of a V100-32GB (no headroom), not 24 GiB of an L4.
  EXPECT_TRUE(FitMemory(job, *cat->FindGpu("V100-32GB")).memory.has_value());
  MemoryFit l4 = FitMemory(job, *cat->FindGpu("L4"));
  EXPECT_FALSE(l4.memory.has_value());
  EXPECT_EQ(FitMemory(job, *cat->FindGpu("H100-80GB")).memory->method, "stated vram_gib");
}

TEST(MemoryTest, MigNotesTheSmallestSliceThatHoldsTheJob) {
  auto cat = TestCatalog();
  JobSpec spec;
  spec.kind = WorkloadKind::kBatchInference;
  spec.resources.vram_gib = 8;
  spec.resources.mig = true;
  // 8 GiB stated fits 1g.10gb (10 GiB), the smallest H100 slice.
  MemoryFit fit = FitMemory(Resolve(spec), *cat->FindGpu("H100-80GB"));
  ASSERT_TRUE(fit.mig_profile.has_value());
  EXPECT_EQ(*fit.mig_profile, "1g.10gb");
  spec.resources.vram_gib = 15;  // next: 1g.20gb
  EXPECT_EQ(*FitMemory(Resolve(spec), *cat->FindGpu("H100-80GB")).mig_profile, "1g.20gb");
  // No MIG on L40S.
  EXPECT_FALSE(FitMemory(Resolve(spec), *cat->FindGpu("L40S")).mig_profile.has_value());
}

TEST(MemoryTest, CandidateCounts) {
  EXPECT_EQ(CandidateCounts(3), std::vector<int>({3}));
  EXPECT_EQ(CandidateCounts(std::nullopt),
            std::vector<int>({1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64}));
}

TEST(MemoryTest, ShapeFromParams) {
  // cbrt(7e9 / 196608) = 32.9 -> 33 layers, hidden 128 x 33 = 4224.
  ModelDims d = ShapeFromParams(7e9);
  EXPECT_EQ(d.layers, 33);
  EXPECT_EQ(d.hidden, 4224);
}

}  // namespace
}  // namespace meridian::estimate
