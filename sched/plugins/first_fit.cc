#include "sched/plugins/first_fit.h"

#include <algorithm>

#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> FirstFit::Create(PluginArgs& args) {
  return FinishPlugin<FirstFit>(args);
}

int64_t FirstFit::Score(const CycleContext& ctx, const Candidate& c) const {
  if (c.on_fleet()) return -static_cast<int64_t>(c.node.value());
  const auto& o = ctx.catalog().offerings()[c.offering.index()];
  int64_t milli = o.on_demand_per_hour.Times(c.instances).micros() / 1000;
  return -(static_cast<int64_t>(ctx.fleet().nodes().size()) + 1 + milli);
}

void NormalizeByRank(std::span<int64_t> scores, std::vector<int64_t>* scratch) {
  if (scores.empty()) return;
  // Candidates are at most a few hundred: sort a copy of the distinct values.
  std::vector<int64_t>& distinct = *scratch;
  distinct.assign(scores.begin(), scores.end());
  std::sort(distinct.begin(), distinct.end(), std::greater<>());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (int64_t& s : scores) {
    auto rank = std::lower_bound(distinct.begin(), distinct.end(), s, std::greater<>()) -
                distinct.begin();
    s = std::max<int64_t>(0, 100 - rank);
  }
}

void FirstFit::NormalizeScore(const CycleContext&, std::span<int64_t> scores) const {
  NormalizeByRank(scores, &scratch_);
}

std::string FirstFit::ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t) const {
  if (c.on_fleet()) return "fleet position " + std::to_string(c.node.value());
  return "after every fleet node (" + std::to_string(ctx.fleet().nodes().size()) + ")";
}

}  // namespace meridian::sched
