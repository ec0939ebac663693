#include "sched/plugins/cheapest_price.h"

#include <gtest/gtest.h>

#include "sched/cost.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

TEST(CheapestPriceTest, ScoresLowerCostHigher) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("four", 4, 40);
  spec.resources.gpu_models = {"H100-80GB", "A100-80GB"};
  QueuedJob job = Queue(w, spec, 1);  // demands: 0 H100, 1 A100; 2 h on each
  testing::Cycle cy(w, job);
  auto node = [](uint32_t n, uint8_t demand) {
    Candidate c;
    c.node = NodeId(n);
    c.gpus_per_node = 4;
    c.demand = demand;
    return c;
  };
  Candidate od;
  od.kind = CandidateKind::kElastic;
  od.pricing = PricingModel::kOnDemand;
  od.offering = testing::Offering(w, "gcp:us-central1", "a3-highgpu-4g");
  od.instances = 1;
  struct Case {
    const char* name;
    Candidate c;
    int64_t cost_micros;
    int64_t normalized;
  } cases[] = {
      // 4 GPUs x 1.10 $/GPU-h x 2 h = 8.80 $: the cheapest, (43.06614 - 8.80) / (43.06614 - 8.80) x 100 = 100
      {"onprem-a H100", node(0, 0), 8'800'000, 100},
      // 4 x 2.00 x 2 = 16.00 $: (43.06614 - 16.00) / 34.26614 x 100 = 78.98 -> 78
      {"onprem-b A100", node(3, 1), 16'000'000, 78},
      // 1 x 21.53307 $/h x 2 h = 43.06614 $: the dearest, 0
      {"a3-highgpu-4g on-demand", od, 43'066'140, 0},
  };
  CheapestPrice price;
  std::vector<int64_t> raw;
  for (const auto& c : cases) {
    EXPECT_EQ(RunCost(cy.ctx, c.c).micros(), c.cost_micros) << c.name;
    raw.push_back(price.Score(cy.ctx, c.c));
    EXPECT_EQ(raw.back(), -c.cost_micros) << c.name;
  }
  price.NormalizeScore(cy.ctx, raw);
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(raw[i], cases[i].normalized) << cases[i].name;
  EXPECT_EQ(price.ExplainScore(cy.ctx, cases[0].c, 0), "4 GPUs x 1.10 $/GPU-h x 2.00 h = 8.80 $");
}

TEST(CheapestPriceTest, MigSliceCostsItsShareOfTheGpu) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("small", 1, 15);
  spec.resources.mig = true;
  spec.resources.gpu_models = {"H100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  Candidate c;
  c.kind = CandidateKind::kMigSlice;
  c.node = NodeId(2);
  c.mig_profile = 1;
  c.mig_shape = {6, 2};
  // 1.10 $/GPU-h x 2/8 of the GPU x 2 h (a stated duration lasts as long on a slice) = 0.55 $
  EXPECT_EQ(RunCost(cy.ctx, c).micros(), 550'000);
  Candidate whole;
  whole.node = NodeId(0);
  whole.gpus_per_node = 1;
  // 1 x 1.10 x 2 = 2.20 $
  EXPECT_EQ(RunCost(cy.ctx, whole).micros(), 2'200'000);
}

TEST(CheapestPriceTest, SpotRunsLongerForReclaims) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("spot", 1, 40);
  spec.preemptible = true;
  QueuedJob job = Queue(w, spec, 1);
  ASSERT_TRUE(job.spot_run_multiplier.has_value());
  testing::Cycle cy(w, job);
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.pricing = PricingModel::kSpot;
  c.offering = testing::Offering(w, "gcp:us-central1", "a3-highgpu-1g");
  c.instances = 1;
  uint8_t h100 = 0;  // H100 is the catalog's first model
  c.demand = h100;
  // Default checkpoints every 30 min, 5 min restart: 0.47/h x (15 + 5) min =
  // 0.1567 h lost per hour; multiplier 1 / (1 - 0.1567) = 1.1858; 4.4842 $/h x
  // 2 h x 1.1858 = 10.6345 $
  EXPECT_NEAR(RunCost(cy.ctx, c).dollars(), 4.4842 * 2 / (1 - 0.47 * 20.0 / 60), 1e-5);
}

}  // namespace
}  // namespace meridian::sched
