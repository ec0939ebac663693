// Reading /proc/<pid>/stat: a process's state and its start time (clock ticks
// since boot), which together with the pid name one process for its whole
// life: a recycled pid has another start time.
//
// The parser allocates nothing, so the attempt monitor can use it after fork.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace meridian::backends {

struct ProcStat {
  char state = '?';         // R, S, D, Z (zombie), T, ...
  uint64_t start_time = 0;  // field 22
};

// Parses the text of /proc/<pid>/stat. False when it is malformed.
bool ParseProcStat(const char* text, size_t size, ProcStat* out);

// Reads /proc/<pid>/stat with open/read only. False when there is no such
// process (or it cannot be read).
bool ReadProcStat(pid_t pid, ProcStat* out);

// True when `pid` is a live (non-zombie) process started at `start_time`.
bool ProcessAlive(pid_t pid, uint64_t start_time);

}  // namespace meridian::backends
