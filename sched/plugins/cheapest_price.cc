#include "sched/plugins/cheapest_price.h"

#include "sched/cost.h"
#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> CheapestPrice::Create(PluginArgs& args) {
  return FinishPlugin<CheapestPrice>(args);
}

int64_t CheapestPrice::Score(const CycleContext& ctx, const Candidate& c) const {
  return -RunCost(ctx, c).micros();
}

void CheapestPrice::ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                               std::span<int64_t> out) const {
  ScoreEach(*this, ctx, cands, out);
}

std::string CheapestPrice::ExplainScore(const CycleContext& ctx, const Candidate& c,
                                        int64_t) const {
  return RunCostArithmetic(ctx, c);
}

}  // namespace meridian::sched
