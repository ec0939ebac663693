// time_shift (AddCandidates): batch work with slack may start later, in
// cheaper or greener hours. For a few of the candidates found so far (the
// first per region, at most `max_regions`), it looks ahead in whole hours up
// to the job's slack (deadline - now - run - restart overhead) or `max_hours`
// (jobs without a deadline), reading the market's hourly carbon of the
// candidate's region and its mean price over the run's hours (its first
// `max_run_samples`) from each start, and proposes the same candidate
// starting later:
//   greener  the start whose mean carbon over the run (its first
//            `max_run_samples` hours) is lowest, when it is at least
//            `min_gain` below starting now and the price there is no higher
//   cheaper  the start with the lowest run price per hour, when at least
//            `min_gain` below now (spot: only while spot is available then)
// The score plugins then compare them with starting now; a later start that
// wins is a kDefer decision.
//
// Never: real-time services (realtime-inference), flex-start candidates
// (they already wait), the "can it ever run" pass. Fleet candidates only with
// `defer_fleet: true`: the ledger holds a deferred allocation's capacity from
// the decision on, so deferring on the fleet idles it; by default only
// elastic capacity (bought when it starts) is deferred.
//
// Bounded work: at most max_regions x (max_hours + max_run_samples) carbon
// reads and max_regions x max_hours x max_run_samples price reads per decision, the carbon read
// once per region while the snapshot's time and market stay the same; no
// allocation (scratch reused).
//
// Arguments:
//   max_hours: 24            how far ahead to look, in hours, 1..48
//   max_regions: 3           candidates (distinct regions) examined, 1..8
//   max_run_samples: 24      hours of the run whose carbon is compared, 1..48
//   min_gain: 0.05           fraction better than now a later start must be, 0..0.9
//   defer_fleet: false       also defer fleet candidates
#pragma once

#include <array>
#include <span>
#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class TimeShift final : public Plugin, public AddCandidatesPlugin {
 public:
  struct Options {
    int max_hours = 24;
    int max_regions = 3;
    int max_run_samples = 24;
    double min_gain = 0.05;
    bool defer_fleet = false;
  };
  static constexpr std::string_view kName = "time_shift";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit TimeShift(Options o);

  std::string_view name() const override { return kName; }
  // Later starts of elastic candidates (the market's); of fleet ones,
  // with defer_fleet, by the clock: asked every time.
  uint32_t WaitInputs(const QueuedJob&) const override {
    return options_.defer_fleet ? kWaitAnything : kWaitMarket;
  }
  void AddCandidates(const CycleContext& ctx, std::span<const Candidate> generated,
                     CandidateSink& sink) const override;

  // The whole-hour shift in 1..max_shift whose mean over `run` consecutive
  // samples of `hourly` (hour 0 = now) is lowest and at least `min_gain` below
  // the mean from hour 0; 0 when none is. `hourly` holds max_shift + run samples.
  static int GreenestShift(std::span<const double> hourly, int run, int max_shift,
                           double min_gain);
  // Hours the job may wait and still finish on on-demand by its deadline
  // (max_hours without a deadline); 0 when it may not wait.
  int Window(const CycleContext& ctx, const Candidate& c) const;

 private:
  void ShiftOne(const CycleContext& ctx, const Candidate& c, RegionId r, CandidateSink& sink) const;
  // Hourly carbon of `r` from now, `hours` samples: memoized while the
  // snapshot's time and market stay the same (a market is deterministic for a
  // given t), so the decisions of one cycle read each region once.
  std::span<const double> Hourly(const CycleContext& ctx, RegionId r, int hours) const;

  static constexpr size_t kCachedRegions = 128;
  static constexpr size_t kMaxSamples = 96;  // max_hours + max_run_samples
  Options options_;
  mutable std::vector<int16_t> slot_of_;  // by region: its cache slot, -1 none
  mutable std::array<RegionId, kCachedRegions> cached_region_{};
  mutable std::array<int, kCachedRegions> cached_hours_{};
  mutable std::vector<double> cached_;  // kCachedRegions x kMaxSamples
  mutable size_t cached_count_ = 0;
  mutable UnixSeconds cached_now_ = 0;
  mutable const MarketView* cached_market_ = nullptr;
  mutable std::vector<double> hourly_;  // scratch when the cache is full
};

}  // namespace meridian::sched
