#include "sched/plugins/quota.h"

#include <gtest/gtest.h>

#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

std::unique_ptr<Quota> Make(const char* yaml) {
  auto args = PluginArgs::FromYaml(yaml, "p.yaml", "plugins[1].args");
  EXPECT_TRUE(args.ok());
  auto made = Quota::Create(*args);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return std::unique_ptr<Quota>(static_cast<Quota*>(made->release()));
}

Candidate Gpus(uint16_t n, uint32_t node = 0) {
  Candidate c;
  c.kind = CandidateKind::kNode;
  c.node = NodeId(node);
  c.gpus_per_node = n;
  return c;
}

QueuedJob JobOf(const testing::World& w, const char* tenant, uint32_t id, int gpus, uint32_t tenant_id) {
  JobSpec s = TwoHourJob("j", gpus, 10);
  s.tenant = tenant;
  QueuedJob q = Queue(w, s, id);
  q.tenant = TenantId(tenant_id);
  return q;
}

TEST(QuotaTest, CountsEighthsOfAGpu) {
  testing::World w = MakeWorld();
  QueuedJob job = JobOf(w, "research", 1, 1, 0);
  testing::Cycle cy(w, job);
  Candidate mig;
  mig.kind = CandidateKind::kMigSlice;
  mig.node = NodeId(2);
  mig.mig_shape = {0, 4};
  Candidate gang = Gpus(6);
  gang.kind = CandidateKind::kGang;
  gang.gang_size = 2;
  Candidate a3;
  a3.kind = CandidateKind::kElastic;
  a3.offering = testing::Offering(w, "gcp:us-central1", "a3-highgpu-2g");
  a3.instances = 3;
  EXPECT_EQ(Quota::EighthsOf(cy.ctx, Gpus(4)), 32);  // 4 GPUs x 8
  EXPECT_EQ(Quota::EighthsOf(cy.ctx, mig), 4);       // 3g.40gb: 4 memory slices
  EXPECT_EQ(Quota::EighthsOf(cy.ctx, gang), 96);     // 2 nodes x 6 GPUs x 8
  EXPECT_EQ(Quota::EighthsOf(cy.ctx, a3), 48);       // 3 instances x 2 GPUs x 8
}

TEST(QuotaTest, RejectsWhatWouldExceedTheTenantsQuota) {
  testing::World w = MakeWorld();
  auto quota = Make("{tenants: {research: 8, prod: 2.5}, default_gpus: 1}");
  // research holds 6 GPUs (job 10 committed): 6 x 8 = 48 of 64 eighths.
  Allocation held;
  held.job = JobId(10);
  held.tenant = TenantId(0);
  held.nodes.push_back({NodeId(0), 0x3f, std::nullopt, 0, 0});
  Decision none;
  Snapshot snap = w.At();
  CommitContext cc{snap, none};
  ASSERT_TRUE(quota->Reserve(cc, held).ok());
  ASSERT_TRUE(quota->Reserve(cc, held).ok());  // idempotent
  EXPECT_EQ(quota->Held(TenantId(0)), 48);

  QueuedJob research = JobOf(w, "research", 1, 1, 0);
  QueuedJob prod = JobOf(w, "prod", 2, 1, 1);
  QueuedJob other = JobOf(w, "other", 3, 1, 2);
  testing::Cycle r(w, research), p(w, prod), o(w, other);
  const std::string over = "the tenant's GPU quota would be exceeded: holds ";
  const struct {
    const char* name;
    testing::Cycle* cy;
    Candidate c;
    std::string want;
  } cases[] = {
      {"research 48 + 16 = 64 <= 64", &r, Gpus(2), ""},
      // 48 eighths = 6 GPUs, 24 = 3, 64 = 8
      {"research 48 + 24 = 72 > 64", &r, Gpus(3), over + "6 + 3 > 8 GPUs"},
      {"prod 0 + 16 <= floor(2.5 x 8) = 20", &p, Gpus(2), ""},
      // 20 eighths = 2.5 GPUs
      {"prod 0 + 24 > 20", &p, Gpus(3), over + "0 + 3 > 2.5 GPUs"},
      {"other: default 1 GPU, 8 <= 8", &o, Gpus(1), ""},
      {"other: 16 > 8", &o, Gpus(2), over + "0 + 2 > 1 GPUs"},
  };
  for (const auto& c : cases) {
    std::vector<Candidate> one = {c.c};
    Rejections rej;
    rej.Reset("quota", true);
    size_t kept = quota->Filter(c.cy->ctx, one, rej);
    EXPECT_EQ(kept, c.want.empty() ? 1u : 0u) << c.name;
    if (!c.want.empty() && !rej.examples().empty()) {
      EXPECT_EQ(rej.examples()[0].second, c.want) << c.name;
    }
  }
  // Released: research is back to 0 held.
  quota->Unreserve(cc, held);
  quota->Unreserve(cc, held);  // idempotent
  EXPECT_EQ(quota->Held(TenantId(0)), 0);
}

