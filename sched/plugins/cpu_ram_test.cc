#include "sched/plugins/cpu_ram.h"

#include <gtest/gtest.h>

#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

// Test fleet (test_world.h): nodes 0,1 H100 x8, 64 vCPUs, 512 GiB; node 2
// H100 x2 (MIG), 16 vCPUs, 128 GiB; nodes 3..6 A100 x8, 96 vCPUs, 1024 GiB.
Candidate Node(uint32_t n, uint16_t per_node = 1) {
  Candidate c;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(n);
  c.gpus_per_node = per_node;
  return c;
}

Candidate Gang(uint32_t offset, uint16_t size) {
  Candidate c = Node(0);
  c.kind = CandidateKind::kGang;
  c.gang_offset = offset;
  c.gang_size = size;
  return c;
}

Candidate Elastic(const testing::World& w, const char* type, uint16_t n) {
  Candidate c;
  c.kind = CandidateKind::kElastic;
  c.offering = testing::Offering(w, "gcp:us-central1", type);
  c.instances = n;
  return c;
}

// The test world with the a3-highgpu offerings' real vCPUs and RAM (GCP
// machine types: 1g 26 vCPUs / 234 GB, 2g 52 / 468, 4g 104 / 936, 8g 208 / 1872).
testing::World WorldWithMachineSizes() {
  catalog::CatalogParts parts;
  parts.gpus = estimate::testing::TestGpus();
  parts.offerings = estimate::testing::TestOfferings();
  parts.regions = estimate::testing::TestRegions();
  parts.carbon = {estimate::testing::TestSeries()};
  parts.market.flex_start_discount = 0.53;
  parts.market.flex_start_max_run_hours = 168;
  parts.market.flex_start_expected_wait_hours = 2;
  for (catalog::Offering& o : parts.offerings) {
    if (o.instance_type == "a3-highgpu-1g") o.vcpus = 26, o.ram_gib = 234;
    if (o.instance_type == "a3-highgpu-2g") o.vcpus = 52, o.ram_gib = 468;
    if (o.instance_type == "a3-highgpu-4g") o.vcpus = 104, o.ram_gib = 936;
  }
  testing::World w;
  auto cat = catalog::Catalog::FromParts(std::move(parts));
  if (!cat.ok()) throw std::runtime_error(cat.status().ToString());
  w.catalog = *cat;
  w.fleet = *Fleet::Build(testing::SmallFleetSpec(), w.catalog);
  w.ledger = *w.fleet->NewLedger();
  w.market = std::make_unique<CatalogMarket>(w.catalog);
  w.elastic = std::make_unique<ElasticIndex>(*w.catalog);
  return w;
}

struct Case {
  const char* name;
  Candidate c;
  std::string_view want;  // "" = kept
};

TEST(CpuRamTest, FleetNodesNeedTheirShareFree) {
  testing::World w = MakeWorld();
  // Node 1 already runs a job holding 40 of its 64 vCPUs.
  Allocation held;
  held.job = JobId(99);
  held.nodes.push_back({NodeId(1), 0x1, std::nullopt, 40, 1024});
  ASSERT_TRUE(w.ledger.Reserve(held).ok());

  JobSpec spec = TwoHourJob("cpu", 2, 40);
  spec.resources.vcpus = 32;
  spec.resources.ram_gib = 300;
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  cy.members = {NodeId(0), NodeId(2), NodeId(3), NodeId(4)};
  const Case cases[] = {
      // 64 free >= 32 vCPUs, 512 GiB >= 300.
      {"node 0", Node(0), ""},
      // 64 - 40 = 24 free < 32.
      {"node 1, partly held", Node(1), "too few free vCPUs on a node"},
      // 16 < 32.
      {"the small MIG node", Node(2), "too few free vCPUs on a node"},
      // Gang of 2: ceil(32 / 2) = 16 vCPUs and ceil(300 / 2) = 150 GiB per
      // node; node 2 has 16 vCPUs but only 128 GiB.
      {"gang 0 + 2", Gang(0, 2), "too little free RAM on a node"},
      // 96 >= 16 and 1024 >= 150 on both.
      {"gang 3 + 4", Gang(2, 2), ""},
  };
  CpuRam plugin({});
  for (const Case& c : cases) EXPECT_EQ(plugin.Reject(cy.ctx, c.c, false), c.want) << c.name;
  EXPECT_EQ(plugin.Reject(cy.ctx, Node(1), true),
            "onprem-a-h100-80gb-1: 24 vCPUs free < 32 needed");

  // Headroom: 32 + 40 reserved = 72 > 64 on node 0; 96 >= 72 on node 3.
  CpuRam headroom({40, 0});
  EXPECT_EQ(headroom.Reject(cy.ctx, Node(0), false), "too few free vCPUs on a node");
  EXPECT_EQ(headroom.Reject(cy.ctx, Node(3), false), "");

  std::vector<Candidate> all;
  for (const Case& c : cases) all.push_back(c.c);
  Rejections r;
  r.Reset("cpu_ram", true);
  EXPECT_EQ(plugin.Filter(cy.ctx, all, r), 2u);
  EXPECT_EQ(r.count(), 3u);
  EXPECT_EQ(all[1].kind, CandidateKind::kGang);
}

