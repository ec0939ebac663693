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

// The 1T GPT of Narayanan et al. 2021 (arXiv:2104.04473, Table 1: 128 layers,
// hidden 25600, 2048 tokens, batch 3072, 3072 A100-80GB, fp16, recomputed) at
// the layout the paper ran, TP 8 x PP 64 x DP 6, against the layout meridian
// picks for it (docs/estimator.md, section 5a). Worked from the formulas of
// parallelism.h, A100: peak 312e12 x 0.869 x 25600 / (25600 + 875) =
// 2.62166e14 FLOP/s; NVLink 600 / 2 x 0.80 = 240 GB/s; InfiniBand 1600 Gbit/s
// / 8 bits / 8 GPUs x 0.80 = 20 GB/s a GPU; s b h v = 2048 x 25600 x 2 B =
// 1.048576e8 B.
//   compute (8 x 1.008e12 + 16 x 128 x 2048 x 25600 = 8.171374e12 FLOP a
//   token) x 3072 x 2048 / (3072 x 2.62166e14) = 63.8332 s + element-wise
//   73.333 x 128 x 25600 x 2 B x 3072 x 2048 / (3072 x 1.6e12) = 0.6152 s
//   = 64.4484 s, the same for every layout.
// An A100-80GB run with full recomputation at 2048 tokens: the matmuls at
// 0.869 x h / (h + 875) of 312 TFLOPS, element-wise kernels at 2000 GB/s x
// 0.80, 2-byte values.
LayoutQuery A100RecomputedQuery(int gpus, int hidden) {
  LayoutQuery q;
  q.gpus = gpus;
  q.micro_batch = 1;
  q.recompute = true;
  q.peak_flops = 312e12 * 0.869 * hidden / (hidden + 875);
  q.memory_bytes_per_s = 2000e9 * 0.80;
  q.bytes_per_value = 2;
  return q;
}

ModelDims Transformer(double params, int layers, int hidden, int heads) {
  ModelDims d;
  d.params = params;
  d.layers = layers;
  d.hidden = hidden;
  d.heads = heads;
  d.kv_heads = heads;
  d.seq_len = 2048;
  return d;
}

// A100 nodes: NVLink 3 600 GB/s, 1600 Gbit/s of InfiniBand a node of 8.
Interconnect A100Net() {
  Interconnect net;
  net.gpus_per_node = 8;
  net.intra_gbyte_per_s = 600;
  net.inter_gbit_per_s = 1600;
  return net;
}

// A step's parts in seconds, worked by hand, to 1 ms (the total to 2 ms).
struct StepSeconds {
  double compute, bubble, tensor, pipeline, data_exposed, total;
};

void ExpectStep(const StepCost& got, const StepSeconds& want) {
  EXPECT_NEAR(got.compute_s, want.compute, 1e-3);
  EXPECT_NEAR(got.bubble_s, want.bubble, 1e-3);
  EXPECT_NEAR(got.tensor_s, want.tensor, 1e-3);
  EXPECT_NEAR(got.pipeline_s, want.pipeline, 1e-3);
  EXPECT_NEAR(got.data_exposed_s, want.data_exposed, 1e-3);
  EXPECT_NEAR(got.total_s, want.total, 2e-3);
}

LayoutQuery Gpt1TQuery() { return A100RecomputedQuery(3072, 25600); }

ModelDims Gpt1TDims() {
  ModelDims d = Transformer(1.008e12, 128, 25600, 160);
  d.global_batch_tokens = 3072.0 * 2048;
  return d;
}

