// pricing_model (Filter + Score): how each candidate pays (spot, flex-start,
// on-demand, reserved; owned or reserved fleet capacity), with a deadline
// guarantee after the "uniform progress" idea of Wu et al., "Can't Be Late:
// Optimizing Spot Instance Savings under Deadlines", NSDI'24: a job takes a
// risky (spot) or delayed (flex-start, deferred start) option only while
// enough slack remains to finish on on-demand if it goes wrong.
//
//   T_od   the candidate's run hours at on-demand speed (no spot rework)
//   slack  (deadline - now) - T_od - restart overhead, in hours
//   spot        allowed while slack >= delay + loss bound, where
//               loss bound = loss_margin x (checkpoint interval + restart
//               overhead) + (the spot run's hours - T_od): the expected rework
//               plus `loss_margin` worst-case reclaims, each losing a whole
//               checkpoint interval and a restart
//   flex-start  allowed while slack >= flex_wait_margin x the wait (start - now)
//               + (its run - T_od): if capacity has not come by then, the
//               request is cancelled and on-demand still meets the deadline
//   deferred    any other later start (time shift): slack >= the delay
//   on-demand, reserved, owned and reserved fleet capacity now: always
// Jobs without a deadline may take any option. Checkpoint interval and restart
// overhead: the job's checkpoint, else the estimator's defaults (30 min, 5 min).
//
// With spot_wait (the default profile), a preemptible job with a deadline
// waits for spot, as the greedy policy of "Can't Be Late" does: where spot
// is sold for one of its GPU models, its on-demand candidates (any start) are
// turned away while spot would still be allowed (slack >= loss bound at no
// delay; flex-start keeps its own rule), so with no spot left now it
// waits, and takes on-demand once the slack falls below the bound; spot it
// takes now or not at all (no later start: the spot may be gone). The loss
// bound then leaves out the expected rework: every reclaim puts the job back
// in the queue to be decided again with the slack it has left, so the slack
// must absorb `loss_margin` reclaims from each decision, not the whole run's.
// RetryAt gives the time the slack reaches the bound; Decision::retry_at adds
// the time spot comes back (docs/simulate.md, "Can't Be Late baselines").
//
// Score: the cheaper pricing among those left, raw = -(what the option really
// costs) in micro-dollars: RunCost, except that a reserved term bought from
// the catalog is billed in whole terms (estimate::BilledHours) and idle
// reserved fleet capacity is lent first to preemptible work: free (0 $) to
// preemptible and critical jobs, at its committed rate to other work.
// Min-max normalized, cheapest 100. The explanation names the pricing model
// and why: "spot: slack 41.2 h >= 2 x (30m + 5m) + 0.37 h rework = 1.53 h loss bound".
//
// Arguments:
//   loss_margin: 2           worst-case reclaims the slack must absorb for spot, 0..20
//   flex_wait_margin: 1      multiple of the expected flex-start wait the slack must cover, 1..10
//   spot_wait: false         wait for spot while the slack allows it (above)
#pragma once

#include <string>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class PricingModelChoice final : public Plugin, public FilterPlugin, public ScorePlugin {
 public:
  struct Options {
    double loss_margin = 2;
    double flex_wait_margin = 1;
    bool spot_wait = false;
  };
  // The guarantee's arithmetic for one candidate.
  struct Verdict {
    bool allowed = true;
    bool has_deadline = false;
    double slack_h = 0;  // deadline - now - T_od - restart
    double need_h = 0;   // what the option needs of the slack
    std::string_view reason;  // static; set when not allowed
    bool waiting = false;     // turned away to wait for spot (spot_wait)
  };
  static constexpr std::string_view kName = "pricing_model";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit PricingModelChoice(Options o) : options_(o) {}

  std::string_view name() const override { return kName; }
  // Its time rule (spot_wait) is RetryAt; prices are the market's.
  uint32_t WaitInputs(const QueuedJob&) const override { return kWaitMarket; }
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;
  std::optional<UnixSeconds> RetryAt(const CycleContext& ctx) const override;
  int64_t Score(const CycleContext& ctx, const Candidate& c) const override;
  void ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                  std::span<int64_t> out) const override;
  std::string ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t raw) const override;

  Verdict Judge(const CycleContext& ctx, const Candidate& c) const;
  // spot_wait: whether the job waits for spot (preemptible, a deadline, spot
  // sold for one of its GPU models), and the slack spot needs at no delay.
  bool WaitsForSpot(const CycleContext& ctx) const;
  double SpotBoundHours(const QueuedJob& job) const;
  Money EffectiveCost(const CycleContext& ctx, const Candidate& c) const;
  // "spot", "flex-start", "on-demand", "reserved", "owned", "reserved fleet".
  static std::string Label(const CycleContext& ctx, const Candidate& c);

 private:
  Verdict JudgeWith(const CycleContext& ctx, const Candidate& c, bool waits) const;
  UnixSeconds WaitUntil(const QueuedJob& job, double t_od_h) const;
  std::string Why(const CycleContext& ctx, const Candidate& c, const Verdict& v) const;
  Options options_;
  mutable std::string detail_;  // a rejection's formatted reason (explained in full)
};

}  // namespace meridian::sched
