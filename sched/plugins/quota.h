// quota (Filter + Reserve): a GPU quota per tenant, as a Kueue ClusterQueue's
// nominal quota for nvidia.com/gpu. A candidate is rejected when the GPUs the
// job's tenant holds plus the candidate's would exceed the tenant's quota.
//
// GPUs are counted in eighths (MIG memory slices): a whole GPU is 8, a MIG
// instance its span (1g.10gb = 1, 3g.40gb = 4), an elastic choice its
// instances x the offering's GPUs x 8 (every GPU bought counts), a CPU node 0.
// What a tenant holds is this plugin's own record, kept by Reserve and
// Unreserve as this scheduler commits and releases jobs (Scheduler::Commit,
// Scheduler::Release; the daemon puts running jobs back through Commit when
// it rebuilds its ledger, so the record survives restarts and fleet
// changes); in the "can it ever run" pass it is zero, so a job larger than
// its tenant's whole quota is Unresolvable.
//
// Preemption: the framework checks a nomination with this filter too
// (CycleContext::preemption), counting what the tenant holds less what its
// own victims hold: a tenant at its quota cannot preempt others' jobs to go
// over it, but may preempt its own lower-tier preemptible jobs, whose GPUs
// come back to its quota (Kueue's withinClusterQueue: LowerPriority).
//
// Arguments:
//   tenants: {}           tenant name: GPUs, >= 0 ({research: 16, prod: 2.5})
//   default_gpus: (none)  quota of tenants not listed; absent: unlimited
#pragma once

#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class Quota final : public Plugin, public FilterPlugin, public ReservePlugin {
 public:
  static constexpr std::string_view kName = "quota";
  static constexpr int64_t kUnlimited = -1;
  struct Options {
    std::vector<std::pair<std::string, int64_t>> tenants;  // name, quota in eighths
    int64_t default_eighths = kUnlimited;
  };
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit Quota(Options o) : options_(std::move(o)) {}

  std::string_view name() const override { return kName; }
  // Its verdict reads the job's own tenant's record only, which falls when
  // the scheduler releases one of that tenant's jobs (Unreserve); a tenant
  // without a quota is never turned away.
  uint32_t WaitInputs(const QueuedJob& job) const override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;
  Status Reserve(const CommitContext& ctx, const Allocation& a) override;
  void Unreserve(const CommitContext& ctx, const Allocation& a) override;

  // The quota of tenant `name` in eighths of a GPU (kUnlimited: none).
  int64_t QuotaOf(const std::string& name) const;
  // Eighths of a GPU tenant `t` holds, by this plugin's record.
  int64_t Held(TenantId t) const;
  // Held(t) less what the jobs in `released` that belong to `t` hold.
  int64_t HeldWithout(TenantId t, std::span<const JobId> released) const;
  // Eighths of a GPU candidate `c` holds.
  static int64_t EighthsOf(const CycleContext& ctx, const Candidate& c);
  static int64_t EighthsOf(const catalog::Catalog& cat, const Allocation& a);

 private:
  Options options_;
  std::vector<int64_t> held_;                                    // by TenantId index
  std::unordered_map<JobId, std::pair<TenantId, int64_t>> jobs_;  // what Reserve counted
};

}  // namespace meridian::sched
