// shortest_run (Score): the faster placement, when price leaves a choice.
// On capacity whose price does not tell candidates apart (owned GPUs priced
// alike, reserved capacity, equal offers), a 1-hour job recorded on an
// A100 would otherwise run 5.6 hours on a T4 beside it because the T4 draws
// a little less energy; this scores the run's own hours
// (CycleContext::RunHours: the model's speed, a MIG slice's share, a span
// over several nodes, spot's expected rework), so the job lands where it
// finishes soonest. Its start is not scored: deferring to a cheaper or
// greener hour is time_shift's and the price plugins' to weigh.
//
// Raw score: -(run seconds); min-max, shortest 100:
//   score = (max_s - s) / (max_s - min_s) x 100.
//
// Arguments: none.
#pragma once

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class ShortestRun final : public Plugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "shortest_run";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);

  std::string_view name() const override { return kName; }
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  void ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                  std::span<int64_t> out) const override {
    ScoreEach(*this, ctx, cands, out);
  }
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;
};

}  // namespace meridian::sched
