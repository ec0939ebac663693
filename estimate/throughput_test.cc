#include "estimate/throughput.h"

#include <gtest/gtest.h>

#include "estimate/test_catalog.h"

namespace meridian::estimate {
namespace {

using testing::TestCatalog;

JobSpec Training7B(double tokens) {
  JobSpec j;
  j.kind = WorkloadKind::kFineTuning;
  j.model.params_b = 7;
  j.model.layers = 32;
  j.model.hidden = 4096;
  j.work.form = Work::Form::kTokens;
  j.work.tokens = tokens;
  return j;
}

// A query on `gpus` GPUs of `gpu` over its reference interconnect (in the test
// catalog: H100 NVLink 4 at 900 GB/s, the a3-highgpu-8g's 1,000 Gbit/s).
ThroughputQuery On(const catalog::Catalog& cat, const std::string& gpu, int gpus,
                   Recompute r = Recompute::kNone) {
  ThroughputQuery q;
  q.gpus = gpus;
  q.recompute = r;
  q.net = ReferenceInterconnect(*cat.FindGpu(gpu), cat);
  return q;
}

// One GPU, its run slowed by `slowdown`; no interconnect (one GPU needs none).
ThroughputQuery Slowed(double slowdown) {
  ThroughputQuery q;
  q.gpus = 1;
  q.slowdown = slowdown;
  return q;
}

struct ComputeCase {
  const char* gpu;
  int gpus;
  double hours;
};

TEST(ThroughputTest, TrainingCountsSixPTPlusAttention) {
  auto cat = TestCatalog();
  ResolvedJob job = Resolve(Training7B(1e9));
  // 6 x 7e9 x 1e9 = 4.2e19 FLOP of weights + attention at the default 2048
  // context, 12 x 32 layers x 2048 x 4096 x 1e9 = 3.2212e18: 4.52212e19 FLOP.
  // Element-wise kernels: (22 + 88/3) values x 32 layers x 4096 x 2 B =
  // 13,456,725 B a token, x 1e9 = 1.345673e16 B over HBM x 0.80.
  // The matmuls run at the best-shape efficiency x 4096 / (4096 + h0).
  const ComputeCase cases[] = {
      // H100 bf16 989 TFLOPS x 0.803 x 4096 / (4096 + 2177) = 989 x 0.52432 =
      // 518.56 TFLOPS: 4.52212e19 / 5.1856e14 = 87206 s; + 1.345673e16 B /
      // (3350 GB/s x 0.80) = 5021 s: 92227 s = 25.619 h.
      {"H100-80GB", 1, 25.619},
      // 2 GPUs, ZeRO-3 over NVLink (parallelism_test.cc, OneNode): the
      // gathers (59.7 s a step) hide behind 2/3 of the step's compute:
      // 25.619 / 2 = 12.809 h.
      {"H100-80GB", 2, 12.809},
      // A100 312 x 0.869 x 4096 / (4096 + 875) = 312 x 0.71604 = 223.40
      // TFLOPS: 4.52212e19 / 2.2340e14 = 202419 s + 1.345673e16 / (2000 GB/s
      // x 0.80) = 8410 s: 210829 s = 58.564 h.
      {"A100-80GB", 1, 58.564},
      // L40S has no measured efficiency: the default 0.75 x 4096 / (4096 +
      // 2177, the rule for a model without a measured h0) = 0.48972, 362 x
      // 0.48972 = 177.28 TFLOPS: 255087 s = 70.857 h + 1.345673e16 / (864
      // GB/s x 0.80) = 19469 s = 5.408 h: 76.265 h.
      {"L40S", 1, 76.265},
      // 16 GPUs on two nodes: two pipeline stages of 8 replicas, whose
      // all-reduce stays within a node. A step of 2048 x 2048 tokens computes
      // 14.927 s of matmuls at 0.803 (parallelism_test.cc, TwoNodes), x 0.803 /
      // 0.52432 = 22.861 s, + 13,456,725 x 4,194,304 B / (16 x 2.68e12 B/s) =
      // 1.316 s element-wise = 24.177 s; bubble 24.177 / 256 = 0.094 s; sends
      // 0.687 s: x 1.03232. 25.619 / 16 x 1.03232 = 1.6529 h.
      {"H100-80GB", 16, 1.6529},
  };
  for (const auto& c : cases) {
    auto t = EstimateThroughput(job, *cat->FindGpu(c.gpu), *cat, On(*cat, c.gpu, c.gpus));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_NEAR(t->run_hours, c.hours, 0.001) << c.gpu << " x" << c.gpus;
    EXPECT_EQ(t->bound, "compute");
  }
  auto l40s = EstimateThroughput(job, *cat->FindGpu("L40S"), *cat, {});
  EXPECT_FALSE(l40s->efficiency_measured);
  EXPECT_TRUE(EstimateThroughput(job, *cat->FindGpu("H100-80GB"), *cat, {})
                  ->efficiency_measured);
}

TEST(ThroughputTest, FullRecomputationCountsOneMoreForwardPass) {
  auto cat = TestCatalog();
  const catalog::GpuModel& h100 = *cat->FindGpu("H100-80GB");
  ThroughputQuery q = On(*cat, "H100-80GB", 1, Recompute::kFull);
  // Four forward passes, not three: (8 x 7e9 + 16 x 32 x 2048 x 4096) x 1e9 =
  // 6.02950e19 FLOP / (989e12 x 0.52432 = 5.1856e14) = 116275 s, + the
  // forward's element-wise kernels twice: (2 x 22 + 88/3) x 32 x 4096 x 2 B x
  // 1e9 = 1.922389e16 B / 2.68e12 B/s = 7173 s: 123448 s = 34.291 h.
  auto t = EstimateThroughput(Resolve(Training7B(1e9)), h100, *cat, q);
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR(t->run_hours, 34.291, 0.001);
  EXPECT_TRUE(t->arithmetic.starts_with(
      "efficiency 0.803 x 4096 / (4096 + 2177) = 0.524; (8 x 7e+09 + 16 x 32 x 2048 x 4096 attention) x 1e+09 (one more forward with "
      "recomputation)"))
      << t->arithmetic;
  // Stated FLOPs take the extra forward pass as x 4/3: 4.2e19 x 4/3 = 5.6e19 /
  // 5.1856e14 = 107992 s = 29.998 h (no tokens: no element-wise kernels).
  JobSpec flops = Training7B(0);
  flops.work.form = Work::Form::kFlops;
  flops.work.flops = 4.2e19;
  EXPECT_NEAR(EstimateThroughput(Resolve(flops), h100, *cat, q)->run_hours, 29.998, 0.001);
  // Inference never recomputes: 2 x P x T as before.
  JobSpec infer = Training7B(1e9);
  infer.kind = WorkloadKind::kBatchInference;
  auto a = EstimateThroughput(Resolve(infer), h100, *cat, q);
  auto b = EstimateThroughput(Resolve(infer), h100, *cat, {});
  EXPECT_DOUBLE_EQ(a->run_hours, b->run_hours);
}

TEST(ThroughputTest, ElementwiseKernelsAreChargedPerTrainedTokenAtHbmBandwidth) {
  ResolvedJob job = Resolve(Training7B(1e9));
  // Per token and layer, in hidden-sized values: forward 2 norms 4 + rotary 4
  // + SwiGLU 3 x 8/3 = 8 + 2 residual adds 6 = 22; backward norms 6 + rotary
  // 4 + SwiGLU 5 x 8/3 + gradient adds 6 = 88/3. x 32 layers x 4096 x 2 B:
  // 154/3 x 262144 = 13,456,725.33 B; with recomputation (44 + 88/3) x 262144
  // = 19,223,893.33 B.
  EXPECT_NEAR(ElementwiseBytesPerToken(*job.dims, false, 2), 13456725.33, 0.01);
  EXPECT_NEAR(ElementwiseBytesPerToken(*job.dims, true, 2), 19223893.33, 0.01);
  auto cat = TestCatalog();
  auto t = EstimateThroughput(job, *cat->FindGpu("H100-80GB"), *cat, On(*cat, "H100-80GB", 1));
  ASSERT_TRUE(t.ok());
  // 1.345673e16 B / (3350 GB/s x 0.80) = 5021 s, shown in the arithmetic.
  EXPECT_NE(t->arithmetic.find("+ element-wise (22 + 88/3) x 32 x 4096 x 2 B x 1e+09 / (1 x "
                               "3350 GB/s x 0.80) = 5021 s"),
            std::string::npos)
      << t->arithmetic;
}

TEST(ThroughputTest, SlowdownOfASmallerMicroBatchLengthensTheRun) {
  auto cat = TestCatalog();
  auto t = EstimateThroughput(Resolve(Training7B(1e9)), *cat->FindGpu("H100-80GB"), *cat,
                              Slowed(1.10));
  // 25.619 h x 1.10 = 28.180 h.
  EXPECT_NEAR(t->run_hours, 28.180, 0.001);
}

TEST(ThroughputTest, Bf16IsNotNativeOnV100) {
  auto cat = TestCatalog();
  auto t = EstimateThroughput(Resolve(Training7B(1e9)), *cat->FindGpu("V100-32GB"), *cat, {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnresolvable);
  EXPECT_EQ(t.status().message(), "bf16 is not supported natively on V100-32GB");
}

TEST(ThroughputTest, Fp64UsesTheFp64RateNeverFp32) {
  auto cat = TestCatalog();
  JobSpec j;
  j.kind = WorkloadKind::kScientific;  // default precision fp64
  j.work.form = Work::Form::kFlops;
  j.work.flops = 1e18;
  ResolvedJob job = Resolve(j);
  EXPECT_EQ(job.precision, Precision::kFp64);
  auto t = EstimateThroughput(job, *cat->FindGpu("V100-32GB"), *cat, {});
  ASSERT_TRUE(t.ok());
  // V100 fp64 7.8 TFLOPS (fp32 would be 15.7) x 0.70 = 5.46 TFLOPS:
  // 1e18 / 5.46e12 = 183150 s = 50.875 h.
  EXPECT_DOUBLE_EQ(t->peak_tflops_per_gpu, 7.8);
  EXPECT_NEAR(t->run_hours, 50.875, 0.001);
  // A stencil code at 0.5 FLOP/byte moves 1e18 / 0.5 = 2e18 B: over 900 GB/s
  // x 0.80 = 720 GB/s that is 2.778e6 s = 771.6 h, far above the 50.875 h of
  // compute: bandwidth-bound (Roofline, Williams et al. 2009).
  JobSpec stencil = j;
  stencil.work.arithmetic_intensity = 0.5;
  auto bw = EstimateThroughput(Resolve(stencil), *cat->FindGpu("V100-32GB"), *cat, {});
  ASSERT_TRUE(bw.ok());
  EXPECT_EQ(bw->bound, "memory-bandwidth");
  EXPECT_NEAR(bw->run_hours, 771.605, 0.001);
  // At 20 FLOP/byte: 5e16 B / 720 GB/s = 69444 s < 183150 s: compute-bound.
  stencil.work.arithmetic_intensity = 20;
  bw = EstimateThroughput(Resolve(stencil), *cat->FindGpu("V100-32GB"), *cat, {});
  EXPECT_EQ(bw->bound, "compute");
  EXPECT_NEAR(bw->run_hours, 50.875, 0.001);
  // L40S and L4 have no fp64 in the catalog: ineligible.
  EXPECT_FALSE(EstimateThroughput(job, *cat->FindGpu("L40S"), *cat, {}).ok());
}

TEST(ThroughputTest, RenderingGpuHoursConvertByBandwidth) {
  auto cat = TestCatalog();
  JobSpec j;
  j.kind = WorkloadKind::kRendering;
  j.work.form = Work::Form::kGpuHours;
  j.work.gpu_hours = 100;
  j.work.on_gpu = "A100-80GB";
  // 100 h on A100-80GB (2000 GB/s) -> L40S (864 GB/s): 100 x 2000 / 864 = 231.48 h.
  auto t = EstimateThroughput(Resolve(j), *cat->FindGpu("L40S"), *cat, {});
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR(t->run_hours, 231.481, 0.001);
  EXPECT_EQ(t->bound, "memory-bandwidth");
  // -> H100 (3350 GB/s): 100 x 2000 / 3350 = 59.70 h; on 4 GPUs 59.70 / 4 =
  // 14.925 h: rendering has no model shape to lay out, so no communication.
  auto h = EstimateThroughput(Resolve(j), *cat->FindGpu("H100-80GB"), *cat,
                              On(*cat, "H100-80GB", 4));
  EXPECT_NEAR(h->run_hours, 14.925, 0.001);
}

TEST(ThroughputTest, TrainingGpuHoursConvertByComputeAtPrecision) {
  auto cat = TestCatalog();
  // 100 GPU-h on A100 bf16 (312 x 0.869 = 271.13 TFLOPS) -> H100 (989 x 0.803 =
  // 794.17): 100 x 271.13 / 794.17 = 34.14 h.
  Result<double> h = ConvertGpuHours(100, *cat->FindGpu("A100-80GB"), *cat->FindGpu("H100-80GB"),
                                     Precision::kBf16, WorkloadKind::kTraining);
  ASSERT_TRUE(h.ok());
  EXPECT_NEAR(*h, 34.140, 0.001);
  // The target lacking the precision is a per-GPU rejection.
  Result<double> v = ConvertGpuHours(100, *cat->FindGpu("A100-80GB"), *cat->FindGpu("V100-32GB"),
                                     Precision::kBf16, WorkloadKind::kTraining);
  EXPECT_EQ(v.status().code(), StatusCode::kUnresolvable);
}

TEST(ThroughputTest, StatedGpuHoursOfAModelConvertAtItsWidthOnBothGpus) {
  auto cat = TestCatalog();
  JobSpec j = Training7B(0);
  j.work.form = Work::Form::kGpuHours;
  j.work.gpu_hours = 100;
  j.work.on_gpu = "A100-80GB";
  // A 4096-wide model: A100 312 x 0.869 x 4096 / (4096 + 875) = 223.40
  // TFLOPS, H100 989 x 0.803 x 4096 / (4096 + 2177) = 518.56: 100 x 223.40 /
  // 518.56 = 43.08 h on one H100 (34.14 h at the best shapes, x 6273 / 4971).
  auto t = EstimateThroughput(Resolve(j), *cat->FindGpu("H100-80GB"), *cat, {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_NEAR(t->run_hours, 43.08, 0.01);
}

TEST(ThroughputTest, DecodeIsBoundByMemoryBandwidth) {
  auto cat = TestCatalog();
  JobSpec j;
  j.kind = WorkloadKind::kBatchInference;
  j.model.params_b = 7;
  j.model.layers = 32;
  j.model.hidden = 4096;
  j.model.heads = 32;
  j.model.kv_heads = 8;
  j.model.seq_len = 4096;
  j.model.batch = 32;
  j.work.form = Work::Form::kTokens;
  j.work.tokens = 1e8;
  auto t = EstimateThroughput(Resolve(j), *cat->FindGpu("H100-80GB"), *cat, {});
  ASSERT_TRUE(t.ok());
  // compute: 2 x 7e9 x 1e8 = 1.4e18 / 7.942e14 = 1763 s.
  // memory: 1e8 / 32 = 3.125e6 steps; each reads 14e9 B weights + half the KV
  // cache (2 x 32 x 8 x 128 x 4096 x 32 x 2 B = 17.18e9 B, half 8.59e9) =
  // 22.59e9 B over 3350 GB/s x 0.80 = 2680 GB/s: 8.429 ms x 3.125e6 = 26341 s = 7.317 h.
  EXPECT_EQ(t->bound, "memory-bandwidth");
  EXPECT_NEAR(t->run_hours, 7.317, 0.001);
  // Tensor-parallel over 4 GPUs of a node: memory 26341 / 4 = 6585.2 s (each
  // GPU reads its quarter of the weights and cache), plus two all-reduces per
  // layer of every token's hidden vector: 2 x 32 x 2(4-1)/4 x 1e8 x 4096 x 2 B
  // / (900 / 2 x 0.80 = 360 GB/s) = 218.45 s; 6803.7 s = 1.8899 h.
  auto tp = EstimateThroughput(Resolve(j), *cat->FindGpu("H100-80GB"), *cat,
                               On(*cat, "H100-80GB", 4));
  ASSERT_TRUE(tp.ok());
  EXPECT_NEAR(tp->run_hours, 1.8899, 1e-4);
  EXPECT_EQ(tp->layout, "TP 4");
  EXPECT_NEAR(tp->communication_share, 218.45 / 6803.7, 1e-4);
}

TEST(ThroughputTest, ServiceWithoutWorkRunsOneHourByDefault) {
  auto cat = TestCatalog();
  JobSpec j;
  j.kind = WorkloadKind::kRealtimeInference;
  auto t = EstimateThroughput(Resolve(j), *cat->FindGpu("L4"), *cat, Slowed(1.3));
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->run_hours, 1.0);
  EXPECT_EQ(t->bound, "stated");
  j.work.duration_s = 7200;
  EXPECT_DOUBLE_EQ(EstimateThroughput(Resolve(j), *cat->FindGpu("L4"), *cat, {})->run_hours,
                   2.0);
}

TEST(ThroughputTest, TokensWithoutParamsAreAJobError) {
  auto cat = TestCatalog();
  JobSpec j;
  j.kind = WorkloadKind::kTraining;
  j.work.form = Work::Form::kTokens;
  j.work.tokens = 1e9;
  auto t = EstimateThroughput(Resolve(j), *cat->FindGpu("L4"), *cat, {});
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace meridian::estimate
