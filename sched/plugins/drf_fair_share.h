// drf_fair_share (QueueSort, chained after tier_sort): weighted fair share
// between tenants by Dominant Resource Fairness (Ghodsi et al., "Dominant
// Resource Fairness: Fair Allocation of Multiple Resource Types", NSDI 2011).
//
// A tenant's dominant share is the largest, over the resources counted (GPUs,
// vCPUs, RAM, $/h), of what it uses over the fleet's capacity of it, divided
// by its weight; the job whose tenant has the lower weighted dominant share
// goes first. Usage is the snapshot's TenantUsage (sched/tenant_usage.h):
// what the tenant holds in the ledger plus what its jobs queued ahead of this
// one ask for (DRF's progressive filling: a tenant's second job is ranked as
// if its first had been granted). Shares are compared in steps of
// `share_step` so near-equal shares tie and fall to the next QueueSort plugin
// (deadline_urgency); jobs of tenants with equal steps tie.
//
// Arguments:
//   tenants: {name: {weight: 2}, ...}   weights by JobSpec::tenant; 0.01..1000
//   default_weight: 1                   tenants not listed
//   share_step: 0.01                    0..1; 0 compares exact shares
//   resources: [gpus, vcpus, ram, cost] the resources whose shares count
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"
#include "sched/tenant_usage.h"

namespace meridian::sched {

class DrfFairShare : public Plugin, public QueueSortPlugin {
 public:
  struct Tenant {
    std::string name;
    double weight = 1;
  };
  struct Options {
    std::vector<Tenant> tenants;
    double default_weight = 1;
    double share_step = 0.01;
    std::array<bool, ResourceAmounts::kCount> counted = {true, true, true, true};
  };
  static constexpr std::string_view kName = "drf_fair_share";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  // Reads the arguments above; `entry` reads a tenant entry's further keys
  // (follow_the_sun's home zone) for the tenant at `index`.
  using EntryReader = std::function<void(PluginArgs& entry, size_t index)>;
  static Options ReadOptions(PluginArgs& args, const EntryReader& entry = {});

  explicit DrfFairShare(Options o) : options_(std::move(o)) {}

  std::string_view name() const override { return kName; }
  std::weak_ordering Compare(const Snapshot& snap, const QueuedJob& a,
                             const QueuedJob& b) const override;
  // The weighted dominant share, in whole steps of share_step.
  bool HasSortKey() const override { return true; }
  double SortKey(const Snapshot& snap, const QueuedJob& job) const override;
  void SortKeys(const Snapshot& snap, std::span<const QueuedJob* const> jobs,
                std::span<double> keys) const override;
  bool ReadsTenantUsage() const override { return true; }
  bool SortKeyIsProgressive() const override { return true; }
  double ProgressiveKey(const QueuedJob& job, UnixSeconds now, const ResourceAmounts& before,
                        const ResourceAmounts& capacity) const override;

  // max over the counted resources of used / capacity (resources without
  // capacity skipped).
  static double DominantShare(const ResourceAmounts& used, const ResourceAmounts& capacity,
                              const std::array<bool, ResourceAmounts::kCount>& counted);
  // The weight of the job's tenant at `now`.
  double WeightOf(const QueuedJob& job, UnixSeconds now) const;
  const Options& options() const { return options_; }

 protected:
  // Weight of tenant `index` (into options().tenants) at `now`; follow_the_sun
  // scales it by the time of day. Called once per tenant per distinct `now`.
  virtual double WeightAt(size_t index, UnixSeconds now) const;

 private:
  int TenantIndex(const QueuedJob& job) const;  // -1: not listed
  double Step(double share) const;              // share_step's rounding
  void Refresh(UnixSeconds now) const;

  Options options_;
  // Scratch (a Scheduler and its plugins are used from one thread).
  mutable std::vector<int> index_by_id_;  // TenantId -> tenant index + 1; 0 unknown yet
  mutable std::vector<double> weights_;   // per tenant at weights_at_
  mutable UnixSeconds weights_at_ = INT64_MIN;
};

}  // namespace meridian::sched
