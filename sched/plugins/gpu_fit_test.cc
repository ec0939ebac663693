#include "sched/plugins/gpu_fit.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Model;
using testing::Queue;
using testing::TwoHourJob;

// Test fleet (test_world.h): nodes 0,1 H100 x8 and node 2 H100 x2 (MIG) in
// onprem-a; nodes 3..6 A100 x8 in onprem-b.
Candidate Node(uint32_t n, uint16_t per_node, uint8_t demand = 0) {
  Candidate c;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(n);
  c.gpus_per_node = per_node;
  c.demand = demand;
  return c;
}

Candidate Gang(uint32_t offset, uint16_t size, uint16_t per_node) {
  Candidate c = Node(0, per_node);
  c.kind = CandidateKind::kGang;
  c.gang_offset = offset;
  c.gang_size = size;
  return c;
}

Candidate Elastic(const testing::World& w, const char* region, const char* type, uint16_t n) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, region, type);
  c.instances = n;
  return c;
}

Candidate Mig(uint8_t profile, MigShape shape, uint8_t demand) {
  Candidate c;
  c.kind = CandidateKind::kMigSlice;
  c.node = NodeId(2);
  c.mig_profile = profile;
  c.mig_shape = shape;
  c.demand = demand;
  return c;
}

struct Case {
  const char* name;
  Candidate c;
  std::string_view want;  // "" = kept
};

TEST(GpuFitTest, FiltersCandidates) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("four", 4, 40);
  spec.resources.gpu_models = {"H100-80GB", "A100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  // Demands in catalog order: H100 (0) then A100 (1), 4 GPUs of 40 GiB each.
  ASSERT_EQ(job.demands.size(), 2u);
  ASSERT_EQ(job.demands[0].model, Model(w, "H100-80GB"));
  testing::Cycle cy(w, job);
  cy.members = {NodeId(0), NodeId(1), NodeId(0), NodeId(3)};
  const Case cases[] = {
      {"4 of node 0's 8 H100s", Node(0, 4), ""},
      {"A100 node for the H100 demand", Node(3, 4), "node's GPU model is not the demand's"},
      {"A100 node for the A100 demand", Node(3, 4, 1), ""},
      {"1 node x 2 GPUs < 4", Node(0, 2), "too few GPUs"},
      {"4 per node on the 2-GPU MIG node", Node(2, 4), "more GPUs per node than the node has"},
      {"gang 0+1, 2 GPUs each = 4", Gang(0, 2, 2), ""},
      {"gang across clusters", Gang(2, 2, 2), "gang members in different clusters"},
      {"gang 1+0, out of order", Gang(1, 2, 2), ""},
      {"gang 0+1+0: node 0 twice", Gang(0, 3, 2), "a node listed twice in the gang"},
      {"a3-highgpu-4g: 1 x 4 GPUs", Elastic(w, "gcp:us-central1", "a3-highgpu-4g", 1), ""},
      {"a3-highgpu-2g: 1 x 2 < 4", Elastic(w, "gcp:us-central1", "a3-highgpu-2g", 1),
       "too few GPUs in the offering"},
  };
  GpuFit fit({});
  for (const Case& c : cases) EXPECT_EQ(fit.Reject(cy.ctx, c.c), c.want) << c.name;

  // Filter keeps the survivors in order and counts the rest.
  std::vector<Candidate> all;
  for (const Case& c : cases) all.push_back(c.c);
  Rejections r;
  r.Reset("gpu_fit", true);
  size_t kept = fit.Filter(cy.ctx, all, r);
  EXPECT_EQ(kept, 5u);  // 11 cases, 6 rejected
  EXPECT_EQ(r.count(), 6u);
  EXPECT_EQ(r.examples().size(), Rejections::kMaxExamples);
  EXPECT_EQ(all[1].node, NodeId(3));
}

