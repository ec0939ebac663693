#include "sched/plugins/cpu_fallback.h"

#include <gtest/gtest.h>

#include "sched/cost.h"
#include "sched/profile.h"
#include "sched/scheduler.h"
#include "sched/test_cpu_fleet.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::CpuFleet;
using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

QueuedJob FallbackJob(const testing::World& w, std::optional<int64_t> deadline_after_s = {}) {
  JobSpec spec = TwoHourJob("f", 1, 40);
  spec.resources.gpu_models = {"H100-80GB"};
  spec.resources.cpu_fallback = meridian::CpuFallback{4};
  spec.resources.vcpus = 16;
  spec.resources.ram_gib = 64;
  if (deadline_after_s) spec.deadline.after_submit_s = *deadline_after_s;
  return Queue(w, spec, 1);
}

Candidate GpuNode() {
  Candidate c;
  c.node = NodeId(0);
  c.gpus_per_node = 1;
  c.start = kNow;
  return c;
}

TEST(CpuFallbackTest, CheaperPerUnitOfWork) {
  // CPU: 2 h on 1 GPU x slowdown 4 = 8 h; (16 vCPUs x 0.031611 + 64 GiB x 0.004237) $/h
  //      = 0.776944 $/h x 8 h = 6.215552 $
  struct Case {
    double gpu_hour;
    const char* want;  // nullptr: stays on GPUs
  } cases[] = {
      {1.10, nullptr},    // GPU: 1 x 1.10 x 2 h = 2.20 $ < 6.22 $
      {5.00, "cheaper"},  // GPU: 1 x 5.00 x 2 h = 10.00 $ > 6.22 $
  };
  for (const Case& c : cases) {
    testing::World w = MakeWorld(CpuFleet(c.gpu_hour), false);
    QueuedJob job = FallbackJob(w);
    testing::Cycle cy(w, job);
    CpuFallback p({});
    ASSERT_TRUE(p.CpuCost(cy.ctx).has_value());
    EXPECT_NEAR(p.CpuCost(cy.ctx)->dollars(), 6.215552, 1e-6);
    // The fleet's default CPU rates, as RunCost explains them (node 1 is a CPU node).
    Candidate cpu;
    cpu.kind = CandidateKind::kCpuNode;
    cpu.node = NodeId(1);
    cpu.start = kNow;
    EXPECT_EQ(RunCostArithmetic(cy.ctx, cpu),
              "(16 vCPUs x 0.031611 $/vCPU-h + 64.0 GiB x 0.004237 $/GiB-h) x 8.00 h = 6.22 $");
    Candidate gpu = GpuNode();
    const char* why = p.Reason(cy.ctx, std::span<const Candidate>(&gpu, 1));
    EXPECT_EQ(why == nullptr, c.want == nullptr) << c.gpu_hour;
    if (why && c.want) {
      EXPECT_STREQ(why, c.want);
    }
  }
}

TEST(CpuFallbackTest, ScarceWhenNoGpuFreesWithinTheSlack) {
  testing::World w = MakeWorld(CpuFleet(1.10), false);
  Allocation a;  // the GPU node is full until now + 10 h
  a.job = JobId(50);
  a.start = kNow;
  a.end = kNow + 10 * 3600;
  a.nodes.push_back({NodeId(0), 0xff, std::nullopt, 0, 0});
  ASSERT_TRUE(w.ledger.Reserve(a).ok());
  CpuFallback p({});
  struct Case {
    const char* name;
    std::optional<int64_t> deadline;
    bool cpu;
  } cases[] = {
      // latest GPU start = +6 h - 2 h = +4 h < the GPU frees at +10 h: CPU
      {"deadline in 6 h", 6 * 3600, true},
      // latest GPU start = +12 h - 2 h = +10 h: the GPU frees in time, wait for it
      {"deadline in 12 h", 12 * 3600, false},
      {"no deadline: wait for a GPU", std::nullopt, false},
  };
  for (const Case& c : cases) {
    QueuedJob job = FallbackJob(w, c.deadline);
    testing::Cycle cy(w, job);
    EXPECT_EQ(p.EarliestGpu(cy.ctx), kNow + 10 * 3600);
    EXPECT_EQ(p.Reason(cy.ctx, {}) != nullptr, c.cpu) << c.name;
    std::vector<Candidate> out;
    std::vector<NodeId> members;
    CandidateSink sink(&out, &members, 64, 3);
    p.AddCandidates(cy.ctx, {}, sink);
    // Both CPU nodes (1, 2) have 16 vCPUs and 64 GiB free.
    EXPECT_EQ(out.size(), c.cpu ? 2u : 0u) << c.name;
    if (c.cpu) {
      EXPECT_EQ(out[0].kind, CandidateKind::kCpuNode);
      EXPECT_EQ(out[0].node, NodeId(1));
      EXPECT_EQ(out[1].node, NodeId(2));
      EXPECT_DOUBLE_EQ(cy.ctx.RunHours(out[0]), 8.0);  // 2 h x 1 GPU x 4
    }
  }
}

