// The data-stall classifier: what a running job's window of samples says about
// where its time goes.
//
//   healthy       the GPU is busy (mean SM utilization >= gpu_busy_sm_pct); a
//                 CPU job: its CPUs compute
//   input-bound   the GPU is below busy while the job's CPUs are saturated,
//                 its processes wait on block I/O, they wait for a CPU on the
//                 run queue, or (GPU idle) the job computes on its CPUs: the
//                 GPU waits for data. A CPU job: its I/O waits dominate
//   memory-bound  memory bandwidth saturated (>= mem_bound_bw_pct) while SM
//                 utilization is not (< mem_bound_sm_below_pct)
//   idle          GPU idle and CPU idle and no I/O wait: stuck or sleeping
//   unknown       too few samples in the window to say
//
// Rules are tried in that order of evidence; each classification carries the
// figures and the thresholds it was decided by. Pure: no clock, no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "telemetry/config.h"
#include "telemetry/window.h"

namespace meridian::telemetry {

enum class JobClass { kUnknown, kHealthy, kInputBound, kMemoryBound, kIdle };
std::string_view ToString(JobClass c);

// Why input-bound: what the GPU waits for.
enum class Stall { kNone, kCpuSaturated, kIoWait, kCpuShort, kCpuCompute };
std::string_view ToString(Stall s);

// One figure compared with its threshold, for the record.
struct Evidence {
  std::string figure;     // "gpu_sm_pct"
  double value = 0;
  std::string op;         // ">=", "<"
  std::string threshold;  // "gpu_busy_sm_pct"
  double limit = 0;
};

struct Classification {
  JobClass job_class = JobClass::kUnknown;
  Stall stall = Stall::kNone;
  std::string summary;              // one line: "GPU 12% busy while 3.9 of 4 vCPUs are saturated"
  std::vector<Evidence> evidence;   // the comparisons that decided it
  WindowFigures figures;
};

Classification Classify(const WindowFigures& w, const Thresholds& t);

}  // namespace meridian::telemetry
