#include "sched/plugins/egress_locality.h"

#include "sched/plugins/candidate_region.h"

#include "estimate/defaults.h"
#include "sched/cost.h"
#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> EgressLocality::Create(PluginArgs& args) {
  Options o;
  o.include_run_cost = args.Bool("include_run_cost", o.include_run_cost);
  if (args.Has("max_usd")) o.max_usd = args.Dollars("max_usd", Money());
  return FinishPlugin<EgressLocality>(args, o);
}

double CatalogEgressUsdPerGb(const catalog::Catalog& catalog, RegionId from, RegionId to) {
  const auto& regions = catalog.regions();
  if (!from.valid() || !to.valid() || from == to) return 0;
  if (from.index() >= regions.size() || to.index() >= regions.size()) {
    return estimate::kDefaultInternetEgressUsdPerGb;
  }
  std::optional<double> r =
      catalog.EgressUsdPerGb(regions[from.index()].id, regions[to.index()].id);
  return r.value_or(estimate::kDefaultInternetEgressUsdPerGb);
}

Status EgressLocality::Prepare(const PrepareContext& p) {
  regions_ = p.catalog.regions().size();
  rate_.assign(regions_ * regions_, 0);
  for (size_t f = 0; f < regions_; ++f) {
    for (size_t t = 0; t < regions_; ++t) {
      rate_[f * regions_ + t] = CatalogEgressUsdPerGb(
          p.catalog, RegionId(static_cast<uint16_t>(f)), RegionId(static_cast<uint16_t>(t)));
    }
  }
  return Status::Ok();
}

double EgressLocality::RateUsdPerGb(RegionId from, RegionId to) const {
  if (!from.valid() || !to.valid() || from == to) return 0;
  if (from.index() >= regions_ || to.index() >= regions_) {
    return estimate::kDefaultInternetEgressUsdPerGb;
  }
  return rate_[from.index() * regions_ + to.index()];
}

Money EgressLocality::Egress(const CycleContext& ctx, const Candidate& c) const {
  const QueuedJob& job = ctx.job();
  if (!job.data_region.valid() || job.data_gb <= 0) return Money();
  return Money::FromDollars(job.data_gb * RateUsdPerGb(job.data_region, RegionOf(ctx, c)));
}

int64_t EgressLocality::Score(const CycleContext& ctx, const Candidate& c) const {
  Money total = Egress(ctx, c);
  if (options_.include_run_cost) total += RunCost(ctx, c);
  return -total.micros();
}

void EgressLocality::ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                                std::span<int64_t> out) const {
  ScoreEach(*this, ctx, cands, out);
}

std::string EgressLocality::ExplainScore(const CycleContext& ctx, const Candidate& c,
                                         int64_t) const {
  using estimate::Fixed;
  const QueuedJob& job = ctx.job();
  const Money egress = Egress(ctx, c);
  std::string out;
  if (!job.data_region.valid() || job.data_gb <= 0) {
    out = "no input data: 0 $ egress";
  } else {
    const RegionId to = RegionOf(ctx, c);
    if (to == job.data_region) {
      out = "data in " + ctx.catalog().regions()[to.index()].id + ": 0 $ egress";
    } else {
      out = Fixed(job.data_gb, 0) + " GB from " +
            ctx.catalog().regions()[job.data_region.index()].id + " x " +
            Fixed(RateUsdPerGb(job.data_region, to), 3) + " $/GB = " + egress.ToString() +
            " $ egress";
    }
  }
  if (options_.include_run_cost) {
    out += " + run " + RunCost(ctx, c).ToString() + " $ = " + (egress + RunCost(ctx, c)).ToString() + " $";
  }
  return out;
}

size_t EgressLocality::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                              Rejections& rejected) const {
  if (!options_.max_usd) return cands.size();
  return KeepIf(cands, rejected, [&](const Candidate& c) -> std::string_view {
    return Egress(ctx, c) > *options_.max_usd ? "egress of the job's data exceeds max_usd" : "";
  });
}

}  // namespace meridian::sched
