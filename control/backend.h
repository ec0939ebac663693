// Backend: where the control plane's decisions run. The daemon's reconcile
// loop decides with the scheduling core, then asks a backend to launch,
// signal, cancel and observe the job's processes; backends never decide
// anything. Implementations: backends/local (processes on this machine) and
// backends/slurm (jobs of a Slurm cluster); Kubernetes follows behind the
// same interface.
//
// Errors say whether trying again may help, by their code (IsTransient):
//   kInvalidArgument, kNotFound, kUnresolvable: permanent. The request itself
//     is wrong or names what the engine does not have (an invalid spec, an
//     unknown partition or node, a program that does not exist, a handle the
//     engine does not know); the same call fails the same way again.
//   kInternal (and any other code): transient. The engine did not answer, or
//     answered that it cannot now (a command that timed out, connection
//     refused, an API server's 5xx, a Slurm controller that does not answer,
//     a fork that failed); the reconciler retries with backoff
//     (BackendRetryPolicy, docs/backends.md "When a backend fails").
//
// Threading: the daemon calls a backend from its reconcile thread only.
// A backend may keep threads of its own (reapers, grace timers).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/time.h"

namespace meridian::control {

// One attempt of one job, as a backend launches it.
struct LaunchRequest {
  std::string job_id;                 // meridian's id, e.g. "j-00000042"
  int attempt = 1;                    // 1 for the first run, +1 on each requeue
  std::string tenant;
  std::vector<std::string> argv;      // the spec's command, exec'd as is (no shell)
  std::map<std::string, std::string> env;  // the spec's env (added to a clean base)
  std::string working_dir;            // "" = the job's own directory under the state dir
  // Devices the scheduler assigned on this node: whole GPUs by index, or MIG
  // instances by UUID (then CUDA_VISIBLE_DEVICES lists the UUIDs). Both empty:
  // a CPU job (CUDA_VISIBLE_DEVICES is set to "").
  std::vector<int> gpus;
  std::vector<std::string> mig_uuids;
  // The MIG instance's profile ("3g.40gb") on gpus[0], for engines that pick
  // the instance themselves (Kubernetes DRA claims it by profile); "" = whole GPUs.
  std::string mig_profile;
  std::string node;                   // fleet node name the decision chose
  std::string checkpoint_dir;         // exported as MERIDIAN_CHECKPOINT_DIR; kept across attempts
  std::string log_dir;                // stdout.log and stderr.log are appended here
  int64_t grace_period_s = 30;        // SIGTERM to SIGKILL
  // What the allocation holds on the node (0: not stated), and when the job
  // must be done: engines with their own accounting (Slurm) are told these.
  int vcpus = 0;
  int64_t ram_mib = 0;
  std::optional<UnixSeconds> deadline;
  // The lease epoch of the leader asking (docs/control-plane.md, "Replicas"):
  // a backend whose state replicas share refuses a launch whose epoch is
  // older than one it has seen (Deposed). 0: not fenced (a SQLite daemon,
  // alone on its database).
  int64_t epoch = 0;
};

enum class RunPhase { kStarting, kRunning, kExited, kKilled, kLost };
std::string_view RunPhaseName(RunPhase p);

// What a backend has seen of one launched attempt.
struct RunObservation {
  std::string job_id;
  int attempt = 1;
  std::string handle;        // backend's id: "pid:<pid>:<starttime>", "slurm:<cluster>:<job id>", ...
  RunPhase phase = RunPhase::kStarting;
  std::optional<int> exit_code;   // kExited
  std::optional<int> signal;      // kKilled: the signal that ended it
  UnixSeconds started = 0;
  UnixSeconds ended = 0;          // 0 while running
  double cpu_user_s = 0, cpu_system_s = 0;
  int64_t max_rss_kib = 0;
  std::string message;            // e.g. "exec failed: No such file or directory"
};

// A node the backend can run on, for the daemon's fleet.
struct BackendNode {
  std::string name;
  std::string gpu_model;     // catalog model, "" for a CPU node
  int gpus = 0;
  int vcpus = 0;
  double ram_gib = 0;
  // The MIG layout of every GPU, as profile names ("3g.40gb", "4g.40gb"), as
  // a fleet node group's `mig:`; empty = whole GPUs.
  std::vector<std::string> mig;
  bool schedulable = true;   // false: drained or down
  std::string reason;        // why not schedulable
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;

