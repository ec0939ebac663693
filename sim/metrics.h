// What a simulation measures: one JobOutcome per trace job, a Timeline of
// time-weighted series (queue length, GPUs running, spend per pricing model),
// GPU-hours by region and hour of day, and the per-policy Summary computed
// from them (the fields of summary.json, docs/simulate.md).
//
// Money is integer micro-dollars and carbon integer grams, rounded once per
// run attempt and then only added, so totals by job, by pricing model and by
// region are equal to the micro-dollar and the gram.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"

namespace meridian::sim {

// How a placement pays, as the reports group spend.
enum class PayKind : uint8_t { kOwned, kReserved, kOnDemand, kSpot, kFlexStart };
inline constexpr int kPayKinds = 5;
std::string_view ToString(PayKind k);  // "owned", "reserved", "on-demand", "spot", "flex-start"

enum class JobState : uint8_t {
  kPending,     // not yet submitted
  kWaiting,     // in the queue
  kHeld,        // placed, start deferred (flex-start wait, time shift)
  kRunning,
  kDone,
  kRejected,    // the scheduler said it can never run (or its spec could not be queued)
  kUnfinished,  // still queued or running when the simulation ran out of events
};
std::string_view ToString(JobState s);

// One job's fate under one policy. Times are seconds from the trace's start;
// -1 when it did not happen.
struct JobOutcome {
  int64_t start_s = -1;      // first run start
  int64_t end_s = -1;        // when it finished
  int64_t cost_micros = 0;   // over every attempt
  int64_t co2_g = 0;
  int64_t gpu_ms = 0;        // GPU-seconds held while running, in thousandths of a GPU
  int64_t lost_gpu_ms = 0;   // of which lost to reclaims and preemption (rework and restarts)
  uint16_t preemptions = 0;  // spot reclaims, node failures, preemptions, flex-start limits
  uint16_t flex_cancels = 0; // flex-start requests cancelled unserved
  // Moves at checkpoints (sim/engine.h): how many, and what they cost: the
  // checkpoints' egress plus the new places' dollars over the restart and
  // transfer (already in cost_micros), and the GPU-seconds of those (in gpu_ms).
  uint16_t moves = 0;
  int64_t move_cost_micros = 0;
  int64_t move_gpu_ms = 0;
  // Where the last attempt ran.
  RegionId region;
  GpuModelId gpu_model;      // invalid on a CPU node
  uint16_t gpus = 0;         // whole GPUs (a MIG slice: 1 with mig_profile set)
  int8_t mig_profile = -1;   // index into the GPU model's mig_profiles
  bool cpu = false;
  // The whole run's seconds on the last placement, as applied (the recorded
  // duration scaled to the model, or the estimator's time; without restarts).
  int64_t run_s = -1;
  PayKind pay = PayKind::kOnDemand;
  // A service run as a replica set (sim/service_replicas.h): one bit per
  // PayKind its replicas were billed at (1 << kind); 0: not a replica set.
  uint8_t replica_pays = 0;
  // Its replicas' billed seconds on on-demand and on spot (a replica set only).
  int64_t replica_on_demand_s = 0, replica_spot_s = 0;
  JobState state = JobState::kPending;

  int64_t JctS(int64_t submit_s) const { return end_s >= 0 ? end_s - submit_s : -1; }
};

// What a job ran on, as jobs.csv's `pricing` says it: the pricing model of
// its last run; a replica set's: every model its replicas were billed at, in
// PayKind order, joined by '+' ("on-demand+spot").
std::string PricingOf(const JobOutcome& o);

// Series over time in buckets of equal width: levels (a step function,
// averaged over each bucket) and amounts spread evenly over an interval.
// The bucket width doubles (merging pairs) whenever more than kMaxBuckets
// would be needed, so any simulated span costs a bounded amount of memory.
class Timeline {
 public:
  static constexpr size_t kMaxBuckets = 512;
  enum Series : int {
    kQueued = 0,      // level: jobs waiting
    kFleetGpus,       // level: fleet GPUs running work (thousandths)
    kCloudGpus,       // level: elastic GPUs running work (thousandths)
    kSpend,           // amounts: micro-dollars, kSpend + PayKind
    kMoves = kSpend + kPayKinds,  // amounts: running jobs moved at checkpoints
    kCount,
  };
  explicit Timeline(int64_t bucket_s = 3600) : width_(bucket_s > 0 ? bucket_s : 3600) {}

  // The level of `s` is `value` from `t` on (t non-decreasing per series).
  void Level(Series s, int64_t t, double value);
  // Adds `amount` to `s`, spread evenly over [a, b) (all at a when b <= a).
  void Spread(Series s, int64_t a, int64_t b, double amount);
  // Closes every level at `t` (the simulation's end).
  void Finish(int64_t t);

