#include "sched/plugins/spread.h"

#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> Spread::Create(PluginArgs& args) {
  PackingWeights w = ReadPackingWeights(args);
  return FinishPlugin<Spread>(args, w);
}

std::string Spread::ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t) const {
  return FreeShareArithmetic(ctx, c, weights_);
}

}  // namespace meridian::sched
