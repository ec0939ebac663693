#include "sched/plugins/driver_pin.h"

#include <gtest/gtest.h>

#include "sched/explain.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::Queue;
using testing::TwoHourJob;

// The test fleet with declared stacks: onprem-a's H100 x8 nodes (0, 1) run
// driver 550.54.15 / CUDA 12.4, its MIG node (2) declares nothing, onprem-b's
// A100 nodes (3..6) run 535.104.05 / CUDA 12.2.
testing::World DeclaredWorld(bool elastic = true) {
  FleetSpec f = testing::SmallFleetSpec();
  f.clusters[0].nodes[0].driver = {"550.54.15", "12.4"};
  f.clusters[1].nodes[0].driver = {"535.104.05", "12.2"};
  return testing::MakeWorld(f, elastic);
}

QueuedJob Pinned(const testing::World& w, DriverPin pin, uint32_t id = 1) {
  JobSpec spec = TwoHourJob("pinned", 1, 40);
  spec.driver = std::move(pin);
  return Queue(w, spec, id);
}

Candidate Node(uint32_t n) {
  Candidate c;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(n);
  c.gpus_per_node = 1;
  return c;
}

Candidate Elastic(const testing::World& w) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, "gcp:us-central1", "a3-highgpu-1g");
  c.instances = 1;
  return c;
}

std::unique_ptr<DriverStack> Make(const testing::World& w, DriverStack::Options o) {
  auto p = std::make_unique<DriverStack>(o);
  EXPECT_TRUE(p->Prepare({*w.fleet, *w.catalog}).ok());
  return p;
}

struct Case {
  const char* name;
  DriverPin pin;
  Candidate c;
  DriverStack::Options options;
  std::string_view want;  // "" = kept
};

TEST(DriverPinTest, DeclaredStacksMustMatch) {
  testing::World w = DeclaredWorld();
  const DriverPin full{"550.54.15", "12.4"};
  const DriverStack::Options lenient{true, true};
  const DriverStack::Options strict{false, false};
  const Case cases[] = {
      {"node 0 declares the pinned stack", full, Node(0), lenient, ""},
      {"node 3 declares 535 / 12.2", full, Node(3), lenient,
       "node's declared driver stack differs from the job's pin"},
      {"CUDA pin only: node 0 (12.4)", {"", "12.4"}, Node(0), lenient, ""},
      {"CUDA pin only: node 3 (12.2)", {"", "12.4"}, Node(3), lenient,
       "node's declared driver stack differs from the job's pin"},
      {"undeclared node 2, undeclared: match", full, Node(2), lenient, ""},
      {"undeclared node 2, undeclared: reject", full, Node(2), strict,
       "node declares no driver stack (undeclared: reject)"},
      {"offering, elastic: image", full, Elastic(w), lenient, ""},
      {"offering, elastic: reject", full, Elastic(w), strict,
       "offerings cannot carry a pinned driver (elastic: reject)"},
      {"no pin: node 3", {}, Node(3), strict, ""},
  };
  for (const Case& c : cases) {
    QueuedJob job = Pinned(w, c.pin);
    testing::Cycle cy(w, job);
    EXPECT_EQ(Make(w, c.options)->Reject(cy.ctx, c.c), c.want) << c.name;
  }
  // A gang is checked member by member: 0 matches, 3 does not.
  QueuedJob job = Pinned(w, full);
  testing::Cycle cy(w, job);
  cy.members = {NodeId(0), NodeId(3)};
  Candidate gang = Node(0);
  gang.kind = CandidateKind::kGang;
  gang.gang_size = 2;
  EXPECT_EQ(Make(w, lenient)->Reject(cy.ctx, gang),
            "node's declared driver stack differs from the job's pin");
}

TEST(DriverPinTest, ExplanationSaysHowThePinIsMet) {
  testing::World w = DeclaredWorld();
  QueuedJob job = Pinned(w, {"550.54.15", "12.4"});
  testing::Cycle cy(w, job);
  auto p = Make(w, {});
  EXPECT_EQ(p->Score(cy.ctx, Node(0)), 0);  // neutral
  EXPECT_EQ(p->ExplainScore(cy.ctx, Node(0), 0),
            "every node declares a stack matching driver 550.54.15, CUDA 12.4");
  EXPECT_EQ(p->ExplainScore(cy.ctx, Node(2), 0),
            "a node declares no driver stack: assumed to match the pin");
  // The estimator's wording (estimate/options.cc, Option::image).
  EXPECT_EQ(p->ExplainScore(cy.ctx, Elastic(w), 0), "custom image: driver 550.54.15, CUDA 12.4");
  EXPECT_EQ(CustomImage({"", "12.4"}), "custom image: CUDA 12.4");
  EXPECT_EQ(CustomImage({}), "");
  QueuedJob plain = Queue(w, TwoHourJob("plain", 1, 40), 2);
  testing::Cycle cy2(w, plain);
  EXPECT_EQ(p->ExplainScore(cy2.ctx, Node(0), 0), "");
}

// Through the scheduler, on the fleet alone: onprem-a is cheapest
// (8 x 1.10 x 2 = 17.60 $) but declares 550 / 12.4; a job pinned to
// 535 / 12.2 goes to onprem-b (8 x 2.00 x 2 = 32 $), which declares it.
TEST(DriverPinTest, DecisionHonoursThePin) {
  testing::World w = DeclaredWorld(/*elastic=*/false);
  auto profile = ParseProfile(R"(name: t
plugins:
  - name: gpu_fit
  - name: driver_pin
  - name: cheapest_price
)", "t.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  JobSpec spec = TwoHourJob("pinned", 8, 40);
  spec.driver = {"535.104.05", "12.2"};
  QueuedJob job = Queue(w, spec, 1);
  Decision d = (*s)->Decide(job, w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  EXPECT_EQ(d.allocation->nodes.at(0).node, NodeId(3));
  ASSERT_TRUE(d.chosen.has_value());
  EXPECT_EQ(d.chosen->scores.at(0).plugin, "driver_pin");
  EXPECT_EQ(d.chosen->scores.at(0).note,
            "every node declares a stack matching driver 535.104.05, CUDA 12.2");
}

TEST(DriverPinTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{undeclared: maybe, elastic: never}", "p.yaml",
                                   "plugins[4].args");
  ASSERT_TRUE(args.ok());
  auto made = DriverStack::Create(*args);
  ASSERT_FALSE(made.ok());
  const std::string& m = made.status().message();
  EXPECT_NE(m.find("plugins[4].args.undeclared"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[4].args.elastic"), std::string::npos) << m;
}

}  // namespace
}  // namespace meridian::sched
