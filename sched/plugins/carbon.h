// carbon (Score): grams of CO2 the job's run emits on a candidate, at the
// hours it would run. Lower grams score higher.
//
//   energy  kWh = GPU board power (catalog power_w) x GPUs x run hours / 1000
//           GPUs: elastic instances x the offering's GPUs (all are billed and
//           powered); fleet GPUs per node x members; a MIG slice span / 8 of
//           one GPU. CPU candidates: cpu_watts_per_vcpu x the job's vCPUs,
//           or no figure (0): skipped, they score a neutral 50.
//   carbon  the mean of ctx.market().CarbonGPerKwh(region, t) over the run,
//           one sample per hour from the candidate's start (a deferred start
//           reads the later hours); at most `max_samples` samples, spread
//           evenly over longer runs.
//   raw     -(kWh x mean g/kWh), rounded to whole grams; min-max normalized:
//           (max_g - g) / (max_g - min_g) x 100.
//
// Arguments:
//   max_samples: 48          hourly samples per candidate, 1..720
//   cpu_watts_per_vcpu: 0    power of one vCPU on CPU nodes (0: no figure)
//
// Hot path: the mean for one (region, start, hours) is computed once per
// snapshot time and market and kept in a direct-mapped cache (no
// allocation), so the decisions of one cycle share it; ScoreBatch checks the
// cache's generation once per decision, not once per candidate.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

// Mean of `market`'s hourly carbon for `region` over `hours` hours from
// `start`: ceil(hours) hourly samples (at least one), every k-th hour when
// more than `max_samples`.
double MeanCarbonGPerKwh(const MarketView& market, RegionId region, UnixSeconds start,
                         double hours, int max_samples);

class Carbon final : public Plugin, public ScorePlugin {
 public:
  struct Options {
    int max_samples = 48;
    double cpu_watts_per_vcpu = 0;
  };
  // What a candidate's run draws and emits; `known` false for a CPU
  // candidate without a power figure.
  struct Emission {
    bool known = false;
    double watts = 0;
    double hours = 0;
    double gco2_per_kwh = 0;
    double kwh() const { return watts * hours / 1000.0; }
    int64_t grams() const;
  };
  static constexpr std::string_view kName = "carbon";
  static constexpr int64_t kUnknown = INT64_MIN;  // raw score of a skipped candidate
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit Carbon(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  void ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                  std::span<int64_t> out) const override;
  void NormalizeScore(const CycleContext& ctx, std::span<int64_t> scores) const override;
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;

  Emission EmissionOf(const CycleContext& ctx, const Candidate& c) const;

 private:
  // Starts a new cache generation when the snapshot time or market changed.
  void Refresh(const CycleContext& ctx) const;
  // The mean carbon over a run, from the cache (once Refresh has run for ctx).
  double CachedMean(const CycleContext& ctx, RegionId r, UnixSeconds start, double hours) const;
  // EmissionOf once Refresh has run for ctx.
  Emission EmissionAt(const CycleContext& ctx, const Candidate& c) const;
  // Board power x GPUs of a GPU candidate; `power_w` is its GPU model's.
  static double GpuWatts(const CycleContext& ctx, const Candidate& c, double power_w);

  struct CacheEntry {
    uint64_t generation = 0;  // the decision it belongs to; older ones are empty
    RegionId region;
    UnixSeconds start = 0;
    int32_t samples = -1;
    double mean = 0;
  };
  Options options_;
  // Memo of means, direct-mapped on (region, start, samples), valid while the
  // snapshot's time and market stay the same (a market is deterministic for a
  // given t): the decisions of one cycle share it. A Scheduler is single-threaded.
  // Room for the (region, start, run hours) of a cycle: ~120 catalog regions
  // x the jobs' run lengths x their starts. Allocated by the first Refresh,
  // not with the plugin: a profile check builds every plugin and scores
  // nothing, and the memo is 160 KiB.
  static constexpr size_t kCacheEntries = 4096;
  mutable std::vector<CacheEntry> cache_;
  mutable uint64_t generation_ = 0;
  mutable UnixSeconds cache_now_ = 0;
  mutable const MarketView* cache_market_ = nullptr;
};

}  // namespace meridian::sched
