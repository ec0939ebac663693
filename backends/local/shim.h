// The attempt shim: every attempt runs under a small monitor process forked
// from the daemon. The monitor leaves the daemon's session (setsid), forks the
// job in a new process group, execs its argv directly (a PATH search over
// precomputed candidates, never a shell), and then stays the job's parent:
// it waits for the job, enforces the grace period of a stop request, and
// writes the job's exit status and resource use atomically to a status file.
// So an attempt's end is recorded even when the daemon is gone (killed -9,
// restarting), and a new daemon reads it back (Adopt).
//
// Stop protocol: the daemon sends SIGUSR1 to the monitor with sigqueue(),
// the grace period in seconds as the signal's value; the monitor sends
// SIGTERM to the job's process group at once and SIGKILL when the grace
// period has passed and the job is still alive. When the job's main process
// ends, whatever is left of its process group is SIGKILLed.
//
// Everything the monitor does after fork() is a plain system call on memory
// prepared before the fork (the daemon is multithreaded; malloc and locks are
// off limits in the child).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backends/local/tenant_uids.h"
#include "core/status.h"

namespace meridian::backends {

// What the monitor needs, prepared in the daemon before fork().
struct ShimLaunch {
  std::vector<std::string> argv;
  std::vector<std::string> env;         // "NAME=value"
  std::vector<std::string> exec_paths;  // candidates tried in order (PATH search)
  std::string working_dir;
  std::string stdout_path, stderr_path;  // opened for append
  // The most both logs may hold together, earlier attempts' output included
  // (0: no cap). With a cap the job writes into pipes and the monitor copies
  // to the files; past the cap it drops the output and says so in the log
  // where the cut is, and how many bytes it dropped when the job ends.
  int64_t log_cap_bytes = 0;
  std::string status_path;               // written atomically (via status_path + ".tmp")
  // The attempt's record (status_file.h, AttemptRun), "" = none: the monitor
  // writes it once the job has exec'd and before it tells the daemon, so an
  // attempt that runs always has one, even when the daemon dies before it
  // hears of the start (a restarted daemon finds the attempt by it).
  std::string run_path;
  std::string job_id;
  int attempt = 0;
  // The tenant's identity when the daemon isolates tenants: the job (not the
  // monitor) drops to it before it changes directory and execs, in the order
  // setgroups (none), setgid, setuid, each checked, and then checks that
  // root cannot be taken back. Empty: the job runs as the daemon's user.
  std::optional<TenantIdentity> run_as;
  // The job's cgroup directory (backends/local/cgroup.h), "" = none: the job
  // joins it before it drops privileges, and the monitor's kills also write
  // its cgroup.kill.
  std::string cgroup_dir;
};

// Where the exec of the job failed, if it did.
enum class ShimStage : int32_t {
  kOk = 0,
  kFork = 1,        // the monitor could not fork the job
  kProcessGroup = 2,
  kStdio = 3,
  kWorkingDir = 4,
  kExec = 5,
  kIdentity = 6,  // dropping to the tenant's uid and gid failed
  kCgroup = 7,    // joining the job's cgroup failed
};

struct ShimStarted {
  pid_t shim_pid = 0;
  uint64_t shim_start = 0;  // starttime field of /proc/<pid>/stat
  pid_t job_pid = 0;        // also the job's process group id
  uint64_t job_start = 0;
  int64_t started = 0;      // wall clock, Unix seconds
  ShimStage stage = ShimStage::kOk;
  int error = 0;            // errno of the failed stage
};

// Forks the monitor and waits until the job has exec'd (or failed to).
// Errors: kInternal when the log files or the fork fail. An exec failure is
// not an error here: `stage` and `error` say what failed (the monitor still
// writes a status file and exits; the caller reaps it).
Result<ShimStarted> SpawnShim(const ShimLaunch& launch);
using ShimSpawner = std::function<Result<ShimStarted>(const ShimLaunch&)>;

// The job's PATH search, as execvp does it but over the job's own PATH:
// argv0 with a '/' is used as is; otherwise every PATH entry + "/" + argv0
// ("" entries are the working directory).
std::vector<std::string> ExecCandidates(const std::string& argv0, const std::string& path);

}  // namespace meridian::backends
