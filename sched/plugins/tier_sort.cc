#include "sched/plugins/tier_sort.h"

#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> TierSort::Create(PluginArgs& args) {
  return FinishPlugin<TierSort>(args);
}

std::weak_ordering TierSort::Compare(const Snapshot&, const QueuedJob& a,
                                     const QueuedJob& b) const {
  // Priority's enumerators run critical (0) .. low (3): smaller goes first.
  return static_cast<int>(a.tier) <=> static_cast<int>(b.tier);
}

}  // namespace meridian::sched
