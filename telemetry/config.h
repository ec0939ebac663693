// TelemetryConfig: how often the daemon samples and the thresholds the
// classifier decides by. Loaded from the `telemetry:` map of the serve config
// (docs/telemetry.md lists every key); nothing the classifier compares is a
// constant in code.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace YAML {
class Node;
}

namespace meridian::telemetry {

struct Thresholds {
  int64_t window_s = 60;            // the sliding window classified
  int min_samples = 3;              // fewer in the window: "unknown"
  int64_t max_gap_s = 30;           // a longer gap between samples is a missing stretch, not a rate
  double gpu_busy_sm_pct = 60;      // mean SM utilization at or above: the GPU is busy (healthy)
  double gpu_idle_sm_pct = 10;      // below: the GPU is idle
  double mem_bound_bw_pct = 70;     // memory-bandwidth utilization at or above ...
  double mem_bound_sm_below_pct = 80;  // ... while SM utilization is below this: memory-bound
  double cpu_saturated_frac = 0.85; // CPU time / the job's vCPUs at or above: its CPUs are saturated
  double cpu_active_cores = 0.5;    // cores in use at or above: the job computes on its CPUs
  double cpu_idle_cores = 0.05;     // below: the CPUs are idle
  double iowait_dominant_frac = 0.3;  // block-I/O wait seconds per second at or above: I/O dominates
  double run_delay_frac = 0.5;      // run-queue wait seconds per second at or above: CPUs are short
  double target_gpu_sm_pct = 90;    // what a fed GPU reaches (the recommendation's goal)
  double mig_headroom = 1.2;        // memory margin a smaller GPU or a MIG slice must leave
};

struct TelemetryConfig {
  int64_t interval_ms = 5000;       // sampler period
  int64_t store_every_s = 60;       // one compact row per job per this many seconds
  int store_rows_per_job = 1440;    // rows kept per job (a day at one a minute)
  std::string nvml_library = "libnvidia-ml.so.1";
  Thresholds thresholds;
};

// Reads the `telemetry:` map `node` of config file `file` into `out` (keys
// absent keep their defaults). Errors name file:line:column, the key, the
// value and the reason.
Status ParseTelemetryConfig(const YAML::Node& node, const std::string& file, TelemetryConfig* out);

// "500ms", or a duration core's ParseDuration reads ("5s", "2m"), in milliseconds.
Result<int64_t> ParseDurationMs(const std::string& text);

// Checks cross-field rules (idle below busy, ...); the message names the fields.
Status ValidateThresholds(const Thresholds& t, const std::string& prefix = "telemetry.");

}  // namespace meridian::telemetry
