#include "sched/plugins/list_price.h"

#include "estimate/defaults.h"
#include "sched/cost.h"
#include "sched/market.h"
#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> ListPrice::Create(PluginArgs& args) {
  return FinishPlugin<ListPrice>(args);
}

double ListPrice::ListHours(const CycleContext& ctx, const Candidate& c) {
  double h = ctx.RunHours(c);
  const QueuedJob& job = ctx.job();
  if (c.kind == CandidateKind::kElastic && c.pricing == PricingModel::kSpot) {
    const std::optional<double> m = job.SpotRunMultiplier(c.instances);
    if (m && *m > 0) h /= *m;
  }
  return h;
}

Money ListPrice::ListCost(const CycleContext& ctx, const Candidate& c) {
  if (c.kind != CandidateKind::kElastic) return RunCost(ctx, c);
  const double hours = ListHours(ctx, c);
  std::optional<Money> p = RunPricePerHour(ctx.market(), c.offering, c.pricing, c.start, hours);
  return p ? p->Times(c.instances * hours) : Money::FromMicros(INT64_MAX / 4);
}

int64_t ListPrice::Score(const CycleContext& ctx, const Candidate& c) const {
  return -ListCost(ctx, c).micros();
}

std::string ListPrice::ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t) const {
  if (c.kind != CandidateKind::kElastic) return RunCostArithmetic(ctx, c);
  std::optional<Money> p =
      RunPricePerHour(ctx.market(), c.offering, c.pricing, c.start, ListHours(ctx, c));
  return std::to_string(c.instances) + " x " + (p ? p->ToString() : "?") + " $/h " +
         std::string(ToString(c.pricing)) + " (list) x " + estimate::Fixed(ListHours(ctx, c), 2) +
         " h = " + ListCost(ctx, c).ToString() + " $";
}

}  // namespace meridian::sched
