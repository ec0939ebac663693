// Randomized tests on small fleets against a brute-force reference:
//   - a profile of several score plugins (cheapest_price x3, binpack x2,
//     first_fit x1): the brute force enumerates every fleet node, every free
//     MIG instance and every catalog choice x pricing model, computes each
//     plugin's raw score and normalization from their documented formulas,
//     and the weighted total; the scheduler must place exactly when the
//     brute force finds a feasible candidate, and its chosen total must be
//     the brute force's optimum;
//   - invariants under random job streams with Commit and Release, for every
//     shipped profile: no GPU, MIG slice, vCPU or MiB is ever given twice or
//     beyond a node's capacity, and the same seed repeats every decision.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <map>

#include "sched/explain.h"
#include "sched/scheduler.h"
#include "sched/test_world.h"

namespace meridian::sched {
namespace {

using testing::kNow;
using testing::MakeWorld;
using testing::Queue;
using testing::TwoHourJob;

constexpr const char* kScored = R"(name: scored
options:
  max_fleet_candidates: 100000
  max_elastic_candidates: 100000
  pricing_models: [on-demand, spot]
  tie_break: first
plugins:
  - name: gpu_fit
  - name: cheapest_price
    weight: 3
  - name: binpack
    weight: 2
  - name: first_fit
    weight: 1
)";

// One way to run the job, with the three plugins' raw scores.
struct Option {
  std::string what;
  int64_t cost = 0;     // cheapest_price: -micro-dollars
  int64_t pack = 0;     // binpack: -(free share after, basis points)
  int64_t order = 0;    // first_fit: -(fleet position)
  int64_t total = 0;
};

// Min-max into 0..100, rounded down; all equal: 100.
void MinMax(std::vector<int64_t>& v) {
  if (v.empty()) return;
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const int64_t min = *lo, max = *hi;
  for (int64_t& s : v) s = max == min ? 100 : (s - min) * 100 / (max - min);
}

// Rank: highest 100, each next distinct value one less, floor 0.
void Rank(std::vector<int64_t>& v) {
  std::vector<int64_t> d = v;
  std::sort(d.begin(), d.end(), std::greater<>());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  for (int64_t& s : v) {
    int64_t r = std::find(d.begin(), d.end(), s) - d.begin();
    s = std::max<int64_t>(0, 100 - r);
  }
}

// Free GPU capacity of a node in memory slices (whole GPUs x 8 + free MIG slices).
int64_t FreeSlices(const testing::World& w, const Node& n) {
  int64_t free = int64_t{w.ledger.free_gpu_count(n.id)} * 8;
  for (int g = 0; g < n.gpus; ++g) {
    if ((n.mig_gpus >> g) & 1) free += 8 - std::popcount(w.ledger.mig_used(n.id, g));
  }
  return free;
}

std::vector<Option> BruteForce(const testing::World& w, const QueuedJob& job) {
  std::vector<Option> out;
  const catalog::Catalog& cat = *w.catalog;
  const int64_t fleet_size = static_cast<int64_t>(w.fleet->nodes().size());
  for (const ModelDemand& d : job.demands) {
    const catalog::GpuModel& gpu = cat.gpus()[d.model.index()];
    for (const Node& n : w.fleet->nodes()) {
      if (n.gpu_model != d.model) continue;
      const Cluster& cl = w.fleet->cluster(n.cluster);
      const int64_t total = int64_t{n.gpus} * 8;
      // Whole GPUs on a node with room (gangs are not drawn here: jobs fit one node).
      if (n.mig_gpus == 0 && w.ledger.free_gpu_count(n.id) >= d.gpus) {
        Option o;
        o.what = n.name;
        o.cost = -cl.gpu_hour.Times(d.gpus * static_cast<double>(d.run_hours)).micros();
        o.pack = -(std::max<int64_t>(0, FreeSlices(w, n) - d.gpus * 8) * 10000 / total);
        o.order = -static_cast<int64_t>(n.id.value());
        out.push_back(o);
      }
      // Every free MIG instance that holds the job.
      if (d.mig_profile < 0 || n.mig_gpus == 0) continue;
      for (int g = 0; g < n.gpus; ++g) {
        for (const MigInstance& inst : n.mig) {
          const catalog::MigProfile& p = gpu.mig_profiles[inst.profile];
          if (inst.shape.span < d.mig_span || p.memory_gib < d.vram_per_gpu_gib) continue;
          if (!w.ledger.MigFree(n.id, g, inst.shape)) continue;
          Option o;
          o.what = n.name + " GPU " + std::to_string(g) + " " + p.name;
          double hours = d.mig_run_hours;
          o.cost = -cl.gpu_hour.Times(hours * inst.shape.span / 8.0).micros();
          o.pack = -(std::max<int64_t>(0, FreeSlices(w, n) - inst.shape.span) * 10000 / total);
          o.order = -static_cast<int64_t>(n.id.value());
          out.push_back(o);
        }
      }
    }
    // Every catalog choice for the demand x each pricing model the job may take.
    // Hours on `instances` instances: the demand's hours x its span factor, the
    // estimator's run-time model (estimate::SpanFactor, checked against hand
    // arithmetic in estimate/run_time_test.cc); on spot each instance is
    // reclaimed 0.47 times an hour, each reclaim losing half the checkpoint
    // interval plus the restart (defaults 30 and 5 min), refused at half an hour
    // lost an hour or more.
    const Checkpoint& cp = job.spec->checkpoint;
    const double loss_h = (static_cast<double>(cp.interval_s.value_or(1800)) / 2 +
                           static_cast<double>(cp.restart_overhead_s.value_or(300))) / 3600.0;
    const bool counted = job.spec->work.form != Work::Form::kNone;
    for (const ElasticChoice& e : w.elastic->Choices(d.model, d.gpus)) {
      const catalog::Offering& off = cat.offerings()[e.offering.index()];
      if (e.instances > 8 || e.instances * off.gpu_count < d.gpus) continue;  // gpu_fit
      for (PricingModel m : {PricingModel::kOnDemand, PricingModel::kSpot}) {
        const double lost_per_hour = 0.47 * e.instances * loss_h;
        if (m == PricingModel::kSpot &&
            (!job.spec->preemptible || lost_per_hour >= 0.5 ||
             !w.market->SpotAvailable(e.offering, kNow))) {
          continue;
        }
        std::optional<Money> price = w.market->PricePerHour(e.offering, m, kNow);
        if (!price) continue;
        double hours = d.run_hours;
        if (e.instances > 1 && counted) hours *= d.span_factor;
        if (m == PricingModel::kSpot) hours /= 1.0 - lost_per_hour;
        Option o;
        o.what = off.region + " " + off.instance_type + " x" + std::to_string(e.instances) + " " +
                 std::string(ToString(m));
        o.cost = -price->Times(e.instances * hours).micros();
        const int64_t bought = int64_t{e.instances} * off.gpu_count;
        o.pack = -(std::max<int64_t>(0, bought - d.gpus) * 10000 / bought);
        o.order = -(fleet_size + 1 + off.on_demand_per_hour.Times(e.instances).micros() / 1000);
        out.push_back(o);
      }
    }
  }
  std::vector<int64_t> cost, pack, order;
  for (const Option& o : out) {
    cost.push_back(o.cost);
    pack.push_back(o.pack);
    order.push_back(o.order);
  }
  MinMax(cost);
  MinMax(pack);
  Rank(order);
  for (size_t i = 0; i < out.size(); ++i) out[i].total = 3 * cost[i] + 2 * pack[i] + order[i];
  return out;
}

std::unique_ptr<Scheduler> Make(const testing::World& w, std::string_view yaml, uint64_t seed = 0) {
  auto p = ParseProfile(yaml, "random.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  auto s = Scheduler::Create(*p, w.fleet, {seed, std::nullopt});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// Random load: whole GPUs on the whole-GPU nodes, instances on the MIG node.
void RandomLoad(testing::World* w, Rng& rng) {
  uint32_t next = 1000;
  for (const Node& n : w->fleet->nodes()) {
    Allocation a;
    a.job = JobId(next++);
    a.end = kNow + 3600;
    if (n.mig_gpus == 0) {
      uint64_t taken = rng.Next() & rng.Next() & ((1ull << n.gpus) - 1);
      if (taken == 0) continue;
      a.nodes.push_back({n.id, taken, std::nullopt, 0, 0});
      ASSERT_TRUE(w->ledger.Reserve(a).ok());
      continue;
    }
    for (int g = 0; g < n.gpus; ++g) {
      for (const MigInstance& inst : n.mig) {
        if (rng.Below(2) == 0) continue;
        Allocation m = a;
        m.job = JobId(next++);
        m.nodes.push_back({n.id, 0, MigShare{static_cast<uint8_t>(g), inst.shape}, 0, 0});
        ASSERT_TRUE(w->ledger.Reserve(m).ok());
      }
    }
  }
}

JobSpec RandomJob(Rng& rng, uint32_t i) {
  const int sizes[] = {1, 1, 2, 4, 8};
  JobSpec j = TwoHourJob("r" + std::to_string(i), sizes[rng.Below(5)],
                         8 + static_cast<double>(rng.Below(64)));
  j.resources.mig = j.resources.gpus == 1 && rng.Below(2) == 0;
  j.preemptible = rng.Below(2) == 0;
  const char* models[] = {"H100-80GB", "A100-80GB", "L4", "L40S"};
  if (rng.Below(3) == 0) j.resources.gpu_models = {models[rng.Below(4)]};
  j.work.duration_s = 1800 * (1 + static_cast<int64_t>(rng.Below(8)));
  return j;
}

TEST(RandomTest, SeveralScoresMatchTheBruteForceOptimum) {
  int placed = 0, waited = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    testing::World w = MakeWorld();
    Rng rng(seed);
    RandomLoad(&w, rng);
    auto s = Make(w, kScored);
    for (uint32_t i = 0; i < 12; ++i) {
      QueuedJob job = Queue(w, RandomJob(rng, i), i + 1);
      std::vector<Option> all = BruteForce(w, job);
      Decision d = s->Decide(job, w.At());
      SCOPED_TRACE("seed " + std::to_string(seed) + " job " + std::to_string(i) + "\n" +
                   FormatDecision(d));
      ASSERT_NE(d.kind, DecisionKind::kError);
      ASSERT_EQ(d.kind == DecisionKind::kPlace, !all.empty());
      if (all.empty()) {
        ++waited;
        continue;
      }
      ++placed;
      int64_t best = 0;
      for (const Option& o : all) best = std::max(best, o.total);
      EXPECT_EQ(d.chosen->total, best);
      // The chosen candidate's own scores are the reference's for some option
      // with that total.
      ASSERT_EQ(d.chosen->scores.size(), 3u);
      bool found = false;
      for (const Option& o : all) {
        found |= o.cost == d.chosen->scores[0].raw && o.pack == d.chosen->scores[1].raw &&
                 o.order == d.chosen->scores[2].raw && o.total == d.chosen->total;
      }
      EXPECT_TRUE(found);
      if (rng.Below(2) == 0) {
        ASSERT_TRUE(s->Commit(d, w.At(), &w.ledger).ok());
      }
    }
  }
  EXPECT_GT(placed, 100);  // the cases exercise both answers
  EXPECT_GT(waited, 0);
}

// The test fleet plus a repartitionable H100 cluster and CPU nodes, so every
// kind of share is exercised.
FleetSpec StreamFleet() {
  FleetSpec f = testing::SmallFleetSpec();
  ClusterSpec r;
  r.name = "flex";
  r.region = "gcp:us-central1";
  r.gpu_hour = Money::FromDollars(1.5);
  r.repartitionable = true;
  r.nodes.push_back({2, "H100-80GB", 4, 32, 256, {"3g.40gb", "3g.40gb"}, "mig-", {}, {}});
  r.nodes.push_back({1, "", 0, 64, 256, {}, "cpu-", {}, {}});
  f.clusters.push_back(r);
  return f;
}

// Sums every allocation's shares per node and checks them against the
// node's capacity and the ledger's free counts.
void CheckLedger(const testing::World& w) {
  for (const Node& n : w.fleet->nodes()) {
    uint64_t gpus = 0;
    int vcpus = 0;
    int64_t ram = 0;
    std::vector<uint8_t> mig(static_cast<size_t>(n.gpus), 0);
    for (const auto& [job, a] : w.ledger.allocations()) {
      for (const NodeShare& sh : a.nodes) {
        if (sh.node != n.id) continue;
        ASSERT_EQ(gpus & sh.gpus, 0u) << "a GPU of " << n.name << " given twice";
        gpus |= sh.gpus;
        vcpus += sh.vcpus;
        ram += sh.ram_mib;
        if (sh.mig) {
          ASSERT_LT(sh.mig->gpu, n.gpus);
          ASSERT_EQ(mig[sh.mig->gpu] & sh.mig->shape.mask(), 0) << "a MIG slice given twice";
          mig[sh.mig->gpu] |= sh.mig->shape.mask();
          ASSERT_TRUE((n.mig_gpus >> sh.mig->gpu) & 1) << "a slice of a whole-mode GPU";
        }
      }
    }
    ASSERT_EQ(gpus & n.mig_gpus, 0u) << "a MIG-mode GPU of " << n.name << " given whole";
    ASSERT_LE(std::bit_width(gpus), n.gpus);
    ASSERT_LE(vcpus, n.vcpus) << n.name;
    ASSERT_LE(ram, n.ram_mib) << n.name;
    ASSERT_EQ(w.ledger.free_vcpus(n.id), n.vcpus - vcpus);
    ASSERT_EQ(w.ledger.free_ram_mib(n.id), n.ram_mib - ram);
    ASSERT_EQ(w.ledger.free_gpu_count(n.id), n.gpus - std::popcount(n.mig_gpus) - std::popcount(gpus));
    for (int g = 0; g < n.gpus; ++g) ASSERT_EQ(w.ledger.mig_used(n.id, g), mig[g]);
  }
}

// A decision as one line: what it chose; with `counts`, also what it
// examined, how many were feasible, each filter's rejections and the total.
std::string Describe(const Decision& d, bool counts = false) {
  std::string line = std::to_string(d.job.value()) + " " + std::string(ToString(d.kind)) + " @" +
                     std::to_string(d.start);
  if (counts) {
    line += " examined " + std::to_string(d.candidates) + " feasible " + std::to_string(d.feasible);
    for (const FilterLine& f : d.filters) line += " " + f.plugin + ":" + std::to_string(f.rejected);
    if (d.chosen) line += " total " + std::to_string(d.chosen->total);
  }
  if (d.allocation) {
    for (const NodeShare& sh : d.allocation->nodes) {
      line += " n" + std::to_string(sh.node.value()) + ":" + std::to_string(sh.gpus);
      if (sh.mig) line += "m" + std::to_string(sh.mig->gpu) + "@" + std::to_string(sh.mig->shape.start);
    }
    if (d.allocation->elastic) line += " o" + std::to_string(d.allocation->elastic->offering.value());
  }
  for (JobId v : d.victims) line += " v" + std::to_string(v.value());
  return line;
}

// A random stream: every 30 minutes finished jobs release first, then new
// jobs arrive and a cycle decides the queue; placements are committed,
// preempted jobs go back to the queue. Returns every decision, in order.
// `explain` overrides the profile's; `counts` logs what each decision
// counted; `gangs` makes one job in six a 16-GPU job (two 8-GPU nodes).
std::vector<std::string> Stream(const std::string& profile, uint64_t seed,
                                const FleetSpec& fleet = StreamFleet(),
                                std::optional<ExplainLevel> explain = std::nullopt,
                                bool counts = false, bool gangs = false) {
  testing::World w = MakeWorld(fleet);
  auto p = EmbeddedProfile(profile);
  EXPECT_TRUE(p.ok());
  auto made = Scheduler::Create(*p, w.fleet, {seed, explain});
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  Scheduler& s = **made;
  Rng rng(seed);
  std::vector<QueuedJob> jobs;
  jobs.reserve(400);
  std::vector<const QueuedJob*> waiting;
  std::vector<std::string> log;
  const char* tenants[] = {"research", "prod", "ads"};
  for (int step = 0; step < 24; ++step) {
    const UnixSeconds now = kNow + step * 1800;
    // Finishing jobs free their capacity before anything new is placed.
    std::vector<JobId> done;
    for (const auto& [job, a] : w.ledger.allocations()) {
      if (a.end <= now) done.push_back(job);
    }
    std::sort(done.begin(), done.end());
    for (JobId j : done) s.Release(j, w.At(now), &w.ledger);
    for (uint32_t k = 0, n = static_cast<uint32_t>(rng.Below(6)); k < n; ++k) {
      const uint32_t id = static_cast<uint32_t>(jobs.size()) + 1;
      JobSpec spec = RandomJob(rng, id);
      if (gangs && rng.Below(6) == 0) {
        spec.resources.gpus = 16;
        spec.resources.mig = false;
      }
      spec.tenant = tenants[rng.Below(3)];
      spec.priority = static_cast<Priority>(rng.Below(4));
      spec.resources.vcpus = static_cast<int>(rng.Below(24));
      spec.resources.ram_gib = static_cast<double>(rng.Below(96));
      if (rng.Below(4) == 0) spec.data = {rng.Below(2) ? "gcp:europe-west4" : "gcp:us-central1", 10};
      if (rng.Below(5) == 0) spec.deadline.after_submit_s = 3600 * (2 + static_cast<int64_t>(rng.Below(20)));
      QueuedJob q = Queue(w, spec, id, now);
      q.tenant = TenantId(static_cast<uint32_t>(spec.tenant == "research" ? 0 : spec.tenant == "prod" ? 1 : 2));
      jobs.push_back(std::move(q));
      waiting.push_back(&jobs.back());
    }
    std::vector<Decision> ds = s.RunCycle(w.At(now), waiting, &w.ledger);
    std::vector<JobId> settled, requeue;
    for (const Decision& d : ds) {
      EXPECT_NE(d.kind, DecisionKind::kError) << profile << " seed " << seed << "\n" << FormatDecision(d);
      log.push_back(Describe(d, counts));
      if (d.allocation || d.kind == DecisionKind::kReject) settled.push_back(d.job);
      for (JobId v : d.victims) requeue.push_back(v);
    }
    CheckLedger(w);
    if (::testing::Test::HasFatalFailure()) return log;
    std::erase_if(waiting, [&](const QueuedJob* q) {
      return std::find(settled.begin(), settled.end(), q->id) != settled.end();
    });
    for (JobId v : requeue) {
      if (v.index() >= 1 && v.index() <= jobs.size()) waiting.push_back(&jobs[v.index() - 1]);
    }
  }
  return log;
}

TEST(RandomTest, StreamsNeverOverAllocateAndRepeatBySeed) {
  for (const std::string& profile : EmbeddedProfileNames()) {
    for (uint64_t seed : {3, 11}) {
      SCOPED_TRACE(profile + " seed " + std::to_string(seed));
      std::vector<std::string> a = Stream(profile, seed);
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
      std::vector<std::string> b = Stream(profile, seed);
      EXPECT_EQ(a, b);
      EXPECT_GT(a.size(), 20u);
    }
  }
}

// The stream fleet with six times the nodes in each whole-GPU group, so runs
// of equally free nodes are long, and A100 nodes of 16 vCPUs, so jobs that
// ask for more are turned away by whole runs.
FleetSpec WideFleet() {
  FleetSpec f = StreamFleet();
  for (ClusterSpec& c : f.clusters) {
    for (NodeGroup& g : c.nodes) {
      if (g.mig.empty()) g.count *= 6;
      if (g.gpu == "A100-80GB") g.vcpus = 16;
    }
  }
  return f;
}

// A decision explained only in counts takes shortcuts a full explanation
// cannot (it filters a run of equally free nodes, or gangs of them, once, as
// one candidate that stands for the run); every profile must decide,
// examine, find feasible and reject exactly as when it explains in full.
TEST(RandomTest, ExplainingInCountsDecidesAndCountsAsInFull) {
  for (const std::string& profile : EmbeddedProfileNames()) {
    for (uint64_t seed : {5, 17}) {
      SCOPED_TRACE(profile + " seed " + std::to_string(seed));
      std::vector<std::string> full =
          Stream(profile, seed, WideFleet(), ExplainLevel::kFull, true, true);
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
      std::vector<std::string> counts =
          Stream(profile, seed, WideFleet(), ExplainLevel::kCounts, true, true);
      EXPECT_EQ(full, counts);
      EXPECT_GT(full.size(), 20u);
    }
  }
}

}  // namespace
}  // namespace meridian::sched