TEST(CpuFallbackTest, OnlyJobsWithFallback) {
  testing::World w = MakeWorld(CpuFleet(5.00), false);
  QueuedJob job = Queue(w, TwoHourJob("plain", 1, 40), 1);
  testing::Cycle cy(w, job);
  std::vector<Candidate> out;
  std::vector<NodeId> members;
  CandidateSink sink(&out, &members, 64, 3);
  CpuFallback({}).AddCandidates(cy.ctx, {}, sink);
  EXPECT_TRUE(out.empty());

  auto args = PluginArgs::FromYaml("{vcpu_hour_usd: 0.05, max_nodes: 100}", "p.yaml", "plugins[5].args");
  ASSERT_TRUE(args.ok());
  auto made = CpuFallback::Create(*args);
  ASSERT_FALSE(made.ok());
  // The CPU's price moved to the fleet file; the profile is told where.
  EXPECT_NE(made.status().message().find("plugins[5].args.vcpu_hour_usd: is priced by the fleet now: "
                                         "set vcpu_hour_usd on the fleet file's clusters"),
            std::string::npos) << made.status().message();
  EXPECT_EQ(made.status().message().find("unknown argument"), std::string::npos)
      << made.status().message();
  EXPECT_NE(made.status().message().find("plugins[5].args.max_nodes: \"100\" must be <= 64"),
            std::string::npos) << made.status().message();
}

// A CPU-only job (gpus: 0) runs on CPU whatever its price: CPU nodes first,
// then the spare vCPUs of GPU nodes; through the default profile it is
// placed, holds no GPU, and its vCPUs and RAM are taken from the node.
TEST(CpuFallbackTest, CpuOnlyJobsArePlacedOnCpu) {
  JobSpec spec;
  spec.name = "etl";
  spec.kind = WorkloadKind::kBatchInference;
  spec.resources.gpus = 0;
  spec.resources.vcpus = 8;
  spec.resources.ram_gib = 32;
  spec.work.duration_s = 3600;
  struct Case {
    const char* name;
    bool cpu_nodes;   // the fleet has CPU nodes (else only the H100 node)
    NodeId want;
  } cases[] = {
      {"CPU nodes first", true, NodeId(1)},
      {"else a GPU node's spare vCPUs", false, NodeId(0)},
  };
  for (const Case& c : cases) {
    FleetSpec f = CpuFleet(1.10);
    if (!c.cpu_nodes) f.clusters[0].nodes.pop_back();
    testing::World w = MakeWorld(f, false);
    QueuedJob job = Queue(w, spec, 1);
    ASSERT_TRUE(job.cpu_only);
    testing::Cycle cy(w, job);
    std::vector<Candidate> out;
    std::vector<NodeId> members;
    CandidateSink sink(&out, &members, 64, 3);
    CpuFallback({}).AddCandidates(cy.ctx, {}, sink);
    ASSERT_FALSE(out.empty()) << c.name;
    EXPECT_EQ(out[0].kind, CandidateKind::kCpuNode) << c.name;
    EXPECT_EQ(out[0].node, c.want) << c.name;
    EXPECT_EQ(out.size(), c.cpu_nodes ? 3u : 1u) << c.name;  // CPU nodes 1, 2, then node 0

    auto profile = EmbeddedProfile("default");
    ASSERT_TRUE(profile.ok()) << profile.status().ToString();
    auto s = Scheduler::Create(*profile, w.fleet);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    Decision d = (*s)->Decide(job, w.At());
    ASSERT_EQ(d.kind, DecisionKind::kPlace) << c.name << ": " << d.status.ToString();
    ASSERT_EQ(d.allocation->nodes.size(), 1u);
    EXPECT_EQ(d.allocation->nodes[0].node, c.want) << c.name;
    EXPECT_EQ(d.allocation->nodes[0].gpus, 0u) << c.name;
    EXPECT_EQ(d.allocation->nodes[0].vcpus, 8) << c.name;
    EXPECT_EQ(d.allocation->nodes[0].ram_mib, 32 * 1024) << c.name;
    // Its pricing is said at the CPU rates RunCost charged, not the GPU's.
    EXPECT_EQ(d.pricing_reason,
              "owned capacity of cluster onprem-a at 0.031611 $/vCPU-h and 0.004237 $/GiB-h")
        << c.name;
  }
}

