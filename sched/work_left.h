// The queued form of a job with part of its work saved: what a requeued
// job, or a running one reconsidered at its checkpoint (sched/move.h), asks
// the scheduler to place. The simulator and the daemon scale a job's
// demands to its work left with this one rule.
#pragma once

#include <algorithm>
#include <vector>

#include "sched/queued_job.h"

namespace meridian::sched {

// `full`'s run hours (whole GPUs and MIG slice) times `left`, the share of
// the work still to do (0..1).
inline void ScaleToWorkLeft(const ModelDemand& full, double left, ModelDemand* out) {
  out->run_hours = static_cast<float>(left * full.run_hours);
  out->mig_run_hours = static_cast<float>(left * full.mig_run_hours);
}

// `full` (a job as queued with all its work) with `done` (0..1) of its work
// saved: QueuedJob::done set and each demand scaled to the work left.
inline QueuedJob WithWorkLeft(const QueuedJob& full, double done) {
  QueuedJob q = full;
  q.done = std::clamp(done, 0.0, 1.0);
  for (size_t i = 0; i < q.demands.size(); ++i) {
    ScaleToWorkLeft(full.demands[i], 1.0 - q.done, &q.demands[i]);
  }
  return q;
}

}  // namespace meridian::sched
