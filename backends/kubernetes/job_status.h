// Reading a Job's state the way meridian tracks attempts: the output of
// `kubectl get job NAME -o json` (a batch/v1 Job with its status) and of
// `kubectl get pods -l batch.kubernetes.io/job-name=NAME -o json` (its pods)
// mapped into control::RunPhase:
//
//   Job condition / status                      phase      exit
//   Complete=True                               exited     0
//   Failed=True, a container terminated         exited     its exit code (128+N: killed by signal N)
//   Failed=True, reason DeadlineExceeded        killed     SIGKILL
//   Suspended=True (meridian's Stop), no active killed     SIGTERM
//   active > 0 and ready > 0                    running
//   otherwise (pods pending, image pulling)     starting
//
// Pure functions over the JSON text; errors (kInvalidArgument) for text that
// is not a Job.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "control/backend.h"
#include "core/status.h"

namespace meridian::backends::k8s {

struct JobState {
  control::RunPhase phase = control::RunPhase::kStarting;
  std::optional<int> exit_code;
  std::optional<int> signal;
  UnixSeconds started = 0;  // status.startTime
  UnixSeconds ended = 0;    // status.completionTime, or the terminal condition's time
  std::string message;      // the terminal condition's reason and message
  // Where the daemon copies the attempt's pod log (pod_logs.h): the Job's
  // kLogDirAnnotation, set at launch so that a restarted daemon adopting
  // the attempt knows it; "" when the Job has none.
  std::string log_dir;
};

inline constexpr char kLogDirAnnotation[] = "meridian.dev/log-dir";

Result<JobState> ParseJobStatus(const std::string& job_json);

// Every Job of a list (`kubectl get jobs -l ... -o json`: a v1 List, or a
// batch/v1 JobList, of Jobs), by name, each as ParseJobStatus reads it.
// Errors (kInvalidArgument) for text that is not such a list.
Result<std::map<std::string, JobState>> ParseJobList(const std::string& list_json);

// The first terminated container's exit code in a pod list, for a failed
// Job's exit status; nullopt when no container has terminated.
Result<std::optional<int>> ParsePodExitCode(const std::string& pods_json);

}  // namespace meridian::backends::k8s
