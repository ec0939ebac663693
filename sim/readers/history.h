// What the readers of a team's own history (sacct.cc, k8s_jobs.cc) share:
// the input they start from and the notes every such trace carries.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/status.h"
#include "core/time.h"
#include "sim/readers/gpu_map.h"
#include "sim/trace.h"

namespace meridian::sim {

// TraceJob::recorded_wait_s of a job submitted at `submit` that started at
// `start`: the seconds between, 0 when the clocks put the start first, at
// most INT32_MAX.
int32_t RecordedWait(UnixSeconds submit, UnixSeconds start);

// The map of `options.gpu_map_path` (empty without one) and the trace
// file's text.
struct HistoryFile {
  GpuMap map;
  std::string text;
};
Result<HistoryFile> LoadHistory(const std::string& path, const TraceOptions& options,
                                const catalog::Catalog& catalog);

// How a job's GPU names were read, for the notes: "A100-40GB or A100-80GB",
// "any model", or with `unknown` (a name of no catalog family) "any model
// (no catalog family; map it with --gpu-map)".
std::string DescribeChoice(const GpuChoice& choice, bool unknown);

// Notes of a history trace: where second 0 is (`zero` names what it is:
// "the earliest Submit"), how GPU names were read ("<names> -> <models>" ->
// jobs), and counts of what was left out.
class HistoryNotes {
 public:
  explicit HistoryNotes(std::vector<std::string>& notes) : notes_(notes) {}
  void SecondZero(const std::string& zero, UnixSeconds first, const std::string& zone = "");
  void GpuNames(const std::map<std::string, int64_t>& jobs_by_reading);
  // "<n> <what>" when n > 0.
  void Count(int64_t n, const std::string& what);

 private:
  std::vector<std::string>& notes_;
};

}  // namespace meridian::sim
