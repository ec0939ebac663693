#include "sched/plugins/first_fit.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

TEST(FirstFitTest, FleetOrderThenOfferingsByPrice) {
  testing::World w = testing::MakeWorld();
  QueuedJob job = testing::Queue(w, testing::TwoHourJob("j", 1, 10), 1);
  testing::Cycle cy(w, job);
  auto node = [](uint32_t n) {
    Candidate c;
    c.node = NodeId(n);
    c.gpus_per_node = 1;
    return c;
  };
  Candidate l4;
  l4.kind = CandidateKind::kElastic;
  l4.offering = testing::Offering(w, "gcp:us-central1", "g2-standard-4");
  l4.instances = 1;
  FirstFit ff;
  struct Case {
    const char* name;
    Candidate c;
    int64_t raw;
    int64_t normalized;
  } cases[] = {
      {"node 3", node(3), -3, 99},  // second distinct position: 100 - 1
      {"node 0", node(0), 0, 100},  // first in fleet order
      {"node 6", node(6), -6, 98},
      // after the fleet's 7 nodes: -(7 + 1 + 706 milli-dollars/h) = -714, rank 3
      {"g2-standard-4", l4, -714, 97},
      {"node 3 again", node(3), -3, 99},  // equal positions share a rank
  };
  std::vector<int64_t> raw;
  for (const auto& c : cases) {
    raw.push_back(ff.Score(cy.ctx, c.c));
    EXPECT_EQ(raw.back(), c.raw) << c.name;
  }
  ff.NormalizeScore(cy.ctx, raw);
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(raw[i], cases[i].normalized) << cases[i].name;
}

TEST(FirstFitTest, RankFloorsAtZero) {
  std::vector<int64_t> s;
  for (int i = 0; i < 120; ++i) s.push_back(-i);
  std::vector<int64_t> scratch;
  NormalizeByRank(s, &scratch);
  EXPECT_EQ(s[0], 100);
  EXPECT_EQ(s[100], 0);
  EXPECT_EQ(s[119], 0);
}

}  // namespace
}  // namespace meridian::sched
