// Job cgroups (cgroup v2): the local backend enforces each job's vCPUs and
// RAM with a cgroup of its own, and stops what is left of a job through it.
//
// Detection (DetectCgroupV2) asks for a cgroup2 mount, the cpu and memory
// controllers in the daemon's own cgroup's cgroup.controllers, and a
// writable cgroup.subtree_control there. A v1 or hybrid host (cgroup2
// mounted at /sys/fs/cgroup/unified without controllers, the controllers
// bound to v1 hierarchies) fails it with the reason, and `serve` says at
// start that limits are not enforced.
//
// Layout when usable, under the daemon's cgroup D:
//   D/cgroup.subtree_control   "+cpu +memory" (written once; "+pids" too
//                              where the pids controller is offered)
//   D/meridian-daemon/         the daemon moves itself here: a cgroup v2
//                              parent that hands controllers down may hold no
//                              processes of its own
//   D/<job>.<attempt>/         cpu.max "<vcpus*100000> 100000",
//                              memory.max "<bytes>", pids.max (with the
//                              pids controller: a fork bomb stops there,
//                              not at the host's pid_max), the job's processes
// The job joins its cgroup in the monitor's child before it drops to the
// tenant's uid and execs (it writes "0" to cgroup.procs, which moves the
// writer). The stop writes "1" to cgroup.kill (Linux 5.14+) or, without it,
// SIGKILLs every pid in cgroup.procs.
//
// Paths are plain strings and every access is a file write, so tests run
// against a temporary directory laid out like cgroupfs. Not thread-safe;
// the backend calls it under its lock.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace meridian::backends {

// What detection reads: /proc/self/mounts, /proc/self/cgroup, and where the
// paths of those files are rooted ("" on a real host; a temp dir in tests).
struct CgroupProbe {
  std::string mounts;       // text of /proc/self/mounts
  std::string self_cgroup;  // text of /proc/self/cgroup
  std::string prefix;       // prepended to the mount point
};

struct CgroupSupport {
  bool usable = false;
  bool pids = false;   // the pids controller is offered too (pids.max)
  std::string dir;     // the daemon's cgroup directory (D above) when usable
  std::string reason;  // why not, when not usable
};

// The probe of this process (reads /proc).
CgroupProbe ProbeThisProcess();

CgroupSupport DetectCgroupV2(const CgroupProbe& probe);

// Enables cpu and memory (and pids, with `pids`) for D's children and moves
// the daemon (`pid`) into D/meridian-daemon. Errors name the file and the errno.
Status PrepareCgroupParent(const std::string& dir, int pid, bool pids = false);

// The limits a job's cgroup gets; 0 = not limited ("max").
struct CgroupLimits {
  int vcpus = 0;
  int64_t ram_mib = 0;
  int64_t pids = 0;  // tasks (processes and threads); 0 = pids.max not written
};

// cpu.max's text: "<vcpus * 100000> 100000" (vcpus CPUs' worth of every
// 100 ms period), or "max 100000".
std::string CpuMax(int vcpus);
// memory.max's text: bytes, or "max".
std::string MemoryMax(int64_t ram_mib);

// Creates D/<name> (mode 0700) with the limits written; returns its path.
Result<std::string> CreateJobCgroup(const std::string& dir, const std::string& name,
                                    const CgroupLimits& limits);

// Kills every process of the cgroup at `path`: cgroup.kill when the kernel
// has it, else SIGKILL to each pid of cgroup.procs. Then removes the
// directory if it is empty (a real cgroup's files go with it).
Status KillJobCgroup(const std::string& path);

}  // namespace meridian::backends
