#include "sched/plugins/home_region.h"

#include "sched/registry.h"

namespace meridian::sched {

RegionId HomeRegion(const QueuedJob& job) {
  if (job.kind == WorkloadKind::kRealtimeInference && !job.user_regions.empty()) {
    return job.user_regions.front();
  }
  return job.data_region;
}

Result<std::unique_ptr<Plugin>> HomeRegionPlugin::Create(PluginArgs& args) {
  std::string scope = args.Choice("scope", "all", {"all", "elastic"});
  return FinishPlugin<HomeRegionPlugin>(args, scope == "all" ? Scope::kAll : Scope::kElastic);
}

PreFilterResult HomeRegionPlugin::PreFilter(const CycleContext& ctx, CycleState&) const {
  PreFilterResult r;
  const RegionId home = HomeRegion(ctx.job());
  if (!home.valid() || scope_ != Scope::kAll || home.index() >= kMaxRegions) return r;
  RegionSet only;
  only.set(home.index());
  r.regions = only;
  return r;
}

std::string_view HomeRegionPlugin::Reject(const CycleContext& ctx, const Candidate& c) const {
  const RegionId home = HomeRegion(ctx.job());
  if (!home.valid()) return "";
  if (c.on_fleet() && scope_ == Scope::kElastic) return "";
  const RegionId at = c.on_fleet() ? ctx.fleet().node(c.node).region : c.region;
  return at == home ? "" : "outside the job's home region";
}

size_t HomeRegionPlugin::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                                Rejections& rejected) const {
  return KeepIf(cands, rejected, [&](const Candidate& c) { return Reject(ctx, c); });
}

}  // namespace meridian::sched
