// first_fit (Score): fleet-file order, as the fifo profiles place work. The
// first candidate in fleet order scores 100, the next distinct position 99,
// and so on down to 0 (rank-based, so 10,000 nodes do not collapse into a few
// buckets). Fleet nodes come before elastic offerings, which rank by their
// on-demand price for the whole choice.
#pragma once

#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class FirstFit final : public Plugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "first_fit";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);

  std::string_view name() const override { return kName; }
  // -(position): node id on the fleet (a gang's first member, MIG: its node),
  // node count + 1 + on-demand milli-dollars per hour for an offering.
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  void NormalizeScore(const CycleContext& ctx, std::span<int64_t> scores) const override;
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;
  bool DistinguishesEquivalentNodes() const override { return true; }  // by position

 private:
  mutable std::vector<int64_t> scratch_;  // reused by NormalizeScore (one Scheduler per thread)
};

// Rank normalization: the highest raw score 100, each next distinct value one
// less, floor 0. Equal raw scores share a rank. `scratch` is reused storage.
void NormalizeByRank(std::span<int64_t> scores, std::vector<int64_t>* scratch);

}  // namespace meridian::sched
