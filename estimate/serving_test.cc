#include "estimate/serving.h"

#include <gtest/gtest.h>

#include <limits>

#include "estimate/test_catalog.h"
#include "estimate/test_specs.h"

namespace meridian::estimate {
namespace {

using testing::Chat8B;
using testing::TestCatalog;

ThroughputQuery OneGpu(const catalog::Catalog& cat, const std::string& gpu) {
  ThroughputQuery q;
  q.gpus = 1;
  q.net = ReferenceInterconnect(*cat.FindGpu(gpu), cat);
  return q;
}

// KV cache bytes: 2 (K, V) x 32 layers x 8 kv heads x 128 head dim x 2 B =
// 131,072 B per token of context per sequence.
//
// A prompt token's forward is 2 x 8e9 FLOP of weights + 4 x 32 layers x 512
// x 4096 = 2.68435e8 of attention over the 512-token prompt = 1.62684e10.
//
// The matmuls run at the best-shape efficiency x 4096 / (4096 + 2177) =
// x 0.65296 (h0 2177 for both: the H100's, and the rule for the L4).
// H100 (989 TFLOPS bf16 x 0.803 x 0.65296 = 989 x 0.52432 = 5.1856e14 FLOP/s;
// 3,350 GB/s x 0.80 = 2.68e12 B/s):
//   first token: prefill 1.62684e10 x 512 = 8.3294e12 FLOP / 5.1856e14 =
//     16.063 ms; one decode step reads 1.6e10 B of weights + 131,072 x 513 / 2
//     B of KV = 1.60336e10 B / 2.68e12 = 5.983 ms (compute 2 x 8e9 /
//     5.1856e14 = 0.03 ms is less): 22.046 ms
//   batch of 16: prefill 1.62684e10 x 16 x 512 = 1.33271e14 / 5.1856e14 =
//     0.25700 s; decode 256 steps x (1.6e10 + 131,072 x 768 x 16 / 2) B =
//     4.30216e12 B / 2.68e12 = 1.60528 s (compute 6.5536e13 FLOP = 0.1264 s
//     is less): 1.86228 s, 16 / 1.86228 = 8.5916 req/s
// L4 (121 TFLOPS x 0.75 default x 0.65296 = 121 x 0.48972 = 5.9256e13
// FLOP/s; 300 GB/s x 0.80 = 2.4e11 B/s):
//   first token: 8.3294e12 / 5.9256e13 = 140.567 ms + 1.60336e10 / 2.4e11 =
//     66.807 ms: 207.374 ms
//   batch of 16: 1.33271e14 / 5.9256e13 = 2.24908 s + 4.30216e12 / 2.4e11 =
//     17.92566 s = 20.17474 s, 16 / 20.17474 = 0.79307 req/s
TEST(ServingTest, FirstTokenAndBatchRateFromTheRoofline) {
  auto cat = TestCatalog();
  const ResolvedJob job = Resolve(Chat8B());
  struct Case {
    const char* gpu;
    double request_ms;
    double requests_per_s;
  } cases[] = {{"H100-80GB", 22.046, 8.5916}, {"L4", 207.374, 0.79307}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.gpu);
    Result<ReplicaServing> s = EstimateReplicaServing(job, *cat->FindGpu(c.gpu), *cat, OneGpu(*cat, c.gpu));
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_NEAR(s->request_s * 1000, c.request_ms, 0.005);
    EXPECT_NEAR(s->requests_per_s, c.requests_per_s, 0.0005);
  }
}

TEST(ServingTest, RequestShapeDefaultsToTheModel) {
  JobSpec j = Chat8B();
  j.latency.tokens_in.reset();
  j.latency.tokens_out.reset();
  // seq_len 8192 of context, 256 of them generated: 7,936 prompt tokens.
  RequestShape s = RequestShapeOf(Resolve(j));
  EXPECT_EQ(s.tokens_in, 7936);
  EXPECT_EQ(s.tokens_out, 256);
  // A model that generates nothing answers in one step.
  j.model.output_tokens = 0;
  s = RequestShapeOf(Resolve(j));
  EXPECT_EQ(s.tokens_out, 1);
  EXPECT_EQ(s.tokens_in, 8191);
}

TEST(ServingTest, NoModelShapeNoCapacity) {
  auto cat = TestCatalog();
  JobSpec j;
  j.kind = WorkloadKind::kRealtimeInference;
  Result<ReplicaServing> s =
      EstimateReplicaServing(Resolve(j), *cat->FindGpu("L4"), *cat, OneGpu(*cat, "L4"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("model.params_b"), std::string::npos);
}

// A tenant's spec may state any rps: 1e30 requests/s over 9 per replica is
// about 1.1e29 replicas, past int's range, so the count saturates there
// instead of overflowing into a negative (or undefined) number.
TEST(ReplicasForLoad, ALoadPastIntsRangeSaturatesInsteadOfOverflowing) {
  EXPECT_EQ(ReplicasForLoad(1e30, 9.0), std::numeric_limits<int>::max());
  EXPECT_EQ(ReplicasForLoad(20.0, 9.0), 3);  // ceil(2.22)
}

// Replicas up each with its own figure: 0.995 (on-demand), 0.9, 0.8.
//   at least 1 of spot {0.9, 0.8}: 1 - 0.1 x 0.2 = 0.98
//   at least 2 of {0.995, 0.9, 0.8}: all three 0.995 x 0.9 x 0.8 = 0.7164;
//     exactly two 0.995 x 0.9 x 0.2 + 0.995 x 0.1 x 0.8 + 0.005 x 0.9 x 0.8
//     = 0.1791 + 0.0796 + 0.0036 = 0.2623; together 0.9787
// and alike, the binomial: 3 at 0.956, at least 1: 1 - 0.044^3 = 0.999914816.
TEST(ReplicaMixTest, AtLeastUpWithReplicasOfTheirOwnAvailability) {
  EXPECT_NEAR(AtLeastUp(1, 0, 0.995, {0.9, 0.8}), 0.98, 1e-12);
  EXPECT_NEAR(AtLeastUp(2, 1, 0.995, {0.9, 0.8}), 0.9787, 1e-12);
  EXPECT_NEAR(AtLeastUp(1, 0, 0.995, {0.956, 0.956, 0.956}), 1 - 0.044 * 0.044 * 0.044, 1e-12);
  EXPECT_NEAR(AtLeastUp(1, 0, 0.995, {0.956, 0.956, 0.956}), AtLeastUp(1, 3, 0.956), 1e-12);
  EXPECT_DOUBLE_EQ(AtLeastUp(0, 0, 0.995, {}), 1.0);
  EXPECT_DOUBLE_EQ(AtLeastUp(1, 0, 0.995, {}), 0.0);
}

// A spot replica up with 0.995 x (1 - rate x 300 / 3600) (5 min restart).
// Two alike meet 0.999 when 1 - (1 - up)^2 >= 0.999: up >= 1 - sqrt(0.001)
// = 0.968377, rate <= (1 - 0.968377 / 0.995) x 12 = 0.3211 per hour:
//   0.32: up 0.995 x (1 - 0.32 / 12) = 0.968467; 1 - 0.031533^2 = 0.999006, meets
//   0.33: up 0.995 x (1 - 0.33 / 12) = 0.967638; 1 - 0.032362^2 = 0.998953, misses
//   0.47 (the traces' mean): up 0.956029; two: 1 - 0.043971^2 = 0.998067, misses;
//     three: 1 - 0.043971^3 = 0.999915, meets
//   0.10: up 0.995 x (1 - 0.1 / 12) = 0.986708
// A100 (on-demand $5.33/h, spot $1.03/h, micro-dollars / 10^4 here):
//   two spot at 0.32: $2.06 < three at 0.47: $3.09 < 1 on-demand + 1 spot: $6.36
//   a 0.10 spot replica first, then 0.47 ones: 1 - 0.013292 x 0.043971
//     = 0.999416 with two, which meets: two at $2.06
//   0.47 first, then 0.10 ones: the first two alike meet it too (same set).
TEST(ReplicaMixTest, TheSpotSparesFollowEachOfferingsReclaimRate) {
  auto up = [](double rate) { return SpotReplicaUp(0.995, rate, 300); };
  EXPECT_NEAR(up(0.32), 0.968467, 1e-6);
  EXPECT_NEAR(up(0.33), 0.967638, 1e-6);
  EXPECT_NEAR(up(0.10), 0.986708, 1e-6);
  EXPECT_GE(AtLeastUp(1, 0, 0.995, {up(0.32), up(0.32)}), 0.999);
  EXPECT_LT(AtLeastUp(1, 0, 0.995, {up(0.33), up(0.33)}), 0.999);
  auto mix = [&](std::vector<double> rates) {
    std::vector<SpotCandidate> spot;
    for (double r : rates) spot.push_back({103, up(r)});
    return CheapestMix(1, 0.999, 0.995, 533, spot, 2);
  };
  EXPECT_EQ(mix({0.32, 0.32, 0.32}), (ReplicaMix{0, 2}));
  EXPECT_EQ(mix({0.33, 0.33, 0.33}), (ReplicaMix{0, 3}));
  EXPECT_EQ(mix({0.47, 0.47, 0.47}), (ReplicaMix{0, 3}));
  EXPECT_EQ(mix({0.10, 0.47, 0.47}), (ReplicaMix{0, 2}));
  EXPECT_EQ(mix({0.47}), (ReplicaMix{1, 1}));  // 1 - 0.005 x 0.043971 = 0.99978
  EXPECT_EQ(mix({}), (ReplicaMix{2, 0}));
}

}  // namespace
}  // namespace meridian::estimate

