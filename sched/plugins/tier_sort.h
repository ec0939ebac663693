// tier_sort (QueueSort): business tier first, critical > high > normal > low.
// Jobs of one tier fall to the next QueueSort plugin, then to the framework's
// order: submission time, trace sequence, job id.
#pragma once

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class TierSort final : public Plugin, public QueueSortPlugin {
 public:
  static constexpr std::string_view kName = "tier_sort";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);

  std::string_view name() const override { return kName; }
  std::weak_ordering Compare(const Snapshot& snap, const QueuedJob& a,
                             const QueuedJob& b) const override;
  bool HasSortKey() const override { return true; }
  double SortKey(const Snapshot&, const QueuedJob& job) const override {
    return static_cast<double>(job.tier);
  }
  bool SortKeyIsStatic() const override { return true; }
};

}  // namespace meridian::sched
