// Retention: what the daemon deletes so that months of service do not fill
// its disk (docs/control-plane.md, "Retention"). Finished jobs (succeeded,
// failed, cancelled) whose end is older than `retention_s` go with everything
// kept of them: events, attempts, utilization rows, idempotency keys, the
// job's directory under the state directory (logs, checkpoint) and what the
// backend keeps (Backend::Retire). Idempotency keys older than
// kIdempotencyKeyTtlS are deleted too (Submit already ignores them).
// Queued and running jobs are never touched: only a finished job has an end.
//
// A sweep deletes at most `batch` jobs in one transaction, so a backlog (the
// first start with retention over a year of jobs) is cleared over
// consecutive reconcile cycles, none of them long; once a sweep finds less
// than a batch, the next waits `sweep_every_s`. The files go first, then the
// rows: a crash in between leaves rows that the next sweep deletes, never
// files that nothing points at.
//
// Threading: called from the reconcile loop only (it calls the backend).
#pragma once

#include <string>

#include "control/backend.h"
#include "control/store.h"
#include "core/status.h"
#include "core/time.h"

namespace meridian::control {

struct RetentionOptions {
  int64_t retention_s = 30 * 86400;  // serve.yaml's `retention`
  int batch = 500;                   // jobs deleted per sweep
  int64_t sweep_every_s = 60;        // between sweeps once nothing is left over
};

class Retention {
 public:
  // `state_dir` holds jobs/<id>/ (Reconciler::LogDir, CheckpointDir).
  Retention(Store* store, Backend* backend, std::string state_dir, RetentionOptions options);

  // Each reconcile cycle: sweeps when one is due; errors go to stderr (the
  // next sweep tries again).
  void RunIfDue(UnixSeconds now);
  // One sweep at `now`: returns how many jobs it deleted.
  Result<int> Sweep(UnixSeconds now);

 private:
  Store* store_;
  Backend* backend_;
  std::string state_dir_;
  RetentionOptions options_;
  UnixSeconds next_sweep_ = 0;
};

}  // namespace meridian::control
