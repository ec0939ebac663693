#include "sched/plugins/shortest_run.h"

#include <cmath>

#include "estimate/defaults.h"
#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> ShortestRun::Create(PluginArgs& args) {
  return FinishPlugin<ShortestRun>(args);
}

int64_t ShortestRun::Score(const CycleContext& ctx, const Candidate& c) const {
  return -std::llround(ctx.RunHours(c) * 3600.0);
}

std::string ShortestRun::ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t) const {
  return "runs " + estimate::Fixed(ctx.RunHours(c), 2) + " h here";
}

}  // namespace meridian::sched
