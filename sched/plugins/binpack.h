// binpack (Score): bin-packing. Prefers the placement that leaves the least
// free capacity on the nodes it uses, so whole nodes stay free for big gangs
// and wide jobs.
//
// For each resource weighed, the free share after placement on each member
// node: (free now - what the job takes there) / the node's capacity. GPUs are
// counted in MIG memory slices (a whole GPU = 8, a MIG instance its span), so
// whole GPUs and MIG slices weigh alike; vCPUs and RAM take the job's
// per-node share. A gang averages over its members. An elastic offering is a
// node that is empty before: (instances x capacity - the job's need) / that.
// Raw score: -(weighted mean free share after) in basis points (1/10,000);
// normalized min-max, so the fullest result scores 100 and the emptiest 0:
//   free after 2/8 GPUs vs 6/8: raw -2500 vs -7500 -> 100 and 0.
//
// Arguments (relative weights, 0..100, not all 0):
//   gpus: 1     GPU capacity (memory slices)
//   vcpus: 0    vCPUs
//   ram: 0      RAM
#pragma once

#include <string>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

// What a packing score weighs, and how much.
struct PackingWeights {
  int gpus = 1;
  int vcpus = 0;
  int ram = 0;
};

// Reads `gpus`, `vcpus`, `ram` from `args` (an error when all are 0).
PackingWeights ReadPackingWeights(PluginArgs& args);

// The free share the resources of `w` would have after `c` is placed, in
// basis points (0 = the job fills what it uses, 10,000 = all still free),
// weighted and averaged over the members. Pure; no allocation.
int64_t FreeShareAfterBp(const CycleContext& ctx, const Candidate& c, const PackingWeights& w);

// "after placement: onprem-a-h100-80gb-0 16/64 slices free (25.0%) ...".
std::string FreeShareArithmetic(const CycleContext& ctx, const Candidate& c,
                                const PackingWeights& w);

class Binpack final : public Plugin, public ScorePlugin {
 public:
  static constexpr std::string_view kName = "binpack";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit Binpack(PackingWeights w) : weights_(w) {}

  std::string_view name() const override { return kName; }
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override {
    return -FreeShareAfterBp(ctx, c, weights_);
  }
  void ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                  std::span<int64_t> out) const override {
    ScoreEach(*this, ctx, cands, out);
  }
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;

 private:
  PackingWeights weights_;
};

}  // namespace meridian::sched
