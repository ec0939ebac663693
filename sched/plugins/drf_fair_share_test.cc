#include "sched/plugins/drf_fair_share.h"

#include <gtest/gtest.h>

#include "sched/scheduler.h"
#include "sched/test_world.h"
#include "sched/tenant_usage.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::TwoHourJob;

QueuedJob TenantJob(const testing::World& w, const char* tenant, uint32_t tenant_id, int gpus,
                    uint32_t id, UnixSeconds at = kNow) {
  JobSpec spec = TwoHourJob("j" + std::to_string(id), gpus, 40);
  spec.tenant = tenant;
  spec.resources.gpu_models = {"H100-80GB"};
  auto q = MakeQueuedJob(std::make_shared<JobSpec>(spec), *w.catalog,
                         {JobId(id), TenantId(tenant_id), at, id});
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  return std::move(q).value();
}

// `gpus` whole GPUs from GPU 0 of `node`, held by `tenant` as job `job`.
void Hold(testing::World& w, uint32_t job, uint32_t tenant, uint32_t node, int gpus) {
  Allocation a;
  a.job = JobId(job);
  a.tenant = TenantId(tenant);
  a.start = kNow;
  a.end = kNow + 7200;
  a.nodes.push_back({NodeId(node), (uint64_t{1} << gpus) - 1, std::nullopt, 0, 0});
  ASSERT_TRUE(w.ledger.Reserve(a).ok());
}

std::unique_ptr<Plugin> Make(const char* yaml) {
  auto args = PluginArgs::FromYaml(yaml, "p.yaml", "plugins[1].args");
  EXPECT_TRUE(args.ok());
  auto made = DrfFairShare::Create(*args);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return std::move(made).value();
}

TEST(DrfFairShareTest, DominantShareArithmetic) {
  ResourceAmounts cap, used;
  cap.v[ResourceAmounts::kGpus] = 400;   // 50 GPUs in eighths
  cap.v[ResourceAmounts::kVcpus] = 528;
  cap.v[ResourceAmounts::kRam] = 1000;
  used.v[ResourceAmounts::kGpus] = 64;   // 8 GPUs: 64 / 400 = 0.16
  used.v[ResourceAmounts::kVcpus] = 132; // 132 / 528 = 0.25, the dominant one
  used.v[ResourceAmounts::kRam] = 100;   // 0.10
  std::array<bool, 4> all = {true, true, true, true};
  std::array<bool, 4> gpus_only = {true, false, false, false};
  EXPECT_DOUBLE_EQ(DrfFairShare::DominantShare(used, cap, all), 0.25);
  EXPECT_DOUBLE_EQ(DrfFairShare::DominantShare(used, cap, gpus_only), 0.16);
  // Cost has no capacity here: skipped rather than divided by zero.
  used.v[ResourceAmounts::kCost] = 5;
  EXPECT_DOUBLE_EQ(DrfFairShare::DominantShare(used, cap, all), 0.25);
}

TEST(DrfFairShareTest, WeightedDominantShareDecides) {
  testing::World w = MakeWorld();
  // Fleet capacity: 8 + 8 + 2 H100 and 4 x 8 A100 = 50 GPUs; $/h: 18 x 1.10 + 32 x 2.00 = 83.80.
  Hold(w, 100, 0, 0, 8);  // research: 8 H100 = 8/50 = 0.16 of GPUs, 8.80/83.80 = 0.105 of $/h
  Hold(w, 101, 1, 3, 4);  // product: 4 A100 = 4/50 = 0.08 of GPUs, 8.00/83.80 = 0.095 of $/h
  QueuedJob r = TenantJob(w, "research", 0, 1, 1);
  QueuedJob p = TenantJob(w, "product", 1, 1, 2);
  std::vector<const QueuedJob*> q = {&r, &p};
  TenantUsage usage = TenantUsage::Build(*w.fleet, w.ledger, q);
  Snapshot snap = w.At();
  snap.tenants = &usage;
  struct Case {
    const char* args;
    std::weak_ordering want;  // research vs product
  } cases[] = {
      // equal weights: research 0.16 > product 0.095: product first
      {"{}", std::weak_ordering::greater},
      // research weight 2: 0.16 / 2 = 0.08 < 0.095: research first
      {"{tenants: {research: {weight: 2}}}", std::weak_ordering::less},
      // GPUs only, product weight 0.5: 0.08 / 0.5 = 0.16 = research's 0.16: a tie
      {"{resources: [gpus], tenants: {product: {weight: 0.5}}}", std::weak_ordering::equivalent},
      // steps of 0.1: 0.16 and 0.095 fall in steps 1 and 0
      {"{share_step: 0.1}", std::weak_ordering::greater},
      // steps of 0.2: both in step 0, a tie for deadline_urgency to break
      {"{share_step: 0.2}", std::weak_ordering::equivalent},
  };
  for (const Case& c : cases) {
    auto plugin = Make(c.args);
    auto* drf = dynamic_cast<DrfFairShare*>(plugin.get());
    EXPECT_EQ(drf->Compare(snap, r, p), c.want) << c.args;
  }
}

