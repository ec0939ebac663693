#include "sched/tenant_usage.h"

#include <algorithm>
#include <bit>

#include "sched/fleet.h"
#include "sched/queued_job.h"

namespace meridian::sched {

ResourceAmounts TenantUsage::Of(const Fleet& fleet, const Allocation& a) {
  ResourceAmounts r;
  for (const NodeShare& s : a.nodes) {
    const Node& n = fleet.node(s.node);
    int64_t eighths = static_cast<int64_t>(std::popcount(s.gpus)) * kMigMemorySlices;
    if (s.mig) eighths += s.mig->shape.span;
    r.v[ResourceAmounts::kGpus] += eighths;
    r.v[ResourceAmounts::kVcpus] += s.vcpus;
    r.v[ResourceAmounts::kRam] += s.ram_mib;
    r.v[ResourceAmounts::kCost] += fleet.cluster(n.cluster).gpu_hour.micros() * eighths / kMigMemorySlices;
  }
  if (a.elastic) r.v[ResourceAmounts::kCost] += a.elastic->price_per_hour.micros();
  return r;
}

ResourceAmounts TenantUsage::Demand(const QueuedJob& job) {
  ResourceAmounts r;
  int gpus = 0;
  for (const ModelDemand& d : job.demands) gpus = gpus == 0 ? d.gpus : std::min<int>(gpus, d.gpus);
  r.v[ResourceAmounts::kGpus] = static_cast<int64_t>(gpus) * kMigMemorySlices;
  r.v[ResourceAmounts::kVcpus] = job.vcpus;
  r.v[ResourceAmounts::kRam] = job.ram_mib;
  return r;
}

ResourceAmounts TenantUsage::Capacity(const Fleet& fleet) {
  ResourceAmounts c;
  for (const Node& n : fleet.nodes()) {
    c.v[ResourceAmounts::kGpus] += static_cast<int64_t>(n.gpus) * kMigMemorySlices;
    c.v[ResourceAmounts::kVcpus] += n.vcpus;
    c.v[ResourceAmounts::kRam] += n.ram_mib;
    c.v[ResourceAmounts::kCost] += fleet.cluster(n.cluster).gpu_hour.micros() * n.gpus;
  }
  return c;
}

TenantUsage TenantUsage::Build(const Fleet& fleet, const Ledger& ledger,
                               std::span<const QueuedJob* const> queue) {
  TenantUsage u;
  u.Rebuild(fleet, ledger, queue);
  return u;
}

void TenantUsage::Rebuild(const Fleet& fleet, const Ledger& ledger,
                          std::span<const QueuedJob* const> queue) {
  TenantUsage& u = *this;
  u.capacity_ = Capacity(fleet);
  for (ResourceAmounts& h : u.held_) h = {};
  for (const auto& [job, a] : ledger.allocations()) {
    if (!a.tenant.valid()) continue;
    if (a.tenant.index() >= u.held_.size()) u.held_.resize(a.tenant.index() + 1);
    u.held_[a.tenant.index()] += Of(fleet, a);
  }
  // Progressive filling: each tenant's queued jobs in the order they would be
  // granted (tier, submission, sequence, id), with running sums. A queue
  // already in that order within each tenant (one tenant, FIFO) is checked in
  // one pass, not sorted.
  const size_t n = queue.size();
  std::vector<uint32_t>& order = u.order_;
  order.resize(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  auto granted_first = [&](uint32_t x, uint32_t y) {
    const QueuedJob* a = queue[x];
    const QueuedJob* b = queue[y];
    if (a->tenant != b->tenant) return a->tenant < b->tenant;
    if (a->tier != b->tier) return a->tier < b->tier;
    if (a->submitted != b->submitted) return a->submitted < b->submitted;
    if (a->sequence != b->sequence) return a->sequence < b->sequence;
    return a->id < b->id;
  };
  if (!std::is_sorted(order.begin(), order.end(), granted_first)) {
    std::sort(order.begin(), order.end(), granted_first);
  }
  u.before_at_.resize(n);
  ResourceAmounts running;
  for (size_t i = 0; i < n; ++i) {
    const QueuedJob* job = queue[order[i]];
    if (i == 0 || job->tenant != queue[order[i - 1]]->tenant) running = u.Held(job->tenant);
    u.before_at_[order[i]] = running;
    running += Demand(*job);
  }
  u.queue_data_ = queue.data();
  u.queue_.assign(queue.begin(), queue.end());
  u.by_id_built_ = false;
}

ResourceAmounts TenantUsage::Held(TenantId t) const {
  return t.valid() && t.index() < held_.size() ? held_[t.index()] : ResourceAmounts{};
}

ResourceAmounts TenantUsage::Before(const QueuedJob& job) const {
  if (!by_id_built_) {
    by_id_.resize(queue_.size());
    for (size_t i = 0; i < queue_.size(); ++i) by_id_[i] = {queue_[i]->id, static_cast<uint32_t>(i)};
    std::sort(by_id_.begin(), by_id_.end());
    by_id_built_ = true;
  }
  auto it = std::lower_bound(by_id_.begin(), by_id_.end(), job.id,
                             [](const auto& e, JobId id) { return e.first < id; });
  return it == by_id_.end() || it->first != job.id ? Held(job.tenant) : before_at_[it->second];
}

}  // namespace meridian::sched
