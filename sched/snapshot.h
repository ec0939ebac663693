// Snapshot: everything a decision at time t reads, borrowed read-only: the
// fleet and the ledger of its allocations, the market at t, the elastic
// offerings index and the queue. The scheduler core is a pure function of a
// snapshot, its profile and its seed. The caller owns every pointee and keeps
// it alive and unchanged for the duration of the call it passes them to.
#pragma once

#include <span>

#include "core/ledger.h"
#include "core/time.h"
#include "sched/elastic.h"
#include "sched/fleet.h"
#include "sched/market.h"
#include "sched/queued_job.h"

namespace meridian::sched {

class TenantUsage;

struct Snapshot {
  UnixSeconds now = 0;
  const Fleet* fleet = nullptr;
  const Ledger* ledger = nullptr;
  const MarketView* market = nullptr;
  const ElasticIndex* elastic = nullptr;  // nullptr: no elastic capacity
  std::span<const QueuedJob* const> queue;  // waiting jobs, in queue order where sorted
  // Per-tenant usage for fair-share ordering (sched/tenant_usage.h); nullptr:
  // Scheduler::SortQueue builds it from the ledger and the jobs it sorts.
  const TenantUsage* tenants = nullptr;
};

}  // namespace meridian::sched
