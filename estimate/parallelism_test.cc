#include "estimate/parallelism.h"

#include <gtest/gtest.h>

#include "catalog/catalog.h"
#include "estimate/memory.h"
#include "estimate/run_time.h"
#include "estimate/throughput.h"

namespace meridian::estimate {
namespace {

// 7B: 32 layers, hidden 4096, 32 heads, seq 2048, micro-batch 1, bf16. A step
// is 4,194,304 / 2048 = 2048 sequences. A trained token is 6 x 7e9 = 4.2e10
// FLOP of weights + 12 x 32 x 2048 x 4096 = 3.2212e9 of attention = 4.52212e10,
// so a step computes 4.52212e10 x 2048 x 2048 = 1.89672e17 FLOP.
ModelDims Dims7B() {
  ModelDims d;
  d.params = 7e9;
  d.layers = 32;
  d.hidden = 4096;
  d.heads = 32;
  d.kv_heads = 32;
  d.seq_len = 2048;
  return d;
}

// H100: 989 TFLOPS x 0.803 = 7.94167e14 FLOP/s; 72 GiB usable of 80.
LayoutQuery H100Query(int gpus) {
  LayoutQuery q;
  q.gpus = gpus;
  q.usable_gib = 72;
  q.peak_flops = 989e12 * 0.803;
  q.bytes_per_value = 2;
  return q;
}

// NVLink 4: 900 / 2 GB/s x 0.80 = 360 GB/s; a node's network shared by 8 GPUs.
Interconnect Net(double gbit_per_s) {
  Interconnect n;
  n.gpus_per_node = 8;
  n.intra_gbyte_per_s = 900;
  n.inter_gbit_per_s = gbit_per_s;
  return n;
}

TEST(Parallelism, BusBandwidths) {
  // 900 GB/s bidirectional: 450 one way x 0.80 = 360 GB/s.
  EXPECT_DOUBLE_EQ(IntraNodeBusBytesPerS(Net(1000)), 360e9);
  // 1,000 Gbit/s = 125 GB/s a node / 8 GPUs x 0.80 = 12.5 GB/s a GPU.
  EXPECT_DOUBLE_EQ(InterNodeBusBytesPerS(Net(1000)), 12.5e9);
}

TEST(Parallelism, OneNodeHidesZeroThreeGathersBehindCompute) {
  LayoutChoice c = ChooseLayout(Dims7B(), H100Query(2), Net(1000));
  // ZeRO-1 over 2: 2 x 2 x 7e9 + 12 x 7e9 / 2 = 70e9 B = 65.2 GiB + 8.5 GiB of
  // activations (34 x 2048 x 4096 x 32 B) + 1 = 74.7 GiB > 72: out.
  // ZeRO-3 over 2: 56e9 B = 52.2 + 8.5 + 1 = 61.7 GiB.
  // compute 1.89672e17 / (2 x 7.94167e14) = 119.415 s; 1024 micro-batches x 3
  // x 1/2 x 14e9 B / 360 GB/s = 59.733 s of gathers < 2/3 x 119.415 = 79.61:
  // hidden. TP 2 adds 2048 x 32 x 4 all-reduces x 2(2-1)/2 x 16.78 MB / 360
  // GB/s = 12.2 s; PP 2 a bubble and sends: both slower.
  EXPECT_EQ(c.layout.Describe(), "TP 1 x PP 1 x DP 2 (ZeRO-3)");
  EXPECT_EQ(c.layout.micro_batches, 1024);
  EXPECT_NEAR(c.step.compute_s, 119.415, 1e-3);
  EXPECT_NEAR(c.step.data_s, 59.733, 1e-3);
  EXPECT_DOUBLE_EQ(c.step.data_exposed_s, 0);
  EXPECT_DOUBLE_EQ(c.Slowdown(), 1.0);
  EXPECT_NEAR(c.layout.memory_gib, 61.65, 0.01);
}

TEST(Parallelism, TwoNodesChooseZeroOneOverZeroThree) {
  const ModelDims d = Dims7B();
  const LayoutQuery q = H100Query(16);
  LayoutChoice c = ChooseLayout(d, q, Net(1000));
  // compute 1.89672e17 / (16 x 7.94167e14) = 14.9269 s. DP 16 crosses nodes at
  // 12.5 GB/s a GPU: ZeRO-1 (28e9 + 84e9 / 16 B = 31.0 GiB + 9.5) all-reduces
  // once a step, 2 x 15/16 x 14e9 / 12.5e9 = 2.1 s, in the backward of the
  // last of 128 micro-batches: 2/3 x 14.9269 / 128 = 0.0777 s hides it, 2.0223
  // exposed, 16.9492 s a step. Two pipeline stages of DP 8 keep the
  // all-reduce in a node: 2 x 7/8 x 7e9 / 360e9 = 0.0340 s, under 2/3 x
  // 14.9269 / 256 = 0.0389 s; bubble 14.9269 / 256 = 0.0583 s; sends 2 x 256
  // x 16.777 MB / 12.5 GB/s = 0.6872 s: 15.6724 s, x 1.04994.
  EXPECT_EQ(c.layout.Describe(), "TP 1 x PP 2 x DP 8 (ZeRO-1)");
  EXPECT_EQ(c.layout.micro_batches, 256);
  EXPECT_NEAR(c.step.compute_s, 14.9269, 1e-4);
  EXPECT_NEAR(c.step.data_s, 0.0340278, 1e-6);
  EXPECT_DOUBLE_EQ(c.step.data_exposed_s, 0);
  EXPECT_NEAR(c.step.pipeline_s, 0.687195, 1e-6);
  EXPECT_NEAR(c.Slowdown(), 1.04994, 1e-5);
  Layout dp16{1, 1, 16, ZeroStage::kOne, 128, 2048};
  StepCost one = CostOf(d, q, Net(1000), dp16);
  EXPECT_NEAR(one.data_s, 2.1, 1e-9);
  EXPECT_NEAR(one.data_exposed_s, 2.022256, 1e-6);
  // ZeRO-3 would gather every micro-batch, hidden by every micro-batch's
  // backward: 128 x 3 x 15/16 x 14e9 / 12.5e9 = 403.2 s, 403.2 - 2/3 x
  // 14.9269 = 393.249 s exposed.
  Layout z3{1, 1, 16, ZeroStage::kThree, 128, 2048};
  StepCost s = CostOf(d, q, Net(1000), z3);
  EXPECT_NEAR(s.data_s, 403.2, 1e-9);
  EXPECT_NEAR(s.data_exposed_s, 393.249, 1e-3);
}

// Narayanan et al. 2021, section 2.2.2: with v model chunks a stage, a
// micro-batch crosses every stage v times, so the bubble divides by v and
// the sends multiply by it. 7B on 16 H100s as PP 2 x DP 8 (256
// micro-batches, a multiple of 2): bubble 14.9269 / 256 = 0.05831 s at v = 1,
// 14.9269 / (2 x 256) = 0.02915 s at v = 2; sends 2 x 256 x 16.777 MB /
// 12.5 GB/s = 0.68719 s, x 2 = 1.37439 s. The sends grow more than the bubble
// shrinks, so TwoNodes above keeps one chunk.
TEST(Parallelism, InterleavingDividesTheBubbleAndMultipliesTheSends) {
  const ModelDims d = Dims7B();
  const LayoutQuery q = H100Query(16);
  Layout one{1, 2, 8, ZeroStage::kOne, 256, 2048};
  Layout two = one;
  two.chunks = 2;
  StepCost a = CostOf(d, q, Net(1000), one);
  StepCost b = CostOf(d, q, Net(1000), two);
  EXPECT_NEAR(a.bubble_s, 0.05831, 1e-5);
  EXPECT_NEAR(b.bubble_s, 0.02915, 1e-5);
  EXPECT_NEAR(a.pipeline_s, 0.68719, 1e-5);
  EXPECT_NEAR(b.pipeline_s, 1.37439, 1e-5);
  EXPECT_DOUBLE_EQ(a.compute_s, b.compute_s);
  EXPECT_DOUBLE_EQ(a.tensor_s, b.tensor_s);
  EXPECT_GT(b.total_s, a.total_s);
  EXPECT_EQ(two.Describe(), "TP 1 x PP 2 (2 chunks each) x DP 8 (ZeRO-1)");
}

TEST(Parallelism, ManyNodesOnASlowNetworkUseTensorParallelism) {
  // 64 GPUs, 25 Gbit/s a node: 25 / 8 / 8 x 0.80 = 0.3125 GB/s a GPU.
  // compute 1.89672e17 / (64 x 7.94167e14) = 3.73173 s.
  // DP 64 (ZeRO-1): 2 x 63/64 x 14e9 / 0.3125e9 = 88.2 s, all but 2/3 x
  // 3.73173 / 32 = 0.0777 s exposed.
  // TP 8 x DP 8 (ZeRO-1): data 2 x 7/8 x 14e9 / 8 / 0.3125e9 = 9.8 s, less
  // 2/3 x 3.73173 / 256 = 0.00972 s: 9.79028 exposed; tensor 256
  // micro-batches x 32 layers x 4 x 2(8-1)/8 x 16.777 MB / 360 GB/s = 2.67242
  // s; step 3.73173 + 2.67242 + 9.79028 = 16.1944 s.
  // Pipelines send 2 x m x 16.8 MB over the network (PP 2: 55 s): slower.
  LayoutChoice c = ChooseLayout(Dims7B(), H100Query(64), Net(25));
  EXPECT_EQ(c.layout.Describe(), "TP 8 x PP 1 x DP 8 (ZeRO-1)");
  EXPECT_NEAR(c.step.tensor_s, 2.67242, 1e-5);
  EXPECT_NEAR(c.step.data_exposed_s, 9.79028, 1e-5);
  EXPECT_NEAR(c.step.total_s, 16.1944, 1e-4);
  // (2.67242 + 9.79028) / 16.1944 = 77.0% of the step is communication.
  EXPECT_NEAR(c.step.CommunicationShare(), 0.7696, 1e-4);
}

// A stated global batch sets the micro-batches: Llama 3 405B's 2^24 tokens
// at 8,192 a sequence are 2,048 sequences, 8 a replica over DP 256; the
// default 4,194,304 would be 512, two a replica.
TEST(Parallelism, AStatedGlobalBatchSetsTheMicroBatches) {
  ModelDims d = Dims7B();
  d.seq_len = 8192;
  EXPECT_EQ(GlobalBatch(d, 256, 1), 512);
  d.global_batch_tokens = 16777216;
  EXPECT_EQ(GlobalBatch(d, 256, 1), 2048);
  EXPECT_EQ(GlobalBatch(d, 3, 1), 2049);  // 682.67 a replica, rounded up to 683
}

TEST(Parallelism, PipelineBubble) {
  // PP 4 x DP 1 on 4 GPUs: m = 2048 micro-batches, bubble (4-1)/(2048+4-1)
  // of the pipeline = compute x 3 / 2048.
  const ModelDims d = Dims7B();
  const LayoutQuery q = H100Query(4);
  Layout pp{1, 4, 1, ZeroStage::kOne, 2048, 2048};
  StepCost s = CostOf(d, q, Net(1000), pp);
  EXPECT_NEAR(s.bubble_s / (s.compute_s + s.bubble_s), 3.0 / 2051.0, 1e-12);
}

TEST(Parallelism, InferenceAllReducePerToken) {
  // 1e6 tokens on TP 4 in a node: 2 x 32 layers x 2(4-1)/4 x 1e6 x 4096 x 2 B
  // / 360 GB/s = 2.18453 s.
  EXPECT_NEAR(InferenceAllReduceSeconds(Dims7B(), 1e6, 4, 2, Net(1000)), 2.18453, 1e-5);
  EXPECT_DOUBLE_EQ(InferenceAllReduceSeconds(Dims7B(), 1e6, 1, 2, Net(1000)), 0);
}

// Properties over the embedded catalog's models: a 7B and a 70B fine-tune.
JobSpec FineTune(double params_b, int layers, int hidden) {
  JobSpec j;
  j.kind = WorkloadKind::kFineTuning;
  j.model.params_b = params_b;
  j.model.layers = layers;
  j.model.hidden = hidden;
  j.model.seq_len = 4096;
  j.work.form = Work::Form::kTokens;
  j.work.tokens = 2e9;
  return j;
}

TEST(ParallelismProperty, MoreGpusNeverNeedFewerGpuHours) {
  auto cat = catalog::Catalog::LoadEmbedded();
  ASSERT_TRUE(cat.ok());
  int checked = 0;
  for (const JobSpec& spec : {FineTune(7, 32, 4096), FineTune(70, 80, 8192)}) {
    const ResolvedJob job = Resolve(spec);
    for (const catalog::GpuModel& gpu : (*cat)->gpus()) {
      Result<GpuEstimate> e = EstimateOnGpu(job, gpu, **cat);
      if (!e.ok()) continue;
      const ResolvedJob on = AtPrecision(job, e->throughput.precision);
      const Interconnect net = ReferenceInterconnect(gpu, **cat);
      double last = 0;
      // The counts `plan` offers above the fitted one: doublings (OptionCounts).
      for (int n = e->memory.gpus; n <= kMaxGpus; n *= 2) {
        Result<ThroughputEstimate> t = EstimateThroughput(on, gpu, **cat, QueryFor(*e, n, net));
        ASSERT_TRUE(t.ok());
        const double gpu_hours = n * t->run_hours;
        EXPECT_GE(gpu_hours, last * (1 - 1e-12)) << gpu.name << " " << spec.model.params_b.value()
                                                 << "B at " << n << " GPUs";
        last = gpu_hours;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 30);
}

TEST(ParallelismProperty, AFasterInterconnectNeverMakesAJobSlower) {
  auto cat = catalog::Catalog::LoadEmbedded();
  ASSERT_TRUE(cat.ok());
  int checked = 0;
  for (const JobSpec& spec : {FineTune(7, 32, 4096), FineTune(70, 80, 8192)}) {
    const ResolvedJob job = Resolve(spec);
    for (const catalog::GpuModel& gpu : (*cat)->gpus()) {
      Result<GpuEstimate> e = EstimateOnGpu(job, gpu, **cat);
      if (!e.ok()) continue;
      const ResolvedJob on = AtPrecision(job, e->throughput.precision);
      for (int n : CandidateCounts(std::nullopt)) {
        if (n < e->memory.gpus) continue;
        double last = 0;
        for (double gbit : {25.0, 100.0, 400.0, 1000.0, 3200.0}) {
          for (double gbyte : {32.0, 64.0, 300.0, 900.0, 1800.0}) {
            Interconnect net;
            net.inter_gbit_per_s = gbit;
            net.intra_gbyte_per_s = gbyte;
            Result<ThroughputEstimate> t =
                EstimateThroughput(on, gpu, **cat, QueryFor(*e, n, net));
            ASSERT_TRUE(t.ok());
            // Faster intra-node link at the same network: never slower.
            if (gbyte > 32.0) {
              EXPECT_LE(t->run_hours, last * (1 + 1e-12))
                  << gpu.name << " at " << n << " GPUs, " << gbit << " Gbit/s, " << gbyte << " GB/s";
            }
            last = t->run_hours;
            ++checked;
          }
          // A faster network at the slowest link: never slower than the last network.
          Interconnect slow, fast;
          slow.inter_gbit_per_s = gbit;
          fast.inter_gbit_per_s = gbit * 2;
          EXPECT_LE(EstimateThroughput(on, gpu, **cat, QueryFor(*e, n, fast))->run_hours,
                    EstimateThroughput(on, gpu, **cat, QueryFor(*e, n, slow))->run_hours *
                        (1 + 1e-12))
              << gpu.name << " at " << n << " GPUs, " << gbit << " Gbit/s doubled";
        }
      }
    }
  }
  EXPECT_GE(checked, 400);
}

}  // namespace
}  // namespace meridian::estimate
