// TenantUsage: what each tenant holds and has queued, for fair-share
// ordering (drf_fair_share, follow_the_sun). Built once per queue sort from
// the ledger and the queue, so comparing two jobs is two lookups:
//
//   held     per tenant, summed over the ledger's allocations: GPUs (in
//            eighths, so a MIG instance counts its memory slices), vCPUs, RAM
//            and the hourly cost ($/h: owned and reserved fleet GPUs at the
//            cluster's rate, elastic leases at their price)
//   ahead    per queued job, what its tenant's jobs queued before it ask for
//            (tier, then submission time, sequence, id): DRF's progressive
//            filling, so a tenant's k-th job is ranked as if the k-1 before it
//            had been granted (GPUs of its smallest demand, vCPUs, RAM; no $)
//   capacity the fleet's totals of the same four resources
//
// Immutable once built; Scheduler::SortQueue builds one when the snapshot
// carries none (the simulator or daemon may pass one they maintain).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/ids.h"
#include "core/ledger.h"

namespace meridian::sched {

class Fleet;
struct QueuedJob;

// Amounts of the resources fair share divides.
struct ResourceAmounts {
  static constexpr int kCount = 4;
  enum Kind { kGpus, kVcpus, kRam, kCost };
  // kGpus in eighths of a GPU, kVcpus, kRam in MiB, kCost in micro-dollars per hour.
  int64_t v[kCount] = {0, 0, 0, 0};
  ResourceAmounts& operator+=(const ResourceAmounts& o) {
    for (int i = 0; i < kCount; ++i) v[i] += o.v[i];
    return *this;
  }
};

class TenantUsage {
 public:
  static TenantUsage Build(const Fleet& fleet, const Ledger& ledger,
                           std::span<const QueuedJob* const> queue);
  // Build into this object, reusing its memory (a caller that builds one per
  // cycle allocates nothing once warm).
  void Rebuild(const Fleet& fleet, const Ledger& ledger, std::span<const QueuedJob* const> queue);

  const ResourceAmounts& capacity() const { return capacity_; }
  // What `t` holds now (zero for a tenant without allocations).
  ResourceAmounts Held(TenantId t) const;
  // Held by the job's tenant plus its jobs queued ahead of `job`. The first
  // call after a Rebuild indexes the queue by job id (not thread-safe: one
  // reader at a time, as a sort is).
  ResourceAmounts Before(const QueuedJob& job) const;
  // The same for the pos-th job of the queue Rebuild was given, in O(1);
  // Covers says whether `queue` is that queue.
  const ResourceAmounts& BeforeAt(size_t pos) const { return before_at_[pos]; }
  bool Covers(std::span<const QueuedJob* const> queue) const {
    return queue.data() == queue_data_ && queue.size() == before_at_.size();
  }

  // The fleet's totals, in these units.
  static ResourceAmounts Capacity(const Fleet& fleet);
  // What one allocation holds, in these units.
  static ResourceAmounts Of(const Fleet& fleet, const Allocation& a);
  // What a queued job asks for (GPUs of its smallest demand, vCPUs, RAM).
  static ResourceAmounts Demand(const QueuedJob& job);

 private:
  ResourceAmounts capacity_;
  std::vector<ResourceAmounts> held_;                    // by TenantId index
  std::vector<ResourceAmounts> before_at_;  // by position in the queue
  const QueuedJob* const* queue_data_ = nullptr;
  std::vector<const QueuedJob*> queue_;     // the queue's jobs, for Before's index
  mutable std::vector<std::pair<JobId, uint32_t>> by_id_;  // (job, position), built by Before
  mutable bool by_id_built_ = false;
  std::vector<uint32_t> order_;             // Rebuild's scratch: positions in grant order
};

}  // namespace meridian::sched
