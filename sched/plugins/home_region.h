// home_region (PreFilter + Filter): the job runs in its home region only, as
// a batch queue bound to one site does (the fifo-strict baseline). The home
// region is the region of the job's input data (data.region); for a
// real-time service (kind realtime-inference), its first users' region
// (latency.users[0]) where it names one, else its data region. A job with
// neither has no home and passes everywhere.
//
// PreFilter (scope: all): narrows generation to the home region, so other
//   regions' pools and offerings are never visited.
// Filter: rejects candidates outside it (scope: all: every candidate;
//   scope: elastic: catalog offerings only, fleet nodes run anywhere);
//   every member of a gang is in the candidate's cluster, hence its region.
//
// Arguments:
//   scope: all        all | elastic
#pragma once

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

// The job's home region (see above); invalid when it has none.
RegionId HomeRegion(const QueuedJob& job);

class HomeRegionPlugin final : public Plugin, public PreFilterPlugin, public FilterPlugin {
 public:
  enum class Scope { kAll, kElastic };
  static constexpr std::string_view kName = "home_region";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit HomeRegionPlugin(Scope s) : scope_(s) {}

  std::string_view name() const override { return kName; }
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitStatic; }
  PreFilterResult PreFilter(const CycleContext& ctx, CycleState& state) const override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;

  // Why `c` is outside the job's home region; "" when it is not.
  std::string_view Reject(const CycleContext& ctx, const Candidate& c) const;

 private:
  Scope scope_;
};

}  // namespace meridian::sched
