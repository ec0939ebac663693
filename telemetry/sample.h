// Samples: what the telemetry sampler reads at one instant, per job and per
// node. Counters (CPU seconds, bytes, context switches) are cumulative since
// the job's first sample, so a missed sample loses resolution, not work;
// GPU figures are instantaneous (NVML's own averages over its last period).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace meridian::telemetry {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();  // a figure the source does not report
inline bool Known(double v) { return !std::isnan(v); }

// One GPU or one MIG instance, as NVML reports it.
struct GpuReading {
  int index = 0;              // the physical GPU's NVML index (CUDA_VISIBLE_DEVICES order)
  int mig_gi = -1;            // MIG GPU-instance id; -1: the whole GPU
  std::string uuid;           // "GPU-..." or "MIG-..."
  double sm_util_pct = kUnknown;      // % of time a kernel ran (NVML utilization.gpu)
  double mem_bw_util_pct = kUnknown;  // % of time device memory was read or written
  double mem_used_mib = kUnknown;
  double mem_total_mib = kUnknown;
  double power_w = kUnknown;
  double sm_clock_mhz = kUnknown;
  double mem_clock_mhz = kUnknown;
  // Per process, where NVML reports it: the job's own processes' memory and SM share.
  double job_mem_used_mib = kUnknown;
  double job_sm_util_pct = kUnknown;
};

// One job (its process group) at one instant.
struct JobSample {
  int64_t t_ms = 0;            // Unix milliseconds
  double cpu_user_s = 0;       // cumulative, every process of the group
  double cpu_system_s = 0;
  double iowait_s = 0;         // block I/O delay (delay accounting), cumulative
  double run_delay_s = 0;      // time runnable but waiting for a CPU (schedstat)
  uint64_t ctx_voluntary = 0;  // cumulative context switches
  uint64_t ctx_involuntary = 0;
  uint64_t read_bytes = 0;     // storage bytes (/proc/PID/io), cumulative
  uint64_t write_bytes = 0;
  int processes = 0;           // in the group now
  int threads = 0;
  int vcpus = 0;               // the job's allocation; 0: not stated
  std::vector<GpuReading> gpus;  // the job's GPUs or MIG instances; empty: none known
};

// The node at one instant: /proc/loadavg and the cumulative /proc/stat line.
struct NodeSample {
  int64_t t_ms = 0;
  double load1 = 0;
  int online_cpus = 0;
  double cpu_busy_s = 0;    // user+nice+system+irq+softirq+steal, all CPUs
  double cpu_iowait_s = 0;
  double cpu_total_s = 0;   // busy + idle + iowait
};

}  // namespace meridian::telemetry
