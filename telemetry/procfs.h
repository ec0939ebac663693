// ProcFs: the /proc figures the telemetry sampler reads, parsed from a /proc
// tree at a root that tests may point elsewhere (a recorded copy). Every
// reader returns false when the file is missing (the process exited) or
// malformed; none allocates beyond its result.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "telemetry/sample.h"

namespace meridian::telemetry {

// One process's cumulative counters.
struct ProcCounters {
  pid_t pid = 0;
  pid_t pgrp = 0;
  uint64_t start_time = 0;     // clock ticks since boot: names the process with the pid
  double user_s = 0, system_s = 0;
  double blkio_s = 0;          // delayacct_blkio_ticks (0 without delay accounting)
  double run_delay_s = 0;      // /proc/PID/schedstat, second field
  int threads = 0;
  uint64_t ctx_voluntary = 0, ctx_involuntary = 0;
  uint64_t read_bytes = 0, write_bytes = 0;
  bool io_known = false;       // /proc/PID/io was readable
};

// Parses the text of /proc/PID/stat (the command may hold spaces and ')').
bool ParseStat(const std::string& text, double ticks_per_s, ProcCounters* out);
// Adds the context-switch counts of /proc/PID/status.
bool ParseStatus(const std::string& text, ProcCounters* out);
// Adds read_bytes/write_bytes of /proc/PID/io.
bool ParseIo(const std::string& text, ProcCounters* out);
// The node's figures from /proc/stat and /proc/loadavg texts.
bool ParseNode(const std::string& stat, const std::string& loadavg, double ticks_per_s,
               NodeSample* out);

class ProcFs {
 public:
  explicit ProcFs(std::string root = "/proc");
  // Every process whose process group is `pgid`.
  std::vector<pid_t> GroupMembers(pid_t pgid) const;
  bool ReadProcess(pid_t pid, ProcCounters* out) const;
  bool ReadNode(NodeSample* out) const;
  const std::string& root() const { return root_; }

 private:
  std::string root_;
  double ticks_per_s_;
};

}  // namespace meridian::telemetry
