// An attempt's output, copied from its pod into the job's log directory
// under the log cap (node.max_log_bytes, docs/backends.md "Logs"), so that
// `meridian logs` and GET /v1/jobs/{id}/logs serve a Kubernetes job's output
// as they serve a local or Slurm job's.
//
// The container's stdout and stderr reach meridian merged, as `kubectl logs`
// prints them, and go to <log_dir>/stdout.log. The cap counts stdout.log and
// stderr.log together, earlier attempts' output included, as the local
// relay does: `room` is the cap less what the two files hold. meridian asks
// for room + 1 bytes (`kubectl logs --limit-bytes`), so the API server never
// sends more than the cap; a log that had more is cut after `room` bytes,
// followed by the relay's notice (backends/common/log_cap.h). How much was
// dropped is not known (the server stopped sending), so the local relay's
// "D bytes dropped" line has no counterpart here.
#pragma once

#include <cstdint>
#include <string>

#include "backends/kubernetes/kubectl.h"
#include "core/status.h"

namespace meridian::backends::k8s {

// Whether `dir`, read back from a Job's meridian.dev/log-dir annotation when
// an attempt is adopted, is the daemon's log directory of `run_id`'s job:
// it ends in "/jobs/<job id>/logs" (control's layout; a replica's run id
// "<job>.r<i>" names its service's job) and has no "." or ".." component.
// Anything else is not written to: an annotation is cluster state, and a
// path taken from it on trust would let whoever can edit Jobs pick a file
// for the daemon to append to.
bool IsRunsLogDir(const std::string& dir, const std::string& run_id);

// What stdout.log and stderr.log of `log_dir` may still take under `cap`
// (0 when full); -1 when `cap` is 0 (no cap).
int64_t LogRoom(const std::string& log_dir, int64_t cap);

// Appends the pod log of the Job `job` in `ns` to <log_dir>/stdout.log under
// `cap` (0: none), creating the directory. Errors: kubectl could not be run
// or refused (KubectlFailure's codes), or the file cannot be written.
Status CopyPodLog(const Kubectl& kubectl, const std::string& ns, const std::string& job,
                  const std::string& log_dir, int64_t cap);

}  // namespace meridian::backends::k8s
