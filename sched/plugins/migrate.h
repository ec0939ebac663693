// migrate (Move): whether a running preemptible job moves at a checkpoint.
// Scheduler::Reconsider (sched/move.h) re-runs the job's decision for the
// work it has left and quotes staying against the best other placement; this
// plugin judges the quote. Carbon is weighed in dollars at usd_per_kg_co2
// (0 when either side has no carbon figure):
//
//   stay      RunCost(current place, from now) + stay grams x usd_per_kg
//   there     RunCost(best place) + its grams x usd_per_kg
//   gross     stay - there
//   move cost egress + overhead, where
//             egress   = checkpoint GB x $/GB between the two regions
//                        (CatalogEgressUsdPerGb; 0 within a region)
//             overhead = the new place's ($/h + g/h x usd_per_kg) x
//                        (transfer h + restart h); transfer h = checkpoint GB
//                        x 8 / transfer_gbit_s / 3600, restart h = the job's
//                        checkpoint.restart_overhead (default 5 min)
//   net       gross - move cost
//
// It moves only when all hold, and says which failed otherwise:
//   deadline   with a deadline: the new place's finish (its start, after any
//              wait, + transfer + restart + run hours) leaves one reclaim's
//              loss (checkpoint interval + restart overhead) before it, or
//              finishes no later than staying would
//   wait       the new place starts within max_wait of now
//   hysteresis gross > move cost x (1 + hysteresis)
//   absolute   net >= min_saving_usd
//   relative   net >= min_relative_saving x stay
//   no worse   neither the work left's dollars there (with egress and the
//              overhead's dollars) nor its CO2 there (with the overhead's)
//              exceeds staying's by more than max_worse, whatever the
//              combined saving (CO2 only when both sides have a figure)
// and never (Hold) for a job that is not preemptible, or within
// min_checkpoints_between checkpoint intervals of its last move: a job that
// just moved does not flap back on a small swing.
//
// Arguments:
//   min_saving_usd: 1.00        net dollars a move must save
//   min_relative_saving: 0.05   net saving as a share of staying's cost (0..1)
//   hysteresis: 0.5             the gross saving must exceed the move's cost
//                               by this share of it (0..10)
//   min_checkpoints_between: 2  checkpoint intervals between two moves (0..1000)
//   usd_per_kg_co2: 0.19        dollars per kg of CO2 (0..100): the US EPA's
//                               social cost of carbon, $190 per tonne (2023
//                               report, 2020 emissions, 2% discount rate)
//   transfer_gbit_s: 25         checkpoint transfer rate: the catalog's
//                               fallback network (estimate::kUnknownNetworkGbitPerS)
//   max_wait: 0                 longest wait for the new place (a duration;
//                               0: it must start now)
//   max_worse: 0.02             largest share by which a move may make the
//                               work left's dollars or its CO2 worse than
//                               staying (0..100)
#pragma once

#include "sched/move.h"
#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class Migrate final : public Plugin, public MovePlugin {
 public:
  struct Options {
    Money min_saving = Money::FromDollars(1.00);
    double min_relative_saving = 0.05;
    double hysteresis = 0.5;
    int min_checkpoints_between = 2;
    double usd_per_kg_co2 = 0.19;
    double transfer_gbit_s = 25;
    int64_t max_wait_s = 0;
    double max_worse = 0.02;
  };
  static constexpr std::string_view kName = "migrate";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit Migrate(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  std::optional<std::string> Hold(const RunningJob& r, UnixSeconds now) const override;
  MoveDecision Judge(const MoveQuote& q) const override;
  double TransferGbitPerS() const override { return options_.transfer_gbit_s; }

  // Dollars of `grams` of CO2 at usd_per_kg_co2.
  Money CarbonUsd(int64_t grams) const;

 private:
  // The figures Judge compares, carbon in dollars.
  struct Tally {
    Money stay, there, move_cost;
    Money gross() const { return stay - there; }
    Money net() const { return gross() - move_cost; }
  };
  Tally TallyOf(const MoveQuote& q) const;
  // Why the move fails a rule, or "" when it passes them all.
  std::string Refusal(const MoveQuote& q, const Tally& t) const;
  // Why the move makes dollars or CO2 more than max_worse worse, or "".
  std::string WorseRefusal(const MoveQuote& q) const;

  Options options_;
};

}  // namespace meridian::sched
