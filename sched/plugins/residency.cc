#include "sched/plugins/residency.h"

#include "sched/registry.h"

namespace meridian::sched {

namespace {

std::string Allowed(const JobSpec* spec) {
  std::string s;
  if (spec) {
    for (const std::string& r : spec->residency) s += (s.empty() ? "" : ", ") + r;
  }
  return "[" + s + "]";
}

}  // namespace

Result<std::unique_ptr<Plugin>> Residency::Create(PluginArgs& args) {
  return FinishPlugin<Residency>(args);
}

PreFilterResult Residency::PreFilter(const CycleContext& ctx, CycleState&) const {
  const QueuedJob& job = ctx.job();
  PreFilterResult r;
  if (job.allowed_regions.none()) {
    r.status = Status::Unresolvable(
        ctx.explain() == ExplainLevel::kFull
            ? "residency " + Allowed(job.spec.get()) + " allows no region of the catalog"
            : "residency allows no region of the catalog");
    return r;
  }
  r.regions = job.allowed_regions;
  return r;
}

std::string_view Residency::Reject(const CycleContext& ctx, const Candidate& c,
                                   bool detail) const {
  // The generator draws only from the regions PreFilter narrowed it to.
  if (c.source == kFrameworkSource) return "";
  const RegionSet& allowed = ctx.job().allowed_regions;
  RegionId region = c.region;
  if (c.kind == CandidateKind::kElastic) {
    if (!region.valid()) {
      region = FindRegionId(ctx.catalog(), ctx.catalog().offerings()[c.offering.index()].region);
    }
  } else {
    for (NodeId id : ctx.members(c)) {
      RegionId r = ctx.fleet().node(id).region;
      if (!r.valid() || !allowed.test(r.index())) {
        region = r;
        break;
      }
      region = r;
    }
  }
  if (region.valid() && region.index() < kMaxRegions && allowed.test(region.index())) return "";
  if (!detail) return "outside the job's residency";
  detail_ = "region " +
            (region.valid() ? ctx.catalog().regions()[region.index()].id : std::string("unknown")) +
            " is outside residency " + Allowed(ctx.job().spec.get());
  return detail_;
}

size_t Residency::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                         Rejections& rejected) const {
  if (!ctx.job().spec || ctx.job().spec->residency.empty()) return cands.size();
  return KeepIf(cands, rejected,
                [&](const Candidate& c) { return Reject(ctx, c, rejected.wants_example()); });
}

}  // namespace meridian::sched