TEST(CpuRamTest, EverPassJudgesAgainstWholeNodes) {
  testing::World w = MakeWorld();
  JobSpec spec = TwoHourJob("big", 1, 40);
  spec.resources.vcpus = 128;  // more than any node's 96
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  CpuRam plugin({});
  EXPECT_EQ(plugin.Reject(cy.ctx, Node(3), false), "too few free vCPUs on a node");
  // A job that states neither vCPUs nor RAM passes everywhere.
  QueuedJob plain = Queue(w, TwoHourJob("plain", 1, 40), 2);
  testing::Cycle cy2(w, plain);
  EXPECT_EQ(plugin.Reject(cy2.ctx, Node(2), false), "");
}

TEST(CpuRamTest, ElasticInstancesHoldTheJobsShare) {
  testing::World w = WorldWithMachineSizes();
  JobSpec spec = TwoHourJob("cpu", 4, 40);
  spec.resources.vcpus = 64;
  spec.resources.ram_gib = 500;
  QueuedJob job = Queue(w, spec, 1);
  testing::Cycle cy(w, job);
  const Case cases[] = {
      // 104 vCPUs >= 64, 936 GB >= 500.
      {"a3-highgpu-4g x1", Elastic(w, "a3-highgpu-4g", 1), ""},
      // x2: ceil(64 / 2) = 32 vCPUs but 52 >= 32; 468 GB >= 250.
      {"a3-highgpu-2g x2", Elastic(w, "a3-highgpu-2g", 2), ""},
      // x4: 16 vCPUs each <= 26; 125 GB each <= 234.
      {"a3-highgpu-1g x4", Elastic(w, "a3-highgpu-1g", 4), ""},
      // x1: 52 < 64.
      {"a3-highgpu-2g x1", Elastic(w, "a3-highgpu-2g", 1), "too few vCPUs per instance"},
      // The catalog states no vCPUs or RAM for a3-highgpu-8g here: not judged.
      {"a3-highgpu-8g x1", Elastic(w, "a3-highgpu-8g", 1), ""},
  };
  CpuRam plugin({});
  CpuRam prepared({});  // prepared as the scheduler prepares it
  ASSERT_TRUE(prepared.Prepare({*w.fleet, *w.catalog}).ok());
  for (const Case& c : cases) {
    EXPECT_EQ(plugin.Reject(cy.ctx, c.c, false), c.want) << c.name;
    EXPECT_EQ(prepared.Reject(cy.ctx, c.c, false), c.want) << c.name;
  }
  EXPECT_EQ(prepared.Reject(cy.ctx, Elastic(w, "a3-highgpu-2g", 1), true),
            "a3-highgpu-2g has 52 vCPUs < 64 per instance");

  JobSpec ram = TwoHourJob("ram", 1, 40);
  ram.resources.ram_gib = 300;  // > 234 GB of a3-highgpu-1g
  QueuedJob rj = Queue(w, ram, 2);
  testing::Cycle cy2(w, rj);
  EXPECT_EQ(plugin.Reject(cy2.ctx, Elastic(w, "a3-highgpu-1g", 1), false),
            "too little RAM per instance");
}

// The invariant: with cpu_ram in the profile, a cycle never asks the ledger
// for vCPUs or RAM it does not have (no commit error), and never over-allocates.
TEST(CpuRamTest, CycleNeverOverAllocatesVcpusOrRam) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
  auto profile = ParseProfile(R"(name: t
plugins:
  - name: gpu_fit
  - name: cpu_ram
  - name: first_fit
)", "t.yaml");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<QueuedJob> jobs;
  for (uint32_t i = 1; i <= 20; ++i) {
    JobSpec spec = TwoHourJob("j" + std::to_string(i), 1, 40);
    spec.resources.vcpus = 40;
    spec.resources.ram_gib = 200;
    jobs.push_back(Queue(w, spec, i));
  }
  std::vector<const QueuedJob*> ptrs;
  for (const QueuedJob& j : jobs) ptrs.push_back(&j);
  std::vector<Decision> ds = (*s)->RunCycle(w.At(), ptrs, &w.ledger);
  int placed = 0;
  for (const Decision& d : ds) {
    EXPECT_NE(d.kind, DecisionKind::kError) << d.status.ToString();
    placed += d.kind == DecisionKind::kPlace;
  }
  // 40 vCPUs fit once on each 64-vCPU H100 node (2) and twice on each
  // 96-vCPU A100 node (4 x 2 = 8); the 16-vCPU MIG node never: 10 jobs.
  EXPECT_EQ(placed, 10);
  for (const sched::Node& n : w.fleet->nodes()) {
    EXPECT_GE(w.ledger.free_vcpus(n.id), 0) << n.name;
    EXPECT_GE(w.ledger.free_ram_mib(n.id), 0) << n.name;
  }
}

TEST(CpuRamTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml("{reserve_vcpus: -1, reserve_ram_gib: lots}", "p.yaml",
                                   "plugins[2].args");
  ASSERT_TRUE(args.ok());
  auto made = CpuRam::Create(*args);
  ASSERT_FALSE(made.ok());
  const std::string& m = made.status().message();
  EXPECT_NE(m.find("plugins[2].args.reserve_vcpus: \"-1\" must be >= 0"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[2].args.reserve_ram_gib"), std::string::npos) << m;
}

}  // namespace
}  // namespace meridian::sched
