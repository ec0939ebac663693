// The shipped profiles: each builds, each honours a job's hard constraints,
// and each baseline shows its defining behaviour on a small fleet.
#include <gtest/gtest.h>

#include "sched/explain.h"
#include "sched/plugins/flavor_order.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

std::unique_ptr<Scheduler> Shipped(const testing::World& w, const char* name) {
  auto p = EmbeddedProfile(name);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  auto s = Scheduler::Create(*p, w.fleet);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

std::vector<const QueuedJob*> Ptrs(const std::vector<QueuedJob>& jobs) {
  std::vector<const QueuedJob*> out;
  for (const auto& j : jobs) out.push_back(&j);
  return out;
}

JobSpec Only(JobSpec j, std::vector<std::string> models) {
  j.resources.gpu_models = std::move(models);
  return j;
}

// Region and GPU model of a placement, fleet or elastic.
struct Where {
  std::string region, model;
  bool elastic = false;
};
Where PlacedAt(const testing::World& w, const Allocation& a) {
  if (a.elastic) {
    const auto& o = w.catalog->offerings()[a.elastic->offering.index()];
    return {o.region, o.gpu_model, true};
  }
  const Node& n = w.fleet->node(a.nodes.at(0).node);
  return {w.catalog->regions()[n.region.index()].id, w.catalog->gpus()[n.gpu_model.index()].name,
          false};
}

TEST(BaselineTest, EveryShippedProfileBuilds) {
  testing::World w = MakeWorld();
  std::vector<std::string> names = EmbeddedProfileNames();
  for (const char* want :
       {"default", "fifo-strict", "fifo-greedy", "fifo-backfill", "kueue-like", "skypilot-like"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  for (const std::string& n : names) {
    auto p = EmbeddedProfile(n);
    ASSERT_TRUE(p.ok()) << n << ": " << p.status().ToString();
    EXPECT_EQ(p->name, n);
    EXPECT_FALSE(p->description.empty()) << n;
    EXPECT_TRUE(CheckProfile(*p).ok()) << n << ": " << CheckProfile(*p).ToString();
    EXPECT_TRUE(Scheduler::Create(*p, w.fleet).ok()) << n;
  }
}

// GPU model, residency, `preemptible: false` and the driver pin hold under
// every shipped profile.
TEST(BaselineTest, EveryProfileHonoursHardConstraints) {
  // Nodes 0 and 1 declare driver 535.104.05; the pinned job must go elsewhere.
  FleetSpec fleet = testing::SmallFleetSpec();
  fleet.clusters[0].nodes[0].driver = {"535.104.05", "12.2"};
  JobSpec pinned = Only(TwoHourJob("pinned", 1, 40), {"H100-80GB"});
  pinned.driver = {"550.54.15", "12.4"};
  JobSpec eu = TwoHourJob("eu-only", 1, 40);
  eu.residency = {"eu"};
  JobSpec on_demand = Only(TwoHourJob("not-preemptible", 8, 40), {"H100-80GB"});
  on_demand.preemptible = false;
  JobSpec a100 = Only(TwoHourJob("a100-only", 2, 40), {"A100-80GB"});
  for (const std::string& name : EmbeddedProfileNames()) {
    SCOPED_TRACE(name);
    testing::World w = MakeWorld(fleet);
    // Fill the H100 nodes so the 8-GPU job must go to the cloud.
    for (uint32_t n = 0; n < 2; ++n) {
      Allocation a;
      a.job = JobId(100 + n);
      a.nodes.push_back({NodeId(n), 0xff, std::nullopt, 0, 0});
      a.end = kNow + 3600;
      ASSERT_TRUE(w.ledger.Reserve(a).ok());
    }
    auto s = Shipped(w, name.c_str());
    std::vector<QueuedJob> jobs = {Queue(w, eu, 1), Queue(w, on_demand, 2), Queue(w, a100, 3)};
    // The pinned job on an empty ledger: nodes 0 and 1 are free but run 535.
    {
      testing::World empty = MakeWorld(fleet);
      auto se = Shipped(empty, name.c_str());
      Decision d = se->Decide(Queue(empty, pinned, 4), empty.At());
      ASSERT_TRUE(d.allocation) << FormatDecision(d);
      EXPECT_TRUE(d.allocation->elastic) << FormatDecision(d);  // an image with 550 on a cloud
    }
    for (const QueuedJob& j : jobs) {
      Decision d = s->Decide(j, w.At());
      ASSERT_NE(d.kind, DecisionKind::kError) << FormatDecision(d);
      if (!d.allocation) continue;
      Where at = PlacedAt(w, *d.allocation);
      if (j.id == JobId(1)) {
        EXPECT_EQ(at.region, "gcp:europe-west4") << FormatDecision(d);
      }
      if (j.id == JobId(2)) {
        EXPECT_EQ(at.model, "H100-80GB");
        EXPECT_NE(d.pricing, PricingModel::kSpot) << FormatDecision(d);
      }
      if (j.id == JobId(3)) {
        EXPECT_EQ(at.model, "A100-80GB") << FormatDecision(d);
      }
    }
  }
}

// fifo-strict: the head of the queue blocks every job behind it.
// fifo-greedy: a later small job starts while the head waits.
TEST(BaselineTest, FifoStrictBlocksAndFifoGreedyDoesNot) {
  JobSpec h100 = Only(TwoHourJob("h", 8, 40), {"H100-80GB"});
  for (const char* name : {"fifo-strict", "fifo-greedy"}) {
    SCOPED_TRACE(name);
    testing::World w = MakeWorld(testing::SmallFleetSpec(), /*elastic=*/false);
    auto s = Shipped(w, name);
    std::vector<QueuedJob> jobs = {Queue(w, h100, 1), Queue(w, h100, 2), Queue(w, h100, 3),
                                   Queue(w, TwoHourJob("small", 1, 10), 4)};
    std::vector<Decision> ds = s->RunCycle(w.At(), Ptrs(jobs), &w.ledger);
    // First fit in fleet-file order: node 0, then node 1; job 3 waits for them.
    ASSERT_GE(ds.size(), 3u);
    EXPECT_EQ(ds[0].allocation->nodes[0].node, NodeId(0));
    EXPECT_EQ(ds[1].allocation->nodes[0].node, NodeId(1));
    EXPECT_EQ(ds[2].kind, DecisionKind::kWait) << FormatDecision(ds[2]);
    EXPECT_EQ(ds[2].start, kNow + 7200);
    if (std::string(name) == "fifo-strict") {
      EXPECT_EQ(ds.size(), 3u);  // job 4 is never considered
      EXPECT_EQ(w.ledger.free_gpu_count(NodeId(3)), 8);
    } else {
      ASSERT_EQ(ds.size(), 4u);
      // The small job takes the first node with a free whole GPU: node 2 is
      // all MIG, so node 3 (onprem-b), GPU 0.
      ASSERT_EQ(ds[3].kind, DecisionKind::kPlace) << FormatDecision(ds[3]);
      EXPECT_EQ(ds[3].allocation->nodes[0].node, NodeId(3));
      EXPECT_EQ(ds[3].allocation->nodes[0].gpus, 0x1u);
    }
  }
}

// Jobs go in submission order, ties in trace order, whatever their tier.
TEST(BaselineTest, FifoTakesJobsInSubmissionThenTraceOrder) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  auto s = Shipped(w, "fifo-greedy");
  std::vector<QueuedJob> jobs = {
      Queue(w, TwoHourJob("late-critical", 1, 10, Priority::kCritical), 1, kNow + 10),
      Queue(w, TwoHourJob("second", 1, 10), 3, kNow),
      Queue(w, TwoHourJob("first", 1, 10), 2, kNow),
  };
  std::vector<Decision> ds = s->RunCycle(w.At(kNow + 10), Ptrs(jobs), &w.ledger);
  ASSERT_EQ(ds.size(), 3u);
  EXPECT_EQ(ds[0].job, JobId(2));
  EXPECT_EQ(ds[1].job, JobId(3));
  EXPECT_EQ(ds[2].job, JobId(1));
  // Each on the next free GPU of node 0, in that order.
  EXPECT_EQ(ds[0].allocation->nodes[0].gpus, 0x1u);
  EXPECT_EQ(ds[1].allocation->nodes[0].gpus, 0x2u);
  EXPECT_EQ(ds[2].allocation->nodes[0].gpus, 0x4u);
}

TEST(BaselineTest, FifoRunsInTheHomeRegion) {
  testing::World w = MakeWorld();
  auto s = Shipped(w, "fifo-strict");
  JobSpec eu = TwoHourJob("eu-data", 1, 10);
  eu.data = {"gcp:europe-west4", 50};
  JobSpec tokyo = Only(TwoHourJob("tokyo-data", 1, 10), {"H100-80GB"});
  tokyo.data = {"gcp:asia-northeast1", 50};
  // First fit would be node 0 (us-central1); the data is in europe-west4: node 3.
  Decision d = s->Decide(Queue(w, eu, 1), w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  EXPECT_EQ(d.allocation->nodes[0].node, NodeId(3));
  // No fleet node in asia-northeast1: the cloud there, on demand.
  Decision t = s->Decide(Queue(w, tokyo, 2), w.At());
  ASSERT_EQ(t.kind, DecisionKind::kPlace) << FormatDecision(t);
  ASSERT_TRUE(t.allocation->elastic);
  EXPECT_EQ(PlacedAt(w, *t.allocation).region, "gcp:asia-northeast1");
  EXPECT_EQ(t.pricing, PricingModel::kOnDemand);
}

// fifo-backfill: the waiting head reserves node 0 from when it frees (+2 h);
// a later job that would still run then is refused there, a short one fills
// in before it. fifo-greedy lets the long one delay the head.
TEST(BaselineTest, FifoBackfillFillsAroundTheHeadsReservation) {
  for (const char* name : {"fifo-backfill", "fifo-greedy"}) {
    SCOPED_TRACE(name);
    testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
    auto hold = [&](uint32_t job, uint32_t node, uint64_t gpus, UnixSeconds end) {
      Allocation a;
      a.job = JobId(job);
      a.nodes.push_back({NodeId(node), gpus, std::nullopt, 0, 0});
      a.end = end;
      ASSERT_TRUE(w.ledger.Reserve(a).ok());
    };
    hold(100, 0, 0x0f, kNow + 2 * 3600);  // node 0: 4 of 8 busy for 2 h
    hold(101, 1, 0xff, kNow + 4 * 3600);  // node 1: full for 4 h
    auto s = Shipped(w, name);
    JobSpec head = Only(TwoHourJob("head", 8, 40), {"H100-80GB"});
    JobSpec longer = Only(TwoHourJob("three-hours", 2, 40), {"H100-80GB"});
    longer.work.duration_s = 3 * 3600;
    JobSpec shorter = Only(TwoHourJob("one-hour", 2, 40), {"H100-80GB"});
    shorter.work.duration_s = 3600;
    std::vector<QueuedJob> jobs = {Queue(w, head, 1), Queue(w, longer, 2), Queue(w, shorter, 3)};
    std::vector<Decision> ds = s->RunCycle(w.At(), Ptrs(jobs), &w.ledger);
    ASSERT_EQ(ds.size(), 3u);
    EXPECT_EQ(ds[0].kind, DecisionKind::kWait) << FormatDecision(ds[0]);
    EXPECT_EQ(ds[0].start, kNow + 2 * 3600);  // node 0 frees whole at +2 h
    if (std::string(name) == "fifo-backfill") {
      // 3 h on node 0 would run past +2 h: refused; nothing else has 2 H100s.
      EXPECT_EQ(ds[1].kind, DecisionKind::kWait) << FormatDecision(ds[1]);
      // 1 h ends before +2 h: it backfills on node 0.
      ASSERT_EQ(ds[2].kind, DecisionKind::kPlace) << FormatDecision(ds[2]);
      EXPECT_EQ(ds[2].allocation->nodes[0].node, NodeId(0));
    } else {
      ASSERT_EQ(ds[1].kind, DecisionKind::kPlace) << FormatDecision(ds[1]);
      EXPECT_EQ(ds[1].allocation->nodes[0].node, NodeId(0));
    }
  }
}

// small: 4 A100 nodes x 4 GPUs (nodes 0-3), then big: 2 A100 nodes x 8 (4-5).
TEST(BaselineTest, FifoPutsAJobThatFitsOneNodeOnOneNode) {
  FleetSpec f;
  ClusterSpec small{"small", "gcp:us-central1", CapacityPricing::kOwned, Money::FromDollars(1), "", "local", false, {}, {}, {}, {}};
  small.nodes.push_back({4, "A100-80GB", 4, 32, 256, {}, "", {}, {}});
  ClusterSpec big{"big", "gcp:us-central1", CapacityPricing::kOwned, Money::FromDollars(1), "", "local", false, {}, {}, {}, {}};
  big.nodes.push_back({2, "A100-80GB", 8, 64, 512, {}, "", {}, {}});
  f.clusters = {small, big};
  testing::World w = MakeWorld(f, false);
  auto s = Shipped(w, "fifo-greedy");
  Decision d = s->Decide(Queue(w, Only(TwoHourJob("eight", 8, 40), {"A100-80GB"}), 1), w.At());
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  ASSERT_EQ(d.allocation->nodes.size(), 1u);  // not 2 x 4 on nodes 0 and 1
  EXPECT_EQ(d.allocation->nodes[0].node, NodeId(4));
  // 16 GPUs fit no node: a gang is the only way.
  Decision g = s->Decide(Queue(w, Only(TwoHourJob("sixteen", 16, 40), {"A100-80GB"}), 2), w.At());
  ASSERT_EQ(g.kind, DecisionKind::kPlace) << FormatDecision(g);
  EXPECT_GE(g.allocation->nodes.size(), 2u);
}

// A market whose on-demand (or spot) capacity is out.
class OutOf final : public MarketView {
 public:
  OutOf(const MarketView& base, PricingModel out) : base_(base), out_(out) {}
  std::optional<Money> PricePerHour(OfferingId o, PricingModel m, UnixSeconds t) const override {
    if (m == out_ && m != PricingModel::kSpot) return std::nullopt;
    return base_.PricePerHour(o, m, t);
  }
  bool SpotAvailable(OfferingId o, UnixSeconds t) const override {
    return out_ != PricingModel::kSpot && base_.SpotAvailable(o, t);
  }
  double FlexStartWaitHours(OfferingId o, UnixSeconds t) const override {
    return base_.FlexStartWaitHours(o, t);
  }
  double CarbonGPerKwh(RegionId r, UnixSeconds t) const override { return base_.CarbonGPerKwh(r, t); }

 private:
  const MarketView& base_;
  PricingModel out_;
};

// kueue-like: reserved capacity, then owned, then on-demand, then spot, with
// no regard for price: the owned node costs 5 $/GPU-h, more than on-demand
// a2-ultragpu-1g (2.95 $/h), and spot (2.51 $/h) is cheaper still.
TEST(BaselineTest, KueueLikeFollowsItsFlavorOrder) {
  FleetSpec f;
  ClusterSpec res{"res", "gcp:us-central1", CapacityPricing::kReserved, std::nullopt, "a2-ultragpu-1g", "local", false, {}, {}, {}, {}};
  res.nodes.push_back({1, "A100-80GB", 1, 12, 170, {}, "", {}, {}});
  ClusterSpec own{"own", "gcp:us-central1", CapacityPricing::kOwned, Money::FromDollars(5), "", "local", false, {}, {}, {}, {}};
  own.nodes.push_back({1, "A100-80GB", 1, 12, 170, {}, "", {}, {}});
  f.clusters = {own, res};  // file order puts owned first; the flavor order wins
  testing::World w = MakeWorld(f);
  auto s = Shipped(w, "kueue-like");
  JobSpec spec = Only(TwoHourJob("a100", 1, 40), {"A100-80GB"});
  spec.preemptible = true;
  auto flavor = [&](const Decision& d) {
    const Candidate& c = d.chosen->candidate;
    if (c.on_fleet()) return std::string(w.fleet->cluster(w.fleet->node(c.node).cluster).name);
    return std::string(ToString(c.pricing));
  };
  std::vector<std::string> got;
  for (uint32_t id = 1; id <= 3; ++id) {
    Decision d = s->Decide(Queue(w, spec, id), w.At());
    ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
    got.push_back(flavor(d));
    ASSERT_TRUE(s->Commit(d, w.At(), &w.ledger).ok());
  }
  EXPECT_EQ(got, (std::vector<std::string>{"res", "own", "on-demand"}));
  // On-demand capacity out: spot.
  OutOf no_od(*w.market, PricingModel::kOnDemand);
  Snapshot snap = w.At();
  snap.market = &no_od;
  Decision d = s->Decide(Queue(w, spec, 4), snap);
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  EXPECT_EQ(d.pricing, PricingModel::kSpot);
  // A job that may not be preempted never takes the spot flavor: it waits.
  JobSpec firm = spec;
  firm.preemptible = false;
  Decision f2 = s->Decide(Queue(w, firm, 5), snap);
  EXPECT_EQ(f2.kind, DecisionKind::kWait) << FormatDecision(f2);
}

TEST(BaselineTest, KueueLikeQuotaHoldsATenantBack) {
  testing::World w = MakeWorld(testing::SmallFleetSpec(), false);
  auto base = EmbeddedProfile("kueue-like");
  ASSERT_TRUE(base.ok());
  // The shipped text with a quota of 8 GPUs for tenant "research".
  std::string text = R"(name: kueue-quota
options: {elastic: false}
plugins:
  - name: gpu_fit
  - name: quota
    args: {tenants: {research: 8}}
  - name: flavor_order
    weight: 10
  - name: first_fit
)";
  auto p = ParseProfile(text, "q.yaml");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto s = Scheduler::Create(*p, w.fleet);
  ASSERT_TRUE(s.ok());
  JobSpec spec = TwoHourJob("r", 4, 40);
  spec.tenant = "research";
  std::vector<Decision> got;
  for (uint32_t id = 1; id <= 3; ++id) {
    Decision d = (*s)->Decide(Queue(w, spec, id), w.At());
    if (d.allocation) {
      ASSERT_TRUE((*s)->Commit(d, w.At(), &w.ledger).ok());
    }
    got.push_back(std::move(d));
  }
  // 4 + 4 = 8 GPUs admitted; the third would hold 12 > 8 and waits.
  EXPECT_EQ(got[0].kind, DecisionKind::kPlace);
  EXPECT_EQ(got[1].kind, DecisionKind::kPlace);
  EXPECT_EQ(got[2].kind, DecisionKind::kWait) << FormatDecision(got[2]);
  // Released, it is admitted.
  (*s)->Release(JobId(1), w.At(), &w.ledger);
  EXPECT_EQ((*s)->Decide(Queue(w, spec, 3), w.At()).kind, DecisionKind::kPlace);
}

// skypilot-like: the cheapest region and offer; spot for preemptible jobs,
// on-demand otherwise or when spot capacity is out.
TEST(BaselineTest, SkypilotLikePicksTheCheapestRegionAndSpot) {
  FleetSpec f;
  ClusterSpec lab{"lab", "gcp:us-central1", CapacityPricing::kOwned, Money::FromDollars(1), "", "local", false, {}, {}, {}, {}};
  lab.nodes.push_back({1, "V100-32GB", 8, 32, 256, {}, "", {}, {}});
  f.clusters = {lab};
  testing::World w = MakeWorld(f);
  auto s = Shipped(w, "skypilot-like");
  JobSpec spot_ok = Only(TwoHourJob("a100", 1, 40), {"A100-80GB"});
  spot_ok.preemptible = true;
  JobSpec firm = spot_ok;
  firm.preemptible = false;
  JobSpec h100 = Only(TwoHourJob("h100", 8, 40), {"H100-80GB"});
  h100.preemptible = true;
  const struct {
    const char* name;
    JobSpec spec;
    const char* region;
    const char* type;
    PricingModel pricing;
  } cases[] = {
      // a2-ultragpu-1g spot: us-central1 2.51378 $/h < europe-west4 2.65951 $/h
      {"preemptible A100", spot_ok, "gcp:us-central1", "a2-ultragpu-1g", PricingModel::kSpot},
      // on demand: us-central1 2.94582 $/h < europe-west4 3.24335 $/h
      {"not preemptible", firm, "gcp:us-central1", "a2-ultragpu-1g", PricingModel::kOnDemand},
      // 8 x a3-highgpu-1g spot in asia-northeast1 (8 x 3.8995 = 31.20 $/h) would
      // be reclaimed 8 times as often as one instance: 0.47 x 8 x (15 + 5 min =
      // 1/3 h) = 1.25 h lost an hour >= 0.5, so spot is refused there; one
      // a3-highgpu-8g spot in europe-west4 (32.63 $/h) beats us-central1 (35.87 $/h)
      {"8 H100s", h100, "gcp:europe-west4", "a3-highgpu-8g", PricingModel::kSpot},
  };
  uint32_t id = 1;
  for (const auto& c : cases) {
    Decision d = s->Decide(Queue(w, c.spec, id++), w.At());
    ASSERT_EQ(d.kind, DecisionKind::kPlace) << c.name << "\n" << FormatDecision(d);
    SCOPED_TRACE(FormatDecision(d));
    ASSERT_TRUE(d.allocation->elastic) << c.name;
    const auto& o = w.catalog->offerings()[d.allocation->elastic->offering.index()];
    EXPECT_EQ(o.region, c.region) << c.name;
    EXPECT_EQ(o.instance_type, c.type) << c.name;
    EXPECT_EQ(d.pricing, c.pricing) << c.name;
  }
  // Spot capacity out: failover to on-demand, still the cheapest region.
  OutOf no_spot(*w.market, PricingModel::kSpot);
  Snapshot snap = w.At();
  snap.market = &no_spot;
  Decision d = s->Decide(Queue(w, spot_ok, 9), snap);
  ASSERT_EQ(d.kind, DecisionKind::kPlace) << FormatDecision(d);
  EXPECT_EQ(d.pricing, PricingModel::kOnDemand);
  EXPECT_EQ(w.catalog->offerings()[d.allocation->elastic->offering.index()].region, "gcp:us-central1");
}

}  // namespace
}  // namespace meridian::sched
