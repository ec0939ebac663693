// spread (Score): spreading, the opposite of binpack. Prefers the placement
// that leaves the most free capacity on the nodes it uses (fewer neighbours,
// room for the job to grow, failures hit fewer jobs at once).
//
// The free share after placement is binpack's (FreeShareAfterBp: GPUs in MIG
// memory slices, vCPUs and RAM per node, a gang averaged over its members).
// Raw score: +(weighted mean free share after) in basis points; normalized
// min-max, so the emptiest result scores 100 and the fullest 0:
//   free after 6/8 GPUs vs 2/8: raw 7500 vs 2500 -> 100 and 0.
//
// Arguments (relative weights, 0..100, not all 0):
//   gpus: 1     GPU capacity (memory slices)
//   vcpus: 0    vCPUs
//   ram: 0      RAM
#pragma once

#include "sched/plugins/binpack.h"

namespace meridian::sched {

class Spread final : public Plugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "spread";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit Spread(PackingWeights w) : weights_(w) {}

  std::string_view name() const override { return kName; }
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override {
    return FreeShareAfterBp(ctx, c, weights_);
  }
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;

 private:
  PackingWeights weights_;
};

}  // namespace meridian::sched