TEST(DrfFairShareTest, ProgressiveFillingInterleavesTenants) {
  testing::World w = MakeWorld();
  // Nothing held. Tenant a submits a1 and a2 (8 GPUs each) before b's b1.
  std::vector<QueuedJob> jobs = {
      TenantJob(w, "a", 0, 8, 1, kNow), TenantJob(w, "a", 0, 8, 2, kNow + 1),
      TenantJob(w, "b", 1, 8, 3, kNow + 2)};
  // Shares before each: a1 0, a2 a1's 8/50 = 0.16, b1 0: a1 and b1 tie at 0
  // (submission order), a2 goes last.
  auto profile = ParseProfile("name: t\nplugins:\n  - name: drf_fair_share\n  - name: gpu_fit\n", "t.yaml");
  ASSERT_TRUE(profile.ok());
  auto s = Scheduler::Create(*profile, w.fleet);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<const QueuedJob*> ptrs = {&jobs[0], &jobs[1], &jobs[2]};
  std::vector<uint32_t> order;
  for (const QueuedJob* j : (*s)->SortQueue(w.At(), ptrs)) order.push_back(j->id.value());
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 3, 2}));
}

// SortKeys (one pass over the queue Rebuild was given) gives every job the
// key SortKey gives it alone, and both the shares worked out by hand: with
// research holding 8 H100 (0.16 of 50 GPUs) and nothing else held,
//   r1 0.16, r2 0.16 + 1/50 = 0.18 (r1 granted first), p1 0, p2 2/50 = 0.04
// (p1's 2 GPUs ahead of it), in GPUs only.
TEST(DrfFairShareTest, SortKeysOfAQueueEqualEachJobsOwnKey) {
  testing::World w = MakeWorld();
  Hold(w, 100, 0, 0, 8);
  // Queue order (not grant order): p2, r2, p1, r1.
  std::vector<QueuedJob> jobs = {TenantJob(w, "product", 1, 1, 4, kNow + 3),
                                 TenantJob(w, "research", 0, 1, 2, kNow + 1),
                                 TenantJob(w, "product", 1, 2, 3, kNow + 2),
                                 TenantJob(w, "research", 0, 1, 1, kNow)};
  std::vector<const QueuedJob*> q = {&jobs[0], &jobs[1], &jobs[2], &jobs[3]};
  TenantUsage usage = TenantUsage::Build(*w.fleet, w.ledger, q);
  Snapshot snap = w.At();
  snap.tenants = &usage;
  auto plugin = Make("{resources: [gpus], share_step: 0}");  // the shares themselves, not steps
  auto* drf = dynamic_cast<DrfFairShare*>(plugin.get());
  std::vector<double> keys(q.size());
  drf->SortKeys(snap, q, keys);
  const double want[] = {0.04, 0.18, 0.0, 0.16};
  for (size_t i = 0; i < q.size(); ++i) {
    EXPECT_NEAR(keys[i], want[i], 1e-12) << "job " << q[i]->id.value();
    EXPECT_EQ(keys[i], drf->SortKey(snap, *q[i])) << "job " << q[i]->id.value();
  }
  // Another queue than the one built from: the per-job path, same keys.
  std::vector<const QueuedJob*> copy = q;
  std::vector<double> again(q.size());
  drf->SortKeys(snap, copy, again);
  EXPECT_EQ(again, keys);
}

TEST(DrfFairShareTest, ArgumentsAreValidated) {
  auto args = PluginArgs::FromYaml(
      "{share_step: 2, resources: [gpus, disks], tenants: {research: {weight: 0, color: red}}, x: 1}",
      "p.yaml", "plugins[1].args");
  ASSERT_TRUE(args.ok());
  auto made = DrfFairShare::Create(*args);
  ASSERT_FALSE(made.ok());
  const std::string& m = made.status().message();
  EXPECT_NE(m.find("plugins[1].args.share_step: \"2\" must be <= 1"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[1].args.resources: \"disks\" must be gpus, vcpus, ram or cost"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[1].args.tenants.research.weight: \"0\" must be >= 0.01"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[1].args.tenants.research.color: unknown argument"), std::string::npos) << m;
  EXPECT_NE(m.find("plugins[1].args.x: unknown argument"), std::string::npos) << m;
}

}  // namespace
}  // namespace meridian::sched
