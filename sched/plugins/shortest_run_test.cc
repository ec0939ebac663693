#include "sched/plugins/shortest_run.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

Candidate Bought(const testing::World& w, const QueuedJob& job, const char* type, const char* model,
                 PricingModel m) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, "gcp:us-central1", type);
  c.instances = 1;
  c.pricing = m;
  c.start = testing::kNow;
  const GpuModelId id = testing::Model(w, model);
  for (size_t i = 0; i < job.demands.size(); ++i) {
    if (job.demands[i].model == id) c.demand = static_cast<uint8_t>(i);
  }
  return c;
}

TEST(ShortestRunTest, TheFasterPlacementScoresHigher) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("j", 1, 40);
  spec.resources.gpu_models = {"A100-80GB", "H100-80GB"};
  spec.preemptible = true;
  QueuedJob job = Queue(w, spec, 1);
  ASSERT_EQ(job.demands.size(), 2u);
  // The estimator's hours on each model, set by hand: 1 h on H100, 3 h on A100.
  for (ModelDemand& d : job.demands) d.run_hours = d.model == testing::Model(w, "H100-80GB") ? 1.0f : 3.0f;
  testing::Cycle cy(w, job);
  ShortestRun sr;
  const struct {
    const char* name;
    Candidate c;
    int64_t raw;
  } cases[] = {
      {"A100 on-demand", Bought(w, job, "a2-ultragpu-1g", "A100-80GB", PricingModel::kOnDemand), -10800},
      {"H100 on-demand", Bought(w, job, "a3-highgpu-1g", "H100-80GB", PricingModel::kOnDemand), -3600},
      // Spot's expected rework: 1 h / (1 - 0.47 x (15 + 5 min = 1/3 h)) = 1.185771 h = 4268.8 s.
      {"H100 spot", Bought(w, job, "a3-highgpu-1g", "H100-80GB", PricingModel::kSpot), -4269},
  };
  std::vector<int64_t> raw;
  for (const auto& c : cases) {
    raw.push_back(sr.Score(cy.ctx, c.c));
    EXPECT_EQ(raw.back(), c.raw) << c.name;
  }
  sr.NormalizeScore(cy.ctx, raw);
  // min-max: (10800 - 4269) / (10800 - 3600) x 100 = 90.7 -> 90
  EXPECT_EQ(raw, (std::vector<int64_t>{0, 100, 90}));
  EXPECT_EQ(sr.ExplainScore(cy.ctx, cases[0].c, cases[0].raw), "runs 3.00 h here");
}

}  // namespace
}  // namespace meridian::sched
