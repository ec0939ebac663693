// The local backend: runs each attempt as a real process on this machine, in
// its own process group, with the assigned GPUs in CUDA_VISIBLE_DEVICES (or
// MIG instance UUIDs), its stdout/stderr appended to files in the attempt's
// log directory, and MERIDIAN_CHECKPOINT_DIR pointing at a directory that is
// kept across attempts. Stop sends SIGTERM to the group, then SIGKILL after
// the grace period. Commands are exec'd from argv; never through a shell.
//
// Tenant isolation (`tenant_uids` set, which needs root): each tenant's jobs
// run as the tenant's own uid and gid (backends/local/tenant_uids.h). The
// job's own working directory (when the spec names none) and its checkpoint
// directory belong to that uid, mode 0700; its logs stay the daemon's (0600),
// written through descriptors the monitor opens. The daemon's directories
// between `tenant_root` and those directories are made 0711 (others may pass
// through, not list); the ones above `tenant_root` must already let others
// pass (o+x), or the launch fails naming the directory.
//
// The backend runs jobs on its own node only: a request for another node
// (a node registered through the API) is refused.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/common/environment.h"
#include "backends/local/shim.h"
#include "backends/local/tenant_uids.h"
#include "control/backend.h"

namespace meridian::backends {

// serve.yaml's node.max_log_bytes when not given: 100 MiB per job.
inline constexpr int64_t kDefaultMaxLogBytes = int64_t{100} << 20;

struct LocalBackendOptions {
  std::string state_dir;   // where attempt records live (exit status files, ...)
  std::string node_name;   // this machine's node name ("" = hostname)
  // GPUs to declare for scheduling (tests, or machines without NVML): model
  // and count. Empty: none (a CPU node).
  std::string gpu_model;
  int gpus = 0;
  std::optional<int> vcpus;       // default: the machine's online CPUs
  std::optional<double> ram_gib;  // default: the machine's memory
  // Set: run each tenant's jobs as its own uid (the daemon must be root).
  std::optional<TenantUidOptions> tenant_uids;
  std::string tenant_root;  // the daemon's state directory (see above)
  // A usable cgroup v2 directory (backends/local/cgroup.h): each attempt gets
  // a cgroup below it with the request's vcpus and ram_mib as cpu.max and
  // memory.max, and its end kills what is left there. "": no limits.
  std::string cgroup_dir;
  // With the pids controller there too: each attempt's pids.max (tasks,
  // threads included), so that a fork bomb stops in its own cgroup. 0: none.
  int64_t pids_per_job = 0;
  // The clocks (attempts' end times, the fallback kill's grace timer); unset
  // members: the system's.
  BackendEnvironment environment;
  // The most an attempt's stdout.log and stderr.log may hold together,
  // earlier attempts' output included; past it output is dropped and the
  // log says so (shim.h). 0: no cap.
  int64_t max_log_bytes = kDefaultMaxLogBytes;
  // How an attempt's monitor is started; unset: SpawnShim (shim.h). A test
  // injects one to see exactly what a launch asks for, or a failing fork.
  ShimSpawner spawn;
};

std::unique_ptr<control::Backend> MakeLocalBackend(const LocalBackendOptions& options);

// With tenants' uids: whether every directory above `state_dir` lets others
// pass, as their jobs must to reach their directories below it (an error
// naming the first that does not, and its mode). `serve` checks it at start,
// so such a daemon refuses to start instead of failing every launch.
Status CheckTenantsCanReach(const std::string& state_dir);

}  // namespace meridian::backends
