// list_price (Score): the run's cost at list prices, as SkyPilot's optimizer
// ranks offers: hourly price x instances x the run's hours, with spot taken at
// its price and no allowance for the rework reclaims cause (the job's
// `preemptible: true` is its "use spot"). So spot wins wherever it is cheaper
// by the hour, and on-demand takes over where spot is out or not allowed.
// Fleet capacity is costed as cheapest_price does (RunCost: owned at
// gpu_hour_usd per GPU-hour, reserved 0).
//
// Raw score: -(cost) in micro-dollars; min-max, cheapest 100:
//   score = (max_cost - cost) / (max_cost - min_cost) x 100.
//
// Arguments: none.
#pragma once

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class ListPrice final : public Plugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "list_price";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);

  std::string_view name() const override { return kName; }
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;

  // Hours the candidate is billed at list price: RunHours without spot rework.
  static double ListHours(const CycleContext& ctx, const Candidate& c);
  static Money ListCost(const CycleContext& ctx, const Candidate& c);
};

}  // namespace meridian::sched
