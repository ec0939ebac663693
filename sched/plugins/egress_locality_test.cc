#include "sched/plugins/egress_locality.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

Candidate Node(const testing::World& w, uint32_t n, uint8_t demand) {
  Candidate c;
  c.node = NodeId(n);
  c.region = w.fleet->node(c.node).region;
  c.gpus_per_node = 1;
  c.demand = demand;
  c.start = kNow;
  return c;
}

Candidate Elastic(const testing::World& w, const char* region, const char* type, uint8_t demand) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, region, type);
  c.region = FindRegionId(*w.catalog, region);
  c.instances = 1;
  c.demand = demand;
  c.start = kNow;
  return c;
}

std::unique_ptr<EgressLocality> Make(const testing::World& w, const char* yaml) {
  auto args = PluginArgs::FromYaml(yaml);
  EXPECT_TRUE(args.ok());
  auto made = EgressLocality::Create(*args);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<EgressLocality> p(static_cast<EgressLocality*>(made->release()));
  EXPECT_TRUE(p->Prepare({*w.fleet, *w.catalog}).ok());
  return p;
}

TEST(EgressLocalityTest, AddsEgressToThePrice) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("one", 1, 40);
  spec.resources.gpu_models = {"H100-80GB", "A100-80GB", "L40S"};
  spec.data.region = "gcp:us-central1";
  spec.data.size_gb = 100;
  QueuedJob job = Queue(w, spec, 1);  // demands: 0 H100, 1 A100, 2 L40S; 2 h each
  testing::Cycle cy(w, job);
  struct Case {
    const char* name;
    Candidate c;
    int64_t egress_micros;
    int64_t raw;
    int64_t normalized;
  } cases[] = {
      // the data's own region: 0 $ egress + 1 GPU x 1.10 $/GPU-h x 2 h = 2.20 $: cheapest, 100
      {"onprem-a (us-central1)", Node(w, 0, 0), 0, -2'200'000, 100},
      // 100 GB x 0.05 $/GB = 5.00 $ + 1 x 2.00 x 2 = 4.00 $ -> 9.00 $:
      // (19.43868 - 9.00) / (19.43868 - 2.20) x 100 = 60.55 -> 60
      {"onprem-b (europe-west4)", Node(w, 3, 1), 5'000'000, -9'000'000, 60},
      // 100 x 0.08 = 8.00 $ + 5.71934 x 2 = 11.43868 $ -> 19.43868 $: dearest, 0
      {"asia-northeast1 on-demand", Elastic(w, "gcp:asia-northeast1", "a3-highgpu-1g", 0),
       8'000'000, -19'438'680, 0},
      // gcp -> aws: no catalog figure, internet 0.09 $/GB = 9.00 $ + 1.861 x 2 = 3.722 $ -> 12.722 $:
      // (19.43868 - 12.722) / 17.23868 x 100 = 38.96 -> 38
      {"aws:us-east-1 (other provider)", Elastic(w, "aws:us-east-1", "g6e.xlarge", 2), 9'000'000,
       -12'722'000, 38},
  };
  auto p = Make(w, "");
  std::vector<int64_t> raw;
  for (const auto& c : cases) {
    EXPECT_EQ(p->Egress(cy.ctx, c.c).micros(), c.egress_micros) << c.name;
    raw.push_back(p->Score(cy.ctx, c.c));
    EXPECT_EQ(raw.back(), c.raw) << c.name;
  }
  p->NormalizeScore(cy.ctx, raw);
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(raw[i], cases[i].normalized) << cases[i].name;
  EXPECT_EQ(p->ExplainScore(cy.ctx, cases[1].c, 0),
            "100 GB from gcp:us-central1 x 0.050 $/GB = 5.00 $ egress + run 4.00 $ = 9.00 $");

  // egress alone: 0, -5, -8, -9 $
  auto only = Make(w, "{include_run_cost: false}");
  EXPECT_EQ(only->Score(cy.ctx, cases[3].c), -9'000'000);

  // max_usd 6: keeps the two fleet nodes (0 $, 5 $), rejects 8 $ and 9 $
  auto capped = Make(w, "{max_usd: 6}");
  std::vector<Candidate> cands;
  for (const auto& c : cases) cands.push_back(c.c);
  Rejections r;
  r.Reset("egress_locality", true);
  EXPECT_EQ(capped->Filter(cy.ctx, cands, r), 2u);
  EXPECT_EQ(r.count(), 2u);
  EXPECT_EQ(cands[1].node, NodeId(3));
}

TEST(EgressLocalityTest, NoDataNoEgress) {
  testing::World w = MakeWorld();
  QueuedJob job = Queue(w, TwoHourJob("one", 1, 40), 1);
  testing::Cycle cy(w, job);
  auto p = Make(w, "{include_run_cost: false}");
  EXPECT_EQ(p->Score(cy.ctx, Node(w, 3, 0)), 0);
  EXPECT_EQ(p->ExplainScore(cy.ctx, Node(w, 3, 0), 0), "no input data: 0 $ egress");
}

TEST(EgressLocalityTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{max_usd: -1}");
  ASSERT_TRUE(args.ok());
  auto made = EgressLocality::Create(*args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("max_usd"), std::string::npos);
}

}  // namespace
}  // namespace meridian::sched
