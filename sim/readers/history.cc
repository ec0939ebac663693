#include "sim/readers/history.h"

#include <algorithm>
#include <cstdint>

#include "sim/readers/readers.h"

namespace meridian::sim {

int32_t RecordedWait(UnixSeconds submit, UnixSeconds start) {
  return static_cast<int32_t>(std::clamp<int64_t>(start - submit, 0, INT32_MAX));
}

Result<HistoryFile> LoadHistory(const std::string& path, const TraceOptions& options,
                                const catalog::Catalog& catalog) {
  Result<GpuMap> map = GpuMap::Load(options.gpu_map_path, catalog);
  if (!map.ok()) return map.status();
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return HistoryFile{std::move(map).value(), std::move(text).value()};
}

std::string DescribeChoice(const GpuChoice& choice, bool unknown) {
  if (unknown) return "any model (no catalog family; map it with --gpu-map)";
  if (choice.models.empty()) return "any model";
  std::string out;
  for (const std::string& m : choice.models) out += (out.empty() ? "" : " or ") + m;
  return out;
}

void HistoryNotes::SecondZero(const std::string& zero, UnixSeconds first, const std::string& zone) {
  notes_.push_back("second 0 is " + zero + ", " + FormatRfc3339(first) +
                   (zone.empty() ? "" : " (in " + zone + ")") +
                   "; pass --start to align prices and carbon");
}

void HistoryNotes::GpuNames(const std::map<std::string, int64_t>& jobs_by_reading) {
  for (const auto& [how, n] : jobs_by_reading) {
    notes_.push_back("GPUs: " + how + ": " + WithThousands(n) + " jobs");
  }
}

void HistoryNotes::Count(int64_t n, const std::string& what) {
  if (n > 0) notes_.push_back(WithThousands(n) + " " + what);
}

}  // namespace meridian::sim
