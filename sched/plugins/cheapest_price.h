// cheapest_price (Score): lower dollars for the job's run = higher score.
// Raw score: -RunCost (sched/cost.h) in micro-dollars; normalized min-max,
//   score = (max_cost - cost) / (max_cost - min_cost) x 100,
// so the cheapest candidate scores 100 and the dearest 0.
#pragma once

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class CheapestPrice final : public Plugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "cheapest_price";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);

  std::string_view name() const override { return kName; }
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  void ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                  std::span<int64_t> out) const override;
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;
};

}  // namespace meridian::sched
