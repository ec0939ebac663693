#include "sched/plugins/home_region.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

// Test fleet (test_world.h): nodes 0-2 in onprem-a (gcp:us-central1), nodes
// 3-6 in onprem-b (gcp:europe-west4).
Candidate NodeAt(uint32_t n) {
  Candidate c;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(n);
  c.gpus_per_node = 1;
  return c;
}

Candidate OfferAt(const testing::World& w, const char* region, const char* type) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, region, type);
  c.region = FindRegionId(*w.catalog, region);
  c.instances = 1;
  return c;
}

TEST(HomeRegionTest, HomeIsTheDataRegionOrAServicesFirstUsers) {
  testing::World w = MakeWorld();
  JobSpec data = TwoHourJob("data", 1, 10);
  data.data = {"gcp:europe-west4", 100};
  JobSpec service = data;
  service.kind = WorkloadKind::kRealtimeInference;
  service.latency.users = {"gcp:asia-northeast1", "gcp:us-central1"};
  JobSpec batch_with_users = data;  // users of a batch job do not make a home
  batch_with_users.latency.users = {"gcp:asia-northeast1"};
  JobSpec service_no_users = service;
  service_no_users.latency.users.clear();
  const struct {
    const char* name;
    JobSpec spec;
    const char* home;  // nullptr: none
  } cases[] = {
      {"data region", data, "gcp:europe-west4"},
      {"service: its first users", service, "gcp:asia-northeast1"},
      {"batch job: data, not users", batch_with_users, "gcp:europe-west4"},
      {"service without users: data", service_no_users, "gcp:europe-west4"},
      {"no data, no users", TwoHourJob("none", 1, 10), nullptr},
  };
  for (const auto& c : cases) {
    RegionId want = c.home ? FindRegionId(*w.catalog, c.home) : RegionId::Invalid();
    EXPECT_EQ(HomeRegion(Queue(w, c.spec, 1)), want) << c.name;
  }
}

TEST(HomeRegionTest, FiltersByScope) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("eu", 1, 10);
  spec.data = {"gcp:europe-west4", 100};
  QueuedJob job = Queue(w, spec, 1);
  QueuedJob homeless = Queue(w, TwoHourJob("anywhere", 1, 10), 2);
  testing::Cycle cy(w, job);
  testing::Cycle free(w, homeless);
  HomeRegionPlugin all(HomeRegionPlugin::Scope::kAll);
  HomeRegionPlugin elastic(HomeRegionPlugin::Scope::kElastic);
  const std::string_view out = "outside the job's home region";
  const struct {
    const char* name;
    Candidate c;
    std::string_view all, elastic;  // "" = kept
  } cases[] = {
      {"node 0, us-central1", NodeAt(0), out, ""},
      {"node 3, europe-west4", NodeAt(3), "", ""},
      {"a3-highgpu-8g in us-central1", OfferAt(w, "gcp:us-central1", "a3-highgpu-8g"), out, out},
      {"a3-highgpu-8g in europe-west4", OfferAt(w, "gcp:europe-west4", "a3-highgpu-8g"), "", ""},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(all.Reject(cy.ctx, c.c), c.all) << c.name;
    EXPECT_EQ(elastic.Reject(cy.ctx, c.c), c.elastic) << c.name;
    EXPECT_EQ(all.Reject(free.ctx, c.c), "") << c.name << ": no home, no constraint";
  }
  std::vector<Candidate> batch;
  for (const auto& c : cases) batch.push_back(c.c);
  Rejections r;
  r.Reset("home_region", true);
  EXPECT_EQ(all.Filter(cy.ctx, batch, r), 2u);
  EXPECT_EQ(r.count(), 2u);
  EXPECT_EQ(batch[0].node, NodeId(3));
}

TEST(HomeRegionTest, PreFilterNarrowsToTheHomeRegion) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("eu", 1, 10);
  spec.data = {"gcp:europe-west4", 100};
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  PreFilterResult r = HomeRegionPlugin(HomeRegionPlugin::Scope::kAll).PreFilter(cy.ctx, cy.state);
  ASSERT_TRUE(r.status.ok());
  ASSERT_TRUE(r.regions.has_value());
  EXPECT_EQ(r.regions->count(), 1u);
  EXPECT_TRUE(r.regions->test(FindRegionId(*w.catalog, "gcp:europe-west4").index()));
  // Fleet nodes may run anywhere with scope: elastic, so nothing is narrowed.
  EXPECT_FALSE(HomeRegionPlugin(HomeRegionPlugin::Scope::kElastic).PreFilter(cy.ctx, cy.state).regions);
}

TEST(HomeRegionTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{scope: everywhere}", "p.yaml", "plugins[0].args");
  ASSERT_TRUE(args.ok());
  auto made = HomeRegionPlugin::Create(*args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("plugins[0].args.scope: \"everywhere\" must be all or elastic"),
            std::string::npos)
      << made.status().message();
}

}  // namespace
}  // namespace meridian::sched
