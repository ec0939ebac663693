// Recorded sample series as CSV (telemetry/testdata/*.csv): one row per GPU
// reading per sample; rows with the same t_s are one sample (its counters from
// the first row). Columns:
//   t_s, cpu_user_s, cpu_system_s, iowait_s, run_delay_s, ctx_vol, ctx_invol,
//   read_bytes, write_bytes, threads, vcpus, gpu, mig_gi, sm_pct, membw_pct,
//   mem_used_mib, mem_total_mib, power_w, job_mem_mib
// An empty gpu column: no GPU reading in that row; an empty figure: kUnknown.
// Lines starting with '#' are comments. `meridian telemetry sample -o csv`
// writes the same columns.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "telemetry/sample.h"

namespace meridian::telemetry {

Result<std::vector<JobSample>> ParseSeriesCsv(const std::string& text, const std::string& source);
Result<std::vector<JobSample>> ReadSeriesCsv(const std::string& path);
std::string SeriesCsvHeader();
std::string SeriesCsvRows(const JobSample& s);  // one line per GPU reading (one without GPUs)

}  // namespace meridian::telemetry
