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
    EXPECT_EQ(fit.memory->recompute, Recompute::kNone) << c.gpu;
  }
}

TEST(MemoryTest, StatedCountThatCannotHoldTheStateIsRejected) {
  auto cat = TestCatalog();
  JobSpec spec = FineTune7B();
  spec.resources.gpus = 1;
  MemoryFit fit = FitMemory(Resolve(spec), *cat->FindGpu("H100-80GB"));
  EXPECT_FALSE(fit.memory.has_value());
  // Even with full recomputation at micro_batch 1: 104.31 state + layer inputs
  // 2 x 2048 x 1 x 4096 x 32 = 0.54e9 B = 0.50 GiB + one layer's working set
  // 34 x 2048 x 1 x 4096 = 0.29e9 B = 0.27 GiB + 1.0 = 106.07 GiB > 72.0.
  EXPECT_NE(fit.reason.find("106.1 GiB per GPU at gpus: 1 with micro_batch 1 and full "
                            "activation recomputation"),
            std::string::npos)
      << fit.reason;
}

JobSpec FineTune70B() {
  // examples/fine-tuning.yaml: Llama-2/3 70B shape.
  JobSpec j;
  j.kind = WorkloadKind::kFineTuning;
  j.model.params_b = 70;
  j.model.layers = 80;
  j.model.hidden = 8192;
  j.model.heads = 64;
  j.model.kv_heads = 8;
  j.model.seq_len = 4096;
  j.model.micro_batch = 1;
  return j;
}

TEST(MemoryTest, FullRecomputationKeepsOnlyLayerInputsAndOneLayer) {
  ModelDims d{70e9, 80, 8192, 64, 8, 4096, 1, 1, 0};
  // Stored: 34 x 4096 x 1 x 8192 x 80 = 91.27e9 B = 85.00 GiB.
  EXPECT_NEAR(ActivationBytes(d) / kBytesPerGiB, 85.0, 1e-9);
  // Recomputed: inputs 2 x 4096 x 1 x 8192 x 80 = 5.369e9 B = 5.00 GiB, + one
  // layer's working set 34 x 4096 x 1 x 8192 = 1.141e9 B = 1.0625 GiB = 6.0625 GiB.
  EXPECT_NEAR(RecomputedActivationBytes(d) / kBytesPerGiB, 6.0625, 1e-9);
  MemoryEstimate m = TrainingMemory(d, Precision::kBf16, 24, Recompute::kFull);
  // 70e9 x 16 = 1.12e12 B = 1043.08 GiB / 24 = 43.46 + 6.06 + 1.0 = 50.52 GiB.
  EXPECT_NEAR(m.per_gpu_gib, 50.52, 0.01);
  EXPECT_EQ(m.recompute, Recompute::kFull);
  EXPECT_EQ(m.method, "ZeRO-3 over 24 GPUs, full activation recomputation");
  EXPECT_NE(m.arithmetic.find("activations with full recomputation: 2 x 4096 x 1 x 8192 x 80 B "
                              "= 5.0 GiB + one layer's working set 34 x 4096 x 1 x 8192 B = 1.1 "
                              "GiB"),
            std::string::npos)
      << m.arithmetic;
}

struct LadderCase {
  const char* name;
  JobSpec job;
  const char* gpu;
  int gpus;
  int micro_batch;
  Recompute recompute;
};

JobSpec Small(double params_b, int layers, int hidden, int micro_batch) {
  JobSpec j;
  j.kind = WorkloadKind::kTraining;
  j.model.params_b = params_b;
  j.model.layers = layers;
  j.model.hidden = hidden;
  j.model.heads = hidden / 128;
  j.model.seq_len = 2048;
  j.model.micro_batch = micro_batch;
  j.resources.gpus = 1;
  return j;
}

// The fit ladder picks the fewest GPU-hours: cost = slowdown(micro_batch) x
// (4/3 with recomputation) / scaling(N); scaling is 1.0 (1 GPU), 0.95 (2-8), 0.90.
TEST(MemoryTest, FitLadderPicksTheCheapestWayToHoldTheJob) {
  auto cat = TestCatalog();
  const LadderCase cases[] = {
      // 7B on H100: 2 GPUs hold it as is (61.65 <= 72.0): cost 1 / 0.95 = 1.05.
      {"7B H100", FineTune7B(), "H100-80GB", 2, 1, Recompute::kNone},
      // 7B on L4 (21.6 usable): recomputation fits 8 GPUs (13.04 + 0.50 + 0.27
      // + 1.0 = 14.81), cost 1.333 / 0.95 = 1.40; stored activations fit 16
      // (6.52 + 8.50 + 1.0 = 16.02), cost 1 / 0.90 = 1.11: more GPUs win.
      {"7B L4", FineTune7B(), "L4", 16, 1, Recompute::kNone},
      // 70B on H100: stored activations never fit (64 GPUs: 16.30 + 85.0 + 1.0
      // = 102.3 > 72.0); recomputed at 16: 65.19 + 6.06 + 1.0 = 72.26 > 72.0;
      // at 24: 43.46 + 6.06 + 1.0 = 50.52 fits.
      {"70B H100", FineTune70B(), "H100-80GB", 24, 1, Recompute::kFull},
      // 1.3B, micro_batch 8 on one L40S (43.2 usable): 45.87 does not fit;
      // micro_batch 4 (33.12) costs 1.10, recomputation at 8 (19.37 + 1.5 +
      // 1.06 + 1.0 = 22.93) costs 1.33: the smaller micro-batch wins.
      {"1.3B mb8 L40S", Small(1.3, 24, 2048, 8), "L40S", 1, 4, Recompute::kNone},
      // 1.3B, micro_batch 2 on one L4 (21.6 usable): state 19.37 + 1.0 leaves
      // 1.23 GiB, less than one sequence's 34 x 2048 x 2048 x 24 = 3.19 GiB;
      // recomputation at micro_batch 2: 2 x 2048 x 2 x 2048 x 24 = 0.375 GiB +
      // 34 x 2048 x 2 x 2048 = 0.27 GiB: 21.01 fits, cost 1.33 (at micro_batch
      // 1 it would cost 1.10 x 1.33 = 1.47).
      {"1.3B mb2 L4", Small(1.3, 24, 2048, 2), "L4", 1, 2, Recompute::kFull},
  };
  for (const auto& c : cases) {
    MemoryFit fit = FitMemory(Resolve(c.job), *cat->FindGpu(c.gpu));
    ASSERT_TRUE(fit.memory.has_value()) << c.name << ": " << fit.reason;
    EXPECT_EQ(fit.memory->gpus, c.gpus) << c.name;
    EXPECT_EQ(fit.memory->recompute, c.recompute) << c.name;
    int mb = fit.shortfall ? fit.shortfall->reduced_micro_batch : *c.job.model.micro_batch;
    EXPECT_EQ(mb, c.micro_batch) << c.name;
  }
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
