// A small world for sched/ tests: the estimator's test catalog (real figures,
// estimate/test_catalog.h), a fleet over it, a ledger, the catalog market and
// the elastic index, and helpers to build jobs and plugin contexts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "estimate/test_catalog.h"
#include "sched/elastic.h"
#include "sched/fleet.h"
#include "sched/market.h"
#include "sched/plugin.h"
#include "sched/queued_job.h"
#include "sched/snapshot.h"

namespace meridian::sched::testing {

inline constexpr UnixSeconds kNow = 1767225600;  // 2026-01-01T00:00:00Z

// onprem-a (gcp:us-central1, owned, 1.10 $/GPU-h):
//   node 0, 1  H100-80GB x8, 64 vCPUs, 512 GiB
//   node 2     H100-80GB x2 in MIG: 3g.40gb + 1g.20gb + 1g.10gb + 1g.10gb per GPU
// onprem-b (gcp:europe-west4, owned, 2.00 $/GPU-h):
//   node 3..6  A100-80GB x8, 96 vCPUs, 1024 GiB
inline FleetSpec SmallFleetSpec() {
  FleetSpec f;
  ClusterSpec a;
  a.name = "onprem-a";
  a.region = "gcp:us-central1";
  a.gpu_hour = Money::FromDollars(1.10);
  a.nodes.push_back({2, "H100-80GB", 8, 64, 512, {}, "", {}, {}});
  a.nodes.push_back({1, "H100-80GB", 2, 16, 128, {"3g.40gb", "1g.20gb", "1g.10gb", "1g.10gb"}, "mig-", {}, {}});
  ClusterSpec b;
  b.name = "onprem-b";
  b.region = "gcp:europe-west4";
  b.gpu_hour = Money::FromDollars(2.00);
  b.nodes.push_back({4, "A100-80GB", 8, 96, 1024, {}, "", {}, {}});
  f.clusters = {a, b};
  return f;
}

struct World {
  std::shared_ptr<const catalog::Catalog> catalog;
  std::shared_ptr<const Fleet> fleet;
  Ledger ledger;
  std::unique_ptr<CatalogMarket> market;
  std::unique_ptr<ElasticIndex> elastic;
  std::vector<QueuedJob> jobs;
  std::vector<const QueuedJob*> queue;

  Snapshot At(UnixSeconds t = kNow) const {
    Snapshot s;
    s.now = t;
    s.fleet = fleet.get();
    s.ledger = &ledger;
    s.market = market.get();
    s.elastic = elastic.get();
    s.queue = queue;
    return s;
  }
};

inline World MakeWorld(const FleetSpec& spec = SmallFleetSpec(), bool elastic = true) {
  World w;
  w.catalog = estimate::testing::TestCatalog();
  FleetSpec s = spec;
  s.elastic = elastic;
  auto fleet = Fleet::Build(s, w.catalog);
  if (!fleet.ok()) throw std::runtime_error(fleet.status().ToString());
  w.fleet = *fleet;
  w.ledger = std::move(w.fleet->NewLedger()).value();
  w.market = std::make_unique<CatalogMarket>(w.catalog);
  w.elastic = std::make_unique<ElasticIndex>(*w.catalog);
  return w;
}

// A service-shaped job: `gpus` GPUs with `vram` GiB each, running exactly 2 h
// on every model (work.duration), so costs are easy arithmetic.
inline JobSpec TwoHourJob(std::string name, int gpus, double vram, Priority p = Priority::kNormal) {
  JobSpec j;
  j.name = std::move(name);
  j.kind = WorkloadKind::kBatchInference;
  j.resources.gpus = gpus;
  j.resources.vram_gib = vram;
  j.work.duration_s = 7200;
  j.priority = p;
  return j;
}

inline QueuedJob Queue(const World& w, const JobSpec& spec, uint32_t id, UnixSeconds at = kNow) {
  auto q = MakeQueuedJob(std::make_shared<JobSpec>(spec), *w.catalog,
                         {JobId(id), TenantId(0), at, id});
  if (!q.ok()) throw std::runtime_error(q.status().ToString());
  return std::move(q).value();
}

// A plugin's view of one decision, for table tests.
struct Cycle {
  Snapshot snap;
  CycleState state;
  Rng rng{1};
  std::vector<NodeId> members;
  CycleContext ctx;
  Cycle(const World& w, const QueuedJob& job, ExplainLevel e = ExplainLevel::kFull)
      : snap(w.At()),
        ctx({&job, &snap, &w.ledger, &state, &rng, &members, e, false}) {}
};

inline GpuModelId Model(const World& w, const char* name) { return FindGpuModelId(*w.catalog, name); }

inline OfferingId Offering(const World& w, const char* region, const char* type) {
  const auto& o = w.catalog->offerings();
  for (size_t i = 0; i < o.size(); ++i) {
    if (o[i].region == region && o[i].instance_type == type) return OfferingId(static_cast<uint32_t>(i));
  }
  return OfferingId();
}

}  // namespace meridian::sched::testing