TEST(GpuFitTest, GangOptions) {
  testing::World w = MakeWorld();
  QueuedJob job = Queue(w, TwoHourJob("sixteen", 16, 40), 1);
  testing::Cycle cy(w, job);
  cy.members = {NodeId(3), NodeId(4), NodeId(5)};
  GpuFit no_gangs({false, 8});
  GpuFit two_max({true, 2});
  // 16 GPUs on A100 (demand index of A100 in catalog order: H100, A100, ...).
  uint8_t a100 = 0;
  for (size_t i = 0; i < job.demands.size(); ++i) {
    if (job.demands[i].model == Model(w, "A100-80GB")) a100 = static_cast<uint8_t>(i);
  }
  Candidate two = Gang(0, 2, 8);
  two.demand = a100;
  two.node = NodeId(3);
  Candidate three = Gang(0, 3, 6);  // 3 x 6 = 18 >= 16
  three.demand = a100;
  three.node = NodeId(3);
  EXPECT_EQ(no_gangs.Reject(cy.ctx, two), "multi-node placements are not allowed");
  EXPECT_EQ(two_max.Reject(cy.ctx, two), "");
  EXPECT_EQ(two_max.Reject(cy.ctx, three), "spans more nodes than max_gang_nodes");
}

TEST(GpuFitTest, MigSliceMemory) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("small", 1, 15);
  spec.resources.mig = true;
  spec.resources.gpu_models = {"H100-80GB"};
  QueuedJob job = Queue(w, spec, 1);
  ASSERT_EQ(job.demands.size(), 1u);
  // Test H100 profiles: 0 1g.10gb, 1 1g.20gb, 2 3g.40gb, 3 7g.80gb. A stated
  // 15 GiB may use all of a slice: 1g.20gb (20 >= 15) is the smallest.
  EXPECT_EQ(job.demands[0].mig_profile, 1);
  EXPECT_EQ(job.demands[0].mig_span, 2);
  testing::Cycle cy(w, job);
  GpuFit fit({});
  EXPECT_EQ(fit.Reject(cy.ctx, Mig(0, {4, 1}, 0)), "MIG slice has too little memory");  // 10 < 15
  EXPECT_EQ(fit.Reject(cy.ctx, Mig(1, {6, 2}, 0)), "");
  EXPECT_EQ(fit.Reject(cy.ctx, Mig(2, {0, 4}, 0)), "");
}

TEST(GpuFitTest, PreFilterRejectsJobsNoModelFits) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("big", 1, 40);
  spec.resources.gpu_models = {"V100-32GB"};  // 40 GiB stated > 32 GiB
  spec.model.precision = Precision::kFp16;    // V100 has no bf16
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  GpuFit fit({});
  PreFilterResult r = fit.PreFilter(cy.ctx, cy.state);
  EXPECT_EQ(r.status.code(), StatusCode::kUnresolvable);
  EXPECT_NE(r.status.message().find("V100-32GB: not enough VRAM"), std::string::npos)
      << r.status.message();

  QueuedJob ok = Queue(w, TwoHourJob("ok", 1, 40), 2);
  testing::Cycle cy2(w, ok);
  PreFilterResult r2 = fit.PreFilter(cy2.ctx, cy2.state);
  EXPECT_TRUE(r2.status.ok());
  ASSERT_TRUE(r2.models.has_value());
  EXPECT_TRUE(r2.models->test(Model(w, "H100-80GB").index()));
  EXPECT_FALSE(r2.models->test(Model(w, "L4").index()));  // 24 GiB < 40
}

TEST(GpuFitTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{max_gang_nodes: 0, allow_gangs: maybe, extra: 1}", "p.yaml",
                                   "plugins[1].args");
  ASSERT_TRUE(args.ok());
  auto made = GpuFit::Create(*args);
  ASSERT_FALSE(made.ok());
  const std::string& m = made.status().message();
  EXPECT_NE(m.find("p.yaml:1:18: plugins[1].args.max_gang_nodes: \"0\" must be >= 1"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[1].args.allow_gangs: \"maybe\" must be true or false"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[1].args.extra: unknown argument"), std::string::npos) << m;
}

}  // namespace
}  // namespace meridian::sched