  int64_t bucket_s() const { return width_; }
  size_t buckets() const { return sums_.empty() ? 0 : sums_[0].size(); }
  // Levels: the time-weighted mean over bucket i; amounts: the bucket's total.
  double Value(Series s, size_t i) const;

 private:
  void Grow(size_t index);
  void Add(Series s, int64_t a, int64_t b, double per_second);
  int64_t width_;
  std::array<std::vector<double>, kCount> sums_;  // value x seconds for levels; amounts
  std::array<int64_t, kCount> last_t_{};
  std::array<double, kCount> last_v_{};
};

// GPU-hours by region and UTC hour of day ("where work ran when").
class RegionHours {
 public:
  void Add(RegionId r, int64_t a_unix, int64_t b_unix, double gpus);
  // Rows of regions that ran work, by region id.
  const std::vector<std::array<double, 24>>& by_region() const { return hours_; }

 private:
  std::vector<std::array<double, 24>> hours_;
};

// One policy's figures over the jobs every compared policy finished (done
// under each of them), so that averages compare the same job set: a policy
// that rejects or never finishes the slow jobs otherwise looks faster.
struct CommonFigures {
  int64_t jobs = 0;           // done under every policy
  double avg_jct_s = 0;       // end - submit, over those jobs (0 when none)
  double avg_wait_s = 0;      // first start - submit
  int64_t cost_micros = 0;    // their own spend (idle reservations belong to no job)
  int64_t co2_g = 0;
};

// runs[p][i]: job i's outcome under policy p (every run over the same trace,
// so of equal length); submit_s[i]: job i's submission. Returns, per run,
// its CommonFigures over the jobs done in every run.
std::vector<CommonFigures> CommonToAll(const std::vector<const std::vector<JobOutcome>*>& runs,
                                       const std::vector<int64_t>& submit_s);

// summary.json's object for one policy. Optional figures are null when
// nothing qualifies (no deadlines, no real-time services, no fleet).
struct Summary {
  std::string policy;
  int64_t jobs = 0;
  int64_t jobs_done = 0;
  int64_t jobs_rejected = 0;
  int64_t jobs_unfinished = 0;
  double avg_jct_s = 0, p50_jct_s = 0, p99_jct_s = 0, avg_wait_s = 0;
  int64_t makespan_s = 0;
  int64_t cost_micros = 0;
  std::array<int64_t, kPayKinds> cost_by_pricing{};  // reserved includes idle reservations
  std::vector<std::pair<std::string, int64_t>> cost_by_region;  // region id, micro-dollars
  int64_t reserved_idle_micros = 0;  // reservations paid for but not used
  double gpu_hours = 0;
  int64_t co2_g = 0;
  std::optional<double> deadline_met_frac;
  int64_t deadline_jobs = 0;
  int64_t preemptions = 0;
  int64_t flex_cancels = 0;
  double lost_gpu_hours = 0;
  // Moves of running jobs at checkpoints: their count, cost (egress and the
  // restart's and transfer's dollars) and GPU-hours (restart and transfer).
  int64_t migrations = 0;
  int64_t migration_cost_micros = 0;
  double migration_gpu_hours = 0;
  std::optional<double> utilization;   // of owned and reserved capacity
  // Real-time services: service-minutes meeting the SLO over those due
  // (sim/service_slo.h).
  std::optional<double> slo_met_frac;
  // Services run as replica sets (sim/service_replicas.h): spot replicas
  // reclaimed, and their replacements on spot and on-demand.
  int64_t replica_reclaims = 0;
  int64_t replaced_on_spot = 0, replaced_on_demand = 0;
  int64_t events = 0;
  int64_t decisions = 0;
  // MIG (fleets with MIG GPUs; docs/mig.md): drains applied by
  // repartitioning, the GPU-hours of work they lost, and the fragmentation
  // samples' means in memory slices: free, unallocatable by any profile,
  // unallocatable by the waiting jobs' profiles, time-weighted over the run
  // (from its first cycle). nullopt: no MIG GPU.
  int64_t mig_drains = 0;
  double mig_drain_gpu_hours = 0;
  std::optional<double> mig_free_slices, mig_unallocatable_slices, mig_unallocatable_demand_slices;
  // Over the jobs every policy of the comparison finished (CommonToAll; set
  // by the caller that holds all the runs; one policy: its own done jobs).
  CommonFigures common;
  std::vector<std::string> notes;  // the run's notes in full: rejections by reason, counted
};

// The p-th percentile (0..100) of sorted values, nearest rank; 0 when empty.
double Percentile(const std::vector<int64_t>& sorted, double p);

}  // namespace meridian::sim
