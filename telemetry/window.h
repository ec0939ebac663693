// WindowFigures: a job's samples over the classifier's sliding window reduced
// to rates and means. Counters become rates over the intervals between
// consecutive samples; an interval longer than max_gap_s (samples missed: the
// daemon was busy, the job was paused) or one whose counters went backwards
// is left out rather than averaged in. GPU figures are means over the samples
// that report them; unknown figures (kUnknown) are skipped.
#pragma once

#include <vector>

#include "telemetry/config.h"
#include "telemetry/sample.h"

namespace meridian::telemetry {

struct WindowFigures {
  int samples = 0;          // in the window
  int intervals = 0;        // between consecutive samples, used for rates
  int gaps = 0;             // intervals left out (longer than max_gap_s)
  double covered_s = 0;     // seconds the used intervals cover
  double cpu_cores = 0;     // (user + system) CPU seconds per second
  double cpu_user_cores = 0, cpu_system_cores = 0;
  double iowait_frac = 0;   // block-I/O wait seconds per second
  double run_delay_frac = 0;  // run-queue wait seconds per second
  double ctx_voluntary_per_s = 0, ctx_involuntary_per_s = 0;
  double read_mb_per_s = 0, write_mb_per_s = 0;
  int vcpus = 0;            // the job's allocation in the latest sample (0: not stated)
  int threads = 0;          // in the latest sample
  double cpu_capacity = 0;  // vcpus, else min(threads, node CPUs), at least 1
  double cpu_saturation = 0;  // cpu_cores / cpu_capacity

  int gpu_devices = 0;      // readings per sample (GPUs or MIG instances), latest
  bool mig = false;         // the readings are MIG instances
  int gpu_samples = 0;      // samples with a known SM figure
  double gpu_sm_pct = kUnknown;     // mean over those samples of the mean over devices
  double gpu_sm_peak_pct = kUnknown;  // the highest sample
  double gpu_busy_share = 0;        // share of those samples at or above gpu_busy_sm_pct
  double gpu_bw_pct = kUnknown;
  double gpu_mem_used_mib = kUnknown;   // the highest, per device
  double gpu_mem_total_mib = kUnknown;  // per device
  double gpu_power_w = kUnknown;        // mean, per device
};

// The figures over the samples of the last `t.window_s` before the latest
// sample. `samples` are oldest first; `node_cpus` caps the thread count as the
// capacity of a job without a vCPU allocation.
WindowFigures ComputeWindow(const std::vector<JobSample>& samples, const Thresholds& t,
                            int node_cpus);

}  // namespace meridian::telemetry
