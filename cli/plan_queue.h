// The jobs of one file queued together at one instant, sorted by the profile's
// queue order, with the snapshot they are decided against: what `plan --fleet`
// and `k8s export` both decide in turn, committing each placement so later
// jobs see it.
#pragma once

#include <memory>
#include <vector>

#include "catalog/catalog.h"
#include "core/ledger.h"
#include "core/status.h"
#include "core/units.h"
#include "sched/elastic.h"
#include "sched/fleet.h"
#include "sched/market.h"
#include "sched/queued_job.h"
#include "sched/scheduler.h"
#include "sched/snapshot.h"
#include "spec/spec.h"

namespace meridian::cli {

// Job i of the file is JobId(i + 1); tenants are numbered in order of first
// appearance. `snap` points into the queue, so a PlanQueue is never moved.
struct PlanQueue {
  explicit PlanQueue(std::shared_ptr<const catalog::Catalog> catalog)
      : market(catalog), elastic(*catalog) {}
  PlanQueue(const PlanQueue&) = delete;
  PlanQueue& operator=(const PlanQueue&) = delete;

  sched::CatalogMarket market;
  sched::ElasticIndex elastic;
  std::vector<sched::QueuedJob> queued;
  std::vector<const sched::QueuedJob*> jobs;   // in file order
  std::vector<const sched::QueuedJob*> order;  // in queue order
  sched::Snapshot snap;
};

// A job the core cannot queue fails the whole queue, with the job named.
Result<std::unique_ptr<PlanQueue>> QueueJobs(const std::vector<JobSpec>& jobs,
                                             std::shared_ptr<const catalog::Catalog> catalog,
                                             const sched::Fleet& fleet, const Ledger& ledger,
                                             const sched::Scheduler& scheduler, UnixSeconds at);

}  // namespace meridian::cli
