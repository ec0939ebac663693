// residency (PreFilter + Filter): data residency, a hard constraint. The
// regions the job's `residency` list allows (geographies such as "eu", or
// region ids; estimate::ResidencyAllows) are computed once at enqueue
// (QueuedJob::allowed_regions); an empty list allows every region.
//
// PreFilter: Unresolvable when no catalog region is allowed; otherwise
// narrows generation to the allowed regions, so the pools of other regions
// are never visited.
// Filter: rejects any candidate outside them: those AddCandidates plugins
// add (the built-in generator's honour the narrowing); every member of a
// gang is checked. A job without residency passes whole batches at once.
//
// Arguments: none.
#pragma once

#include <string>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class Residency final : public Plugin, public PreFilterPlugin, public FilterPlugin {
 public:
  static constexpr std::string_view kName = "residency";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);

  std::string_view name() const override { return kName; }
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitStatic; }
  PreFilterResult PreFilter(const CycleContext& ctx, CycleState& state) const override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;

  // Why `c` is outside the job's allowed regions; "" when inside.
  std::string_view Reject(const CycleContext& ctx, const Candidate& c, bool detail) const;

 private:
  mutable std::string detail_;  // formatted only when explained in full
};

}  // namespace meridian::sched
