// Trace: a workload to replay, as every trace reader produces it and the
// simulator consumes it. Readers (sim/readers/): Alibaba openb (pods plus its
// node list), Alibaba 2025 DLRM inference (real-time services), meridian's
// own JSONL, and a team's own history: Slurm accounting (`sacct`) and
// Kubernetes Jobs (`kubectl get jobs -o json`) (docs/trace-format.md); the
// workload generator writes JSONL. Jobs of the same shape share one JobSpec, so a million-job trace
// holds a few thousand specs and well under 1 KiB per job (TraceJob is 88
// bytes; sim/readers/sacct_test.cc keeps it so).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/fleet.h"
#include "core/job.h"
#include "core/status.h"
#include "sim/cpu_model.h"

namespace meridian {
namespace catalog {
class Catalog;
}  // namespace catalog
}  // namespace meridian

namespace meridian::sim {

enum class TraceFormat { kOpenb, kDlrm, kJsonl, kSacct, kK8sJobs };

struct TraceJob {
  std::string name;           // unique within the trace
  uint32_t spec = 0;          // index into Trace::specs (the job's shape)
  // The run time the job asked for (Slurm's Timelimit), in seconds; -1: none
  // or unlimited. With one, the scheduler plans the job with it (its
  // expected end, the backfill estimate), as the history's scheduler did,
  // while the job runs its recorded duration_s. 32 bits (68 years) fill the
  // padding after `spec`.
  int32_t time_limit_s = -1;
  int64_t submit_s = 0;       // seconds from the start of the trace
  // Recorded run time: the job runs exactly this long wherever it lands (on
  // the spec's gpu_model when it names one). -1: timed by the estimator.
  int64_t duration_s = -1;
  // Seconds after submit_s by which the job should end; -1: no deadline.
  // (Also in the spec as deadline.after_submit_s; kept here for reports.)
  int64_t deadline_s = -1;
  // Fraction of one GPU a trace recorded for a shared/fractional pod (openb
  // gpu_milli / 1000, in (0, 1)); 0: whole GPUs. Readers set
  // resources.mig in the spec for such jobs.
  float gpu_fraction = 0;
  // A team's history (sacct, k8s-jobs): when the job really started, as
  // seconds after submit_s (the recorded wait); -1: the trace has no
  // recorded start. 32 bits (68 years) fill the padding after
  // gpu_fraction, so the job stays 88 bytes.
  int32_t recorded_wait_s = -1;
  // How the job's speed depends on its vCPUs (sim/cpu_model.h); unset: it
  // runs at its recorded speed whatever vCPUs it gets.
  CpuProfile cpu;
};

struct Trace {
  TraceFormat format = TraceFormat::kJsonl;
  std::string source;                                  // file name, for messages
  std::vector<std::shared_ptr<const JobSpec>> specs;   // distinct shapes
  std::vector<TraceJob> jobs;                          // sorted by (submit_s, file order)
  // A trace that comes with its own cluster (openb's node list) as a fleet;
  // nullopt otherwise. --fleet overrides it.
  std::optional<FleetSpec> fleet;
  // Reader notes for the report: rows skipped and why, mappings applied
  // (e.g. "GPU type G2 -> V100-32GB"), counts.
  std::vector<std::string> notes;
};

// How to read a trace beyond its path and format.
struct TraceOptions {
  std::string nodes_path;  // openb: the node list ("" = the one beside the pod list)
  // sacct, k8s-jobs: a map from the history's GPU names to catalog models
  // (sim/readers/gpu_map.h); "" = names read as catalog models or families.
  std::string gpu_map_path;
  // sacct: the IANA zone its local times are in ("Europe/Berlin", "UTC");
  // "" = the machine's (TZ, else /etc/localtime).
  std::string time_zone;
};

// Reads a trace file (openb: the pod CSV, with the node list found beside it
// or given as `nodes_path`). Errors name the file, line, field, value and
// reason (StatusCode::kInvalidArgument); nothing is silently dropped: skipped
// rows are counted in `notes`. A sacct read sets the process's TZ while it
// runs (sim/readers/local_time.h): do not read local time on other threads
// meanwhile; the other formats touch no process state.
Result<Trace> ReadTrace(const std::string& path, TraceFormat format,
                        const std::string& nodes_path = "");
// As above, checking GPU models and specs against `catalog` (the overload
// above uses the embedded catalog).
Result<Trace> ReadTrace(const std::string& path, TraceFormat format,
                        const catalog::Catalog& catalog, const std::string& nodes_path = "");
Result<Trace> ReadTrace(const std::string& path, TraceFormat format,
                        const catalog::Catalog& catalog, const TraceOptions& options);
// "openb" | "dlrm" | "jsonl" | "sacct" | "k8s-jobs"
Result<TraceFormat> ParseTraceFormat(const std::string& name);

}  // namespace meridian::sim