// Every shipped profile runs what the fleet can run: a CPU-only job is placed
// on a CPU node (node 1, the first CPU node in fleet order), holding no GPU,
// under default and the baselines alike (the baselines through cpu_fallback
// with jobs: cpu-only).
TEST(CpuFallbackTest, EveryShippedProfilePlacesCpuOnlyJobs) {
  JobSpec spec;
  spec.name = "etl";
  spec.kind = WorkloadKind::kBatchInference;
  spec.resources.gpus = 0;
  spec.resources.vcpus = 8;
  spec.resources.ram_gib = 32;
  spec.work.duration_s = 3600;
  testing::World w = MakeWorld(CpuFleet(1.10), false);
  QueuedJob job = Queue(w, spec, 1);
  for (const std::string& name : EmbeddedProfileNames()) {
    auto profile = EmbeddedProfile(name);
    ASSERT_TRUE(profile.ok()) << name << ": " << profile.status().ToString();
    auto s = Scheduler::Create(*profile, w.fleet);
    ASSERT_TRUE(s.ok()) << name << ": " << s.status().ToString();
    Decision d = (*s)->Decide(job, w.At());
    ASSERT_EQ(d.kind, DecisionKind::kPlace) << name << ": " << d.status.ToString();
    ASSERT_EQ(d.allocation->nodes.size(), 1u) << name;
    EXPECT_EQ(d.allocation->nodes[0].node, NodeId(1)) << name;
    EXPECT_EQ(d.allocation->nodes[0].gpus, 0u) << name;
  }
}

// jobs: cpu-only keeps GPU work on GPUs: a job with cpu_fallback whose CPU
// run is cheaper (the CheaperPerUnitOfWork case at 5.00 $/h: 6.22 $ on CPU
// against 10.00 $ on the GPU) is offered no CPU node, in the cycle or in the
// "ever" pass; a CPU-only job is offered the CPU nodes (1 and 2) and not the
// GPU node's spare vCPUs, unless the fleet has no CPU node (then node 0).
TEST(CpuFallbackTest, CpuOnlyModeOffersCpuToCpuOnlyJobsOnCpuNodes) {
  auto args = PluginArgs::FromYaml("{jobs: cpu-only}", "p.yaml", "plugins[3].args");
  ASSERT_TRUE(args.ok());
  auto made = CpuFallback::Create(*args);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const auto& p = static_cast<const CpuFallback&>(**made);
  JobSpec cpu;
  cpu.name = "etl";
  cpu.kind = WorkloadKind::kBatchInference;
  cpu.resources.gpus = 0;
  cpu.resources.vcpus = 8;
  cpu.resources.ram_gib = 32;
  cpu.work.duration_s = 3600;
  struct Case {
    const char* name;
    bool cpu_job;
    bool cpu_nodes;  // the fleet has its two CPU nodes (else only the H100 node)
    std::vector<NodeId> want;
  } cases[] = {
      {"GPU job with a cheaper CPU fallback", false, true, {}},
      {"CPU-only job", true, true, {NodeId(1), NodeId(2)}},
      {"CPU-only job, no CPU node", true, false, {NodeId(0)}},
  };
  for (const Case& c : cases) {
    FleetSpec f = CpuFleet(5.00);
    if (!c.cpu_nodes) f.clusters[0].nodes.pop_back();
    testing::World w = MakeWorld(f, false);
    const QueuedJob job = c.cpu_job ? Queue(w, cpu, 2) : FallbackJob(w);
    for (bool ever : {false, true}) {
      testing::Cycle cy(w, job);
      CycleContext ctx({&job, &cy.snap, &w.ledger, &cy.state, &cy.rng, &cy.members,
                        ExplainLevel::kFull, ever});
      std::vector<Candidate> out;
      std::vector<NodeId> members;
      CandidateSink sink(&out, &members, 64, 3);
      Candidate gpu = GpuNode();
      p.AddCandidates(ctx, std::span<const Candidate>(&gpu, 1), sink);
      std::vector<NodeId> got;
      for (const Candidate& k : out) got.push_back(k.node);
      EXPECT_EQ(got, c.want) << c.name << (ever ? " (ever pass)" : "");
    }
  }

  auto bad = PluginArgs::FromYaml("{jobs: gpu}", "p.yaml", "plugins[3].args");
  ASSERT_TRUE(bad.ok());
  auto refused = CpuFallback::Create(*bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("plugins[3].args.jobs"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace meridian::sched
