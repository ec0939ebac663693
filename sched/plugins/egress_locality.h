// egress_locality (Score, optional Filter): data locality. Moving the job's
// input (data.size_gb in data.region) to the candidate's region costs
//   egress $ = size_gb x $/GB(data region -> candidate region)
// with $/GB from the catalog (catalog::Catalog::EgressUsdPerGb: the provider's
// matrix, else the source provider's internet rate), else the estimator's
// stated internet rate (estimate::kDefaultInternetEgressUsdPerGb, 0.09 $/GB);
// 0 in the data's own region and for jobs without input data.
//
// Score: the price comparison with egress added: raw = -(RunCost + egress) in
// micro-dollars (-egress alone with include_run_cost: false), min-max
// normalized, cheapest 100.
// Filter (only with max_usd): rejects candidates whose egress exceeds it.
//
// Arguments:
//   include_run_cost: true   score the run's cost plus egress (false: egress only)
//   max_usd: (none)          reject candidates moving more than this many dollars
//
// Prepare precomputes the $/GB of every region pair (no map lookups per candidate).
#pragma once

#include <optional>
#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

// $/GB of moving data from region `from` to `to`: 0 within a region, the
// catalog's figure (Catalog::EgressUsdPerGb), else
// estimate::kDefaultInternetEgressUsdPerGb. The one rate the locality score
// and a move's checkpoint transfer (sched/move.h) both charge.
double CatalogEgressUsdPerGb(const catalog::Catalog& catalog, RegionId from, RegionId to);

class EgressLocality final : public Plugin, public ScorePlugin, public FilterPlugin {
 public:
  struct Options {
    bool include_run_cost = true;
    std::optional<Money> max_usd;
  };
  static constexpr std::string_view kName = "egress_locality";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit EgressLocality(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitStatic; }
  Status Prepare(const PrepareContext& p) override;
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  void ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                  std::span<int64_t> out) const override;
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;

  // $/GB from `from` to `to` (after Prepare).
  double RateUsdPerGb(RegionId from, RegionId to) const;
  // Dollars of moving the job's data to the candidate's region.
  Money Egress(const CycleContext& ctx, const Candidate& c) const;

 private:
  Options options_;
  size_t regions_ = 0;
  std::vector<double> rate_;  // [from x regions_ + to]
};

}  // namespace meridian::sched
