#include "sched/plugins/list_price.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

Candidate Bought(const testing::World& w, const char* region, const char* type, PricingModel m) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, region, type);
  c.instances = 1;
  c.pricing = m;
  c.start = testing::kNow;
  return c;
}

TEST(ListPriceTest, SpotAtItsHourlyPriceWithoutRework) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("a100", 1, 40);
  spec.resources.gpu_models = {"A100-80GB"};
  spec.preemptible = true;
  QueuedJob job = Queue(w, spec, 1);
  ASSERT_TRUE(job.spot_run_multiplier.has_value());
  ASSERT_GT(*job.spot_run_multiplier, 1.0);  // cheapest_price would bill the rework
  testing::Cycle cy(w, job);
  Candidate node;
  node.kind = CandidateKind::kNode;
  node.node = NodeId(3);  // onprem-b A100, 2.00 $/GPU-h
  node.gpus_per_node = 1;
  ListPrice lp;
  const struct {
    const char* name;
    Candidate c;
    int64_t raw;
  } cases[] = {
      // 2.51378 $/h x 2 h = 5.02756 $ (no x rework)
      {"spot us-central1", Bought(w, "gcp:us-central1", "a2-ultragpu-1g", PricingModel::kSpot), -5027560},
      // 2.94582 $/h x 2 h
      {"on-demand us-central1", Bought(w, "gcp:us-central1", "a2-ultragpu-1g", PricingModel::kOnDemand), -5891640},
      // 2.65951 $/h x 2 h
      {"spot europe-west4", Bought(w, "gcp:europe-west4", "a2-ultragpu-1g", PricingModel::kSpot), -5319020},
      // 1 GPU x 2.00 $/GPU-h x 2 h
      {"owned node", node, -4000000},
  };
  std::vector<int64_t> raw;
  for (const auto& c : cases) {
    raw.push_back(lp.Score(cy.ctx, c.c));
    EXPECT_EQ(raw.back(), c.raw) << c.name;
  }
  lp.NormalizeScore(cy.ctx, raw);
  // min-max: (5891640 - 5027560) / (5891640 - 4000000) x 100 = 45.68 -> 45
  EXPECT_EQ(raw, (std::vector<int64_t>{45, 0, 30, 100}));
  EXPECT_EQ(lp.ExplainScore(cy.ctx, cases[0].c, cases[0].raw),
            "1 x 2.51 $/h spot (list) x 2.00 h = 5.03 $");
}

}  // namespace
}  // namespace meridian::sched
