// The two files the local backend keeps per attempt in its state directory:
//
//   <job>.<attempt>.run     written by the daemon at launch: which monitor
//                           and which job process the attempt is (pids and
//                           start times), so a restarted daemon can find them.
//   <job>.<attempt>.status  written by the attempt's monitor when the job has
//                           ended: exit code or signal, CPU times, max RSS.
//
// Both are "key value" lines between a magic first line and an "end" last
// line, written to a temporary name and renamed, so a file that reads back
// whole is a complete record.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"

namespace meridian::backends {

inline constexpr char kStatusFileMagic[] = "meridian-attempt-status 1";
inline constexpr char kRunFileMagic[] = "meridian-attempt-run 1";
inline constexpr char kStatusFileEnd[] = "end";

struct AttemptStatus {
  pid_t job_pid = 0;
  uint64_t job_start = 0;
  int exit_code = -1;  // -1: ended by a signal
  int signal = 0;
  int64_t started = 0, ended = 0;  // Unix seconds
  int64_t cpu_user_us = 0, cpu_system_us = 0;
  int64_t max_rss_kib = 0;
  bool stop_requested = false;
  bool killed_after_grace = false;
  int exec_stage = 0;  // ShimStage; 0 when the job ran
  int exec_errno = 0;
};

struct AttemptRun {
  std::string job_id;
  int attempt = 1;
  pid_t shim_pid = 0;
  uint64_t shim_start = 0;
  pid_t job_pid = 0;
  uint64_t job_start = 0;
  int64_t started = 0;
};

// nullopt when the file does not exist (yet); an error when it exists but is
// not a complete record.
Result<std::optional<AttemptStatus>> ReadStatusFile(const std::string& path);
Result<std::optional<AttemptRun>> ReadRunFile(const std::string& path);
Status WriteRunFile(const std::string& path, const AttemptRun& run);

}  // namespace meridian::backends