TEST(QuotaTest, TheEverPassJudgesTheWholeQuota) {
  testing::World w = MakeWorld();
  auto quota = Make("{tenants: {research: 4}}");
  QueuedJob job = JobOf(w, "research", 1, 8, 0);
  Snapshot snap = w.At();
  CycleState state;
  Rng rng(1);
  std::vector<NodeId> members;
  CycleContext ever({&job, &snap, &w.ledger, &state, &rng, &members, ExplainLevel::kFull, true});
  std::vector<Candidate> one = {Gpus(8)};
  Rejections rej;
  rej.Reset("quota", true);
  EXPECT_EQ(quota->Filter(ever, one, rej), 0u);  // 64 eighths > 32, even with nothing held
  EXPECT_EQ(rej.examples()[0].second, "more GPUs than the tenant's whole quota");
  // Unlisted tenants without default_gpus are unlimited.
  QueuedJob free = JobOf(w, "other", 2, 8, 1);
  testing::Cycle cy(w, free);
  std::vector<Candidate> big = {Gpus(8)};
  EXPECT_EQ(quota->Filter(cy.ctx, big, rej), 1u);
}

// A preemption's check (CycleContext::preemption, on the empty ledger as
// the framework runs it) counts what the tenant holds less its own victims;
// others' victims give it nothing back.
TEST(QuotaTest, APreemptionCountsOnlyTheTenantsOwnVictimsAsReleased) {
  testing::World w = MakeWorld();
  auto quota = Make("{tenants: {research: 8}}");
  Decision none;
  Snapshot snap = w.At();
  CommitContext cc{snap, none};
  auto hold = [&](uint32_t job, uint32_t tenant, uint32_t node, uint64_t gpus) {
    Allocation a;
    a.job = JobId(job);
    a.tenant = TenantId(tenant);
    a.nodes.push_back({NodeId(node), gpus, std::nullopt, 0, 0});
    ASSERT_TRUE(quota->Reserve(cc, a).ok());
  };
  hold(10, 0, 0, 0x0f);  // research: 4 GPUs = 32 eighths
  hold(11, 0, 0, 0x30);  // research: 2 GPUs = 16
  hold(12, 1, 1, 0xff);  // prod: 8 GPUs (no quota)
  EXPECT_EQ(quota->Held(TenantId(0)), 48);
  const std::vector<JobId> own = {JobId(10)}, others = {JobId(12)}, both = {JobId(11), JobId(12)};
  EXPECT_EQ(quota->HeldWithout(TenantId(0), own), 16);     // 48 - 32
  EXPECT_EQ(quota->HeldWithout(TenantId(0), others), 48);  // prod's job is not research's
  EXPECT_EQ(quota->HeldWithout(TenantId(0), both), 32);    // 48 - 16

  QueuedJob job = JobOf(w, "research", 1, 4, 0);
  CycleState state;
  Rng rng(1);
  std::vector<NodeId> members;
  const Ledger& empty = w.ledger;  // nothing reserved in it: the check's empty ledger
  const struct {
    const char* name;
    std::vector<JobId> victims;
    uint16_t gpus;
    std::string want;  // "" kept
  } cases[] = {
      // 48 - 32 + 32 = 48 <= 64
      {"own 4-GPU victim, 4 GPUs", own, 4, ""},
      // 16 + 48 = 64 <= 64
      {"own 4-GPU victim, 6 GPUs", own, 6, ""},
      // 16 + 56 = 72 > 64: 2 + 7 > 8
      {"own 4-GPU victim, 7 GPUs", own, 7,
       "the tenant's GPU quota would be exceeded: holds 2 + 7 > 8 GPUs (after preemption)"},
      // 48 + 24 = 72 > 64: others' victim gives nothing back
      {"prod's victim, 3 GPUs", others, 3,
       "the tenant's GPU quota would be exceeded: holds 6 + 3 > 8 GPUs (after preemption)"},
      // 48 + 16 = 64 <= 64: within the quota anyway
      {"prod's victim, 2 GPUs", others, 2, ""},
      // 48 - 16 + 32 = 64 <= 64
      {"both, 4 GPUs", both, 4, ""},
  };
  for (const auto& c : cases) {
    CycleContext check({&job, &snap, &empty, &state, &rng, &members, ExplainLevel::kFull, true});
    check.SetPreemption(c.victims);
    std::vector<Candidate> one = {Gpus(c.gpus)};
    Rejections rej;
    rej.Reset("quota", true);
    EXPECT_EQ(quota->Filter(check, one, rej), c.want.empty() ? 1u : 0u) << c.name;
    if (!c.want.empty()) {
      ASSERT_EQ(rej.examples().size(), 1u) << c.name;
      EXPECT_EQ(rej.examples()[0].second, c.want) << c.name;
    }
  }
}

TEST(QuotaTest, ArgumentsAreValidated) {
  const struct {
    const char* yaml;
    const char* want;
  } cases[] = {
      {"{tenants: {research: many}}", "plugins[1].args.tenants.research: \"many\" must be a number"},
      {"{tenants: {research: -1}}", "plugins[1].args.tenants.research: \"-1\" must be >= 0"},
      {"{tenants: [research]}", "plugins[1].args.tenants"},
      {"{tenants: {research: 1}, quotas: 2}", "plugins[1].args.quotas: unknown argument"},
      {"{default_gpus: -2}", "plugins[1].args.default_gpus: \"-2\" must be >= 0"},
  };
  for (const auto& c : cases) {
    auto args = PluginArgs::FromYaml(c.yaml, "p.yaml", "plugins[1].args");
    ASSERT_TRUE(args.ok());
    auto made = Quota::Create(*args);
    ASSERT_FALSE(made.ok()) << c.yaml;
    EXPECT_NE(made.status().message().find(c.want), std::string::npos) << made.status().message();
  }
}

}  // namespace
}  // namespace meridian::sched
