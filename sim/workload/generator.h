// The workload generator: synthetic job streams shaped like a public cluster
// trace, written as meridian JSONL (docs/trace-format.md) that
// sim::ReadTrace reads back. Calibrated on the published summaries in
// ../shared/data/traces (tables in calibration.inc, from calibrate.py; every
// figure and its source in docs/workload.md):
//   - arrivals: a non-homogeneous Poisson process, the profile's jobs per day
//     times an hour-of-day and a day-of-week cycle;
//   - GPUs per job: the summary's mean and maximum (a truncated geometric over
//     powers of two), or openb's empirical (count, fraction) table for pai;
//   - run time: empirical (Philly) or a log-normal through the summary's
//     median and mean, capped at its maximum;
//   - CPU-only jobs at the summary's share; tenants weighted by capacity.
// Output is a pure function of the options: the same seed gives the same
// bytes on every platform (own PRNG and samplers, integer output).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace meridian::sim {

enum class WorkloadLike { kPhilly, kHelios, kPai, kAcmeSeren };

// "philly" | "helios" | "pai" | "acme-seren".
Result<WorkloadLike> ParseWorkloadLike(std::string_view name);
std::string_view ToString(WorkloadLike like);

struct WorkloadOptions {
  int64_t jobs = 1000;
  uint64_t seed = 1;
  WorkloadLike like = WorkloadLike::kPhilly;
  int tenants = 0;              // 0: the profile's own tenants; N: t0..t(N-1), equal shares
  double deadline_slack = 0;    // > 0: deadline_s = duration x slack, rounded up to the hour
  double preemptible_frac = 0;  // share of jobs marked preemptible, 0..1
  double rate_scale = 1;        // multiplies the arrival rate (> 0)
  std::string gpu_model;        // pins every GPU job to this catalog model; "" = any
};

// What a profile is calibrated to (for docs, tests and --help).
struct WorkloadCalibration {
  double jobs_per_day = 0;    // mean arrival rate over a week
  double cpu_share = 0;       // share of jobs without GPUs
  double mean_gpus = 0;       // over GPU jobs
  double median_gpus = 0;
  int max_gpus = 0;
  double median_run_s = 0;    // GPU jobs
  double mean_run_s = 0;      // GPU jobs (before the cap)
  double max_run_s = 0;
  double fractional_share = 0;  // pai: GPU jobs asking for part of one GPU
  std::vector<double> hourly;   // 24 rate multipliers, mean 1
  std::vector<double> daily;    // 7 rate multipliers, mean 1
  std::string source;           // files the figures come from
};
WorkloadCalibration CalibrationOf(WorkloadLike like);

// Checks `options` (kInvalidArgument naming the option, value and reason).
Status CheckWorkloadOptions(const WorkloadOptions& options);

// Writes options.jobs lines of JSONL to `out`.
Status GenerateWorkload(const WorkloadOptions& options, std::ostream& out);

}  // namespace meridian::sim
