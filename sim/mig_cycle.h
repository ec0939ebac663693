// MIG between the engine's scheduling cycles (docs/mig.md, "Repartitioning"):
// on a fleet with repartitionable MIG GPUs, after a cycle leaves MIG jobs
// waiting, the repartition proposals (sched::ProposeMigRepartition) are
// applied: the drained jobs stop, lose their work since the last checkpoint,
// go back to the queue, and the engine runs one more cycle at the same
// instant. A job drained less than an hour ago is not drained again. On any
// fleet with MIG GPUs it also measures fragmentation (sched::
// MeasureMigFragmentation) after every cycle (at most every 15 simulated
// minutes on fleets of more than 4,096 MIG GPUs), as time-weighted means.
//
// Owned by one Engine; not thread-safe.
#pragma once

#include <span>
#include <vector>

#include "core/ledger.h"
#include "sched/fleet.h"
#include "sched/mig_fleet.h"
#include "sched/queued_job.h"
#include "sim/metrics.h"

namespace meridian::sim {

struct MigStats {
  int64_t drains = 0;
  int64_t drain_gpu_s = 0;        // GPU-seconds lost by drained jobs (sched::MigDrain::cost_gpu_s)
  int64_t gpus_repartitioned = 0;
  int64_t samples = 0;            // fragmentation measurements
  int64_t span_s = 0;             // seconds the levels below cover
  // Memory slices x seconds: free, unallocatable by every profile, and by the
  // waiting jobs' profiles (nothing waiting for a slice: none).
  int64_t free_slice_s = 0;
  int64_t unallocatable_any_s = 0;
  int64_t unallocatable_demand_s = 0;
};

class MigCycle {
 public:
  MigCycle(const sched::Fleet& fleet, size_t jobs);
  bool repartitions() const { return repartition_; }
  bool measures() const { return mig_; }
  // The drains to apply at `now` (recorded in stats()); empty when none.
  std::vector<sched::MigDrain> Drains(const Ledger& ledger, std::span<const sched::QueuedJob* const> waiting,
                                      UnixSeconds now, const sched::MigProfileOf& profile_of);
  void Sample(const Ledger& ledger, std::span<const sched::QueuedJob* const> waiting, UnixSeconds now,
              const sched::MigProfileOf& profile_of);
  // Closes the time-weighted levels at the run's end.
  void Close(UnixSeconds end);
  const MigStats& stats() const { return stats_; }

 private:
  const sched::Fleet& fleet_;
  bool repartition_ = false;
  bool mig_ = false;
  std::vector<UnixSeconds> drained_at_;  // by job; 0: never
  int64_t mig_gpus_ = 0;
  UnixSeconds next_sample_ = 0;
  UnixSeconds last_t_ = 0;
  int64_t last_free_ = 0, last_any_ = 0, last_demand_ = 0;
  MigStats stats_;
};

}  // namespace meridian::sim
