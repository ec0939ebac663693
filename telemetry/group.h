// GroupCounters: one job's cumulative CPU and I/O counters over its process
// group. Processes come and go (a data loader's workers, a restart of a
// child); each sample adds every member's growth since that member's last
// sample, so the totals never go backwards when a process exits and a new pid
// never counts another process's past. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <map>

#include "telemetry/procfs.h"
#include "telemetry/sample.h"

namespace meridian::telemetry {

class GroupCounters {
 public:
  explicit GroupCounters(pid_t pgid) : pgid_(pgid) {}

  // Reads the group now and returns its totals stamped `t_ms` (without GPUs).
  JobSample Sample(const ProcFs& fs, int64_t t_ms);
  pid_t pgid() const { return pgid_; }
  // The pids seen in the last sample (for per-process GPU attribution).
  std::vector<pid_t> pids() const;

 private:
  pid_t pgid_;
  std::map<pid_t, ProcCounters> last_;  // by pid, the members of the last sample
  JobSample total_;
};

}  // namespace meridian::telemetry