  // Starts the attempt; returns its handle (stored by the daemon so that a
  // restarted daemon can Adopt it). The process runs in its own process
  // group (or the engine's equivalent).
  virtual Result<std::string> Launch(const LaunchRequest& request) = 0;
  // Preemption or cancellation: SIGTERM now, SIGKILL after `grace_s` if it
  // is still alive. Returns at once; the end shows up in Poll.
  virtual Status Stop(const std::string& handle, int64_t grace_s) = 0;
  // Every attempt whose phase changed since the last call.
  virtual std::vector<RunObservation> Poll() = 0;
  // After a daemon restart: takes back an attempt launched by an earlier
  // daemon (from its stored handle), or reports it ended/lost.
  virtual Result<RunObservation> Adopt(const std::string& job_id, int attempt,
                                       const std::string& handle) = 0;
  // The capacity this backend offers now.
  virtual std::vector<BackendNode> Nodes() = 0;
  // Retention (control/retention.h): the finished job `job_id`, which ran
  // attempts 1 to `attempts`, is being deleted; drop whatever the backend
  // still keeps of them (attempt files, engine objects). Default: nothing.
  virtual Status Retire(const std::string& job_id, int attempts) {
    (void)job_id;
    (void)attempts;
    return Status::Ok();
  }
  // The handle of attempt `attempt` of `job_id` if the engine has it under
  // the name every launch of that attempt gets (a Slurm job name, a
  // Kubernetes Job name, the local backend's attempt record), nullopt if it
  // has none. For a launch whose handle the daemon did not commit (it
  // stopped between Launch and the commit): found, it is adopted. The
  // default: an engine without such names finds nothing.
  // A new leader's first call, before it adopts or finds anything: launches
  // carrying an epoch below `epoch` are refused (Deposed) from now on, and a
  // launch already under way is waited for, so that its record is found.
  // The default: an engine whose state no replica shares fences nothing.
  virtual Status Fence(int64_t epoch) {
    (void)epoch;
    return Status::Ok();
  }
  virtual Result<std::optional<std::string>> FindLaunched(const std::string& job_id, int attempt) {
    (void)job_id;
    (void)attempt;
    return std::optional<std::string>();
  }
};

// Whether a failed backend call may succeed if made again (see above).
bool IsTransient(const Status& st);

// A launch refused because a newer leader has fenced the backend: the caller
// has been deposed, so it neither retries nor fails the job, and steps down.
// (Header-only, as backends link the core alone.)
inline constexpr std::string_view kDeposedPrefix = "deposed: ";
inline Status Deposed(const std::string& why) {
  return Status::Internal(std::string(kDeposedPrefix) + why);
}
inline bool IsDeposed(const Status& st) {
  return st.code() == StatusCode::kInternal && st.message().starts_with(kDeposedPrefix);
}

// "j-00000042.r2": the name replica 2 of the real-time service j-00000042
// runs under (control/replica_set.h), so that a backend retiring the
// service finds its replicas' attempts too. (Header-only, as above.)
inline constexpr std::string_view kReplicaRunIdMark = ".r";
inline std::string ReplicaRunId(const std::string& job_id, int index) {
  return job_id + std::string(kReplicaRunIdMark) + std::to_string(index);
}
// The service's job id and the replica index of such a name; nullopt for
// any other name.
struct ReplicaRef {
  std::string job_id;
  int index = 0;
};
inline std::optional<ReplicaRef> ParseReplicaRunId(const std::string& run_id) {
  const size_t mark = run_id.rfind(kReplicaRunIdMark);
  if (mark == std::string::npos || mark == 0) return std::nullopt;
  const std::string digits = run_id.substr(mark + kReplicaRunIdMark.size());
  if (digits.empty() || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return ReplicaRef{run_id.substr(0, mark), std::stoi(digits)};
}

// How the reconciler retries backend calls that failed transiently: a launch
// up to `launch_attempts` tries in all, then the job fails with the last
// error; a stop (a cancel or a preemption) until the backend confirms it.
// The wait before try n+1 is initial_backoff_ms * 2^(n-1), at most
// max_backoff_ms. serve.yaml's `backend_retry:` sets it.
struct BackendRetryPolicy {
  int launch_attempts = 5;
  int64_t initial_backoff_ms = 1000;
  int64_t max_backoff_ms = 60000;

  // The wait after the `failures`-th failed try (failures >= 1).
  int64_t BackoffMs(int failures) const;
  // Errors name the field and the allowed range.
  Status Validate() const;
};

}  // namespace meridian::control
