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

}  // namespace
}  // namespace meridian::estimate