TEST(Parallelism, Gpt1TAtThePublishedLayoutIsSlowerThanTheOneChosen) {
  const Interconnect net = A100Net();
  // Chosen: TP 4 x PP 16, 4 chunks, DP 48 (ZeRO-1); m = 3072 / 48 = 64.
  //   bubble 64.4484 x 15 / (4 x 64) = 3.7763 s
  //   tensor 64 x 8 x 6 x 2 x 3/4 x 1.048576e8 / 240e9 = 2.0133 s
  //   sends 2 x 4 x 64 x 1.048576e8 / 20e9 = 2.6844 s
  //   data 2 x 47/48 x 1.008e12 x 2 / 64 / 20e9 = 3.0844 s, less 2/3 x
  //   64.4484 / 64 = 0.6713 overlapped: 2.4131 s; step 75.3355 s
  Layout chosen{4, 16, 48, ZeroStage::kOne, 64, 3072};
  chosen.chunks = 4;
  // Published: TP 8 x PP 64 x DP 6, one chunk; m = 3072 / 6 = 512.
  //   bubble 64.4484 x 63 / 512 = 7.9302 s
  //   tensor 512 x 2 x 6 x 2 x 7/8 x 1.048576e8 / 240e9 = 4.6976 s
  //   sends 2 x 512 x 1.048576e8 / 20e9 = 5.3687 s
  //   data 2 x 5/6 x 2.016e12 / 512 / 20e9 = 0.3281 s, less 2/3 x 64.4484 /
  //   512 = 0.0839: 0.2442 s; step 82.6891 s, 1.0976 x the chosen one's.
  Layout published{8, 64, 6, ZeroStage::kOne, 512, 3072};
  const StepCost a = CostOf(Gpt1TDims(), Gpt1TQuery(), net, chosen);
  const StepCost b = CostOf(Gpt1TDims(), Gpt1TQuery(), net, published);
  ExpectStep(a, {64.4484, 3.7763, 2.0133, 2.6844, 2.4131, 75.3355});
  ExpectStep(b, {64.4484, 7.9302, 4.6976, 5.3687, 0.2442, 82.6891});
  EXPECT_NEAR(b.total_s / a.total_s, 1.0976, 1e-3);
  // The same with two interleaved chunks (Table 1 does not name the
  // schedule): bubble 7.9302 / 2 = 3.9651 s, sends x 2 = 10.7374 s; step
  // 64.4484 + 3.9651 + 4.6976 + 10.7374 + 0.2442 = 84.0927 s.
  Layout two = published;
  two.chunks = 2;
  EXPECT_NEAR(CostOf(Gpt1TDims(), Gpt1TQuery(), net, two).total_s, 84.0927, 2e-3);
  // The estimator's own choice within 72 GiB of an A100-80GB (the plan's).
  LayoutQuery fit = Gpt1TQuery();
  fit.usable_gib = 72;
  EXPECT_EQ(ChooseLayout(Gpt1TDims(), fit, net).layout.Describe(),
            "TP 4 x PP 16 (4 chunks each) x DP 48 (ZeRO-1)");
}

// BLOOM-176B (70 layers, hidden 14336, 2048 tokens, 384 A100-80GB, bf16,
// recomputed) at the layout its launch script states (bigscience-workshop/
// bigscience train/tr11-176B-ml/tr11-176B-ml.slurm: TP 4, PP 12, micro-batch
// 2, 2,048 sequences a step; DeepSpeed ZeRO-1) against meridian's choice at
// micro-batch 1 and the 4M-token default batch (docs/estimator.md, 5a). Peak
// 312e12 x 0.869 x 14336 / (14336 + 875) = 2.55532e14; a token 8 x 176e9 +
// 16 x 70 x 2048 x 14336 = 1.440883e12 FLOP and 73.333 x 70 x 14336 x 2 B of
// element-wise traffic; links as the 1T case.
TEST(Parallelism, BloomAtThePublishedLayoutIsFourPercentSlowerASequence) {
  const ModelDims d = Transformer(176e9, 70, 14336, 112);
  const LayoutQuery q = A100RecomputedQuery(384, 14336);
  const Interconnect net = A100Net();
  // Chosen: TP 4 x PP 4 x DP 24, 2,048 sequences rounded up to 24 x 86 = 2,064.
  //   compute 1.440883e12 x 2064 x 2048 / (384 x 2.55532e14) = 62.0716 s +
  //   element-wise 73.333 x 70 x 14336 x 2 B x 2064 x 2048 / (384 x 1.6e12)
  //   = 1.0126 s = 63.0842 s; bubble x 3 / 86 = 2.2006 s; tensor
  //   86 x 17.5 x 6 x 1.5 x 5.8720e7 B / 240e9 = 3.3140 s; sends 2 x 86 x
  //   5.8720e7 / 20e9 = 0.5050 s; data 2 x 23/24 x 3.52e11 / 16 / 20e9 =
  //   2.1083 s less 2/3 x 63.0842 / 86 = 0.4890: 1.6193 s; step 70.7231 s,
  //   0.0342651 s a sequence.
  Layout chosen{4, 4, 24, ZeroStage::kOne, 86, 2064};
  // Published: m = 2048 / (8 x 2) = 128 micro-batches of 2 (s b h v =
  //   1.17441e8 B). compute 62.5952 s; bubble x 11 / 128 = 5.3793 s; tensor
  //   128 x 70/12 x 6 x 1.5 x 1.17441e8 / 240e9 = 3.2883 s; sends 2 x 128 x
  //   1.17441e8 / 20e9 = 1.5032 s; data 2 x 7/8 x 3.52e11 / 48 / 20e9 =
  //   0.6417 s less 2/3 x 62.5952 / 128 = 0.3260: 0.3157 s; step 73.0816 s,
  //   0.0356844 s a sequence: 1.0414 x the chosen layout's.
  Layout published{4, 12, 8, ZeroStage::kOne, 128, 2048};
  LayoutQuery q2 = q;
  q2.micro_batch = 2;
  const StepCost a = CostOf(d, q, net, chosen);
  const StepCost b = CostOf(d, q2, net, published);
  ExpectStep(a, {63.0842, 2.2006, 3.3140, 0.5050, 1.6193, 70.7231});
  ExpectStep(b, {62.5952, 5.3793, 3.2883, 1.5032, 0.3157, 73.0816});
  EXPECT_NEAR((b.total_s / 2048) / (a.total_s / 2064), 1.0414, 1e-3);
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
