#include "cli/plan_queue.h"

#include <algorithm>
#include <string>

namespace meridian::cli {

Result<std::unique_ptr<PlanQueue>> QueueJobs(const std::vector<JobSpec>& jobs,
                                             std::shared_ptr<const catalog::Catalog> catalog,
                                             const sched::Fleet& fleet, const Ledger& ledger,
                                             const sched::Scheduler& scheduler, UnixSeconds at) {
  auto q = std::make_unique<PlanQueue>(catalog);
  std::vector<std::string> tenants;
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto t = std::find(tenants.begin(), tenants.end(), jobs[i].tenant);
    if (t == tenants.end()) t = tenants.insert(tenants.end(), jobs[i].tenant);
    sched::EnqueueRequest req{JobId(static_cast<uint32_t>(i + 1)),
                              TenantId(static_cast<uint32_t>(t - tenants.begin())), at, i};
    auto job = sched::MakeQueuedJob(std::make_shared<JobSpec>(jobs[i]), *catalog, req);
    if (!job.ok()) return job.status().WithContext("job \"" + jobs[i].name + "\"");
    q->queued.push_back(std::move(job).value());
  }
  for (const auto& job : q->queued) q->jobs.push_back(&job);
  q->snap.now = at;
  q->snap.fleet = &fleet;
  q->snap.ledger = &ledger;
  q->snap.market = &q->market;
  q->snap.elastic = fleet.elastic() ? &q->elastic : nullptr;
  q->order = scheduler.SortQueue(q->snap, q->jobs);
  q->snap.queue = q->order;
  return q;
}

}  // namespace meridian::cli
