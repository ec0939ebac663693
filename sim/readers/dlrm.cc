// The Alibaba 2025 DLRM inference reader (cluster-trace-gpu-v2025): each
// instance becomes a real-time inference service. docs/trace-format.md says
// how each column maps and how instances cut by the trace window are timed.
#include <algorithm>
#include <cmath>
#include <limits>

#include "catalog/csv.h"
#include "sim/readers/readers.h"
#include "spec/spec.h"

namespace meridian::sim {

namespace {

// NaN or empty: outside the trace window.
bool Absent(const std::string& text) {
  if (text.empty()) return true;
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "nan";
}

std::optional<double> NonNegative(const catalog::CsvRecord& rec, std::string_view column,
                                  ErrorList& errors) {
  const std::string& text = rec.Text(column);
  std::optional<double> v = catalog::ParseDouble(text);
  if (!v || *v < 0 || !std::isfinite(*v)) {
    errors.Add(rec.line(), column, "\"" + text + "\"", "must be a number >= 0");
    return std::nullopt;
  }
  return v;
}

// Times past this (about 31.7 million years) are refused rather than
// rounded into int64_t and subtracted.
constexpr double kMaxSeconds = 1e15;

// A time column in whole seconds: -2 when absent, -1 after reporting a bad
// value.
int64_t TimeOf(const catalog::CsvRecord& rec, std::string_view column, ErrorList& errors) {
  if (Absent(rec.Text(column))) return -2;
  std::optional<double> v = NonNegative(rec, column, errors);
  if (v && *v > kMaxSeconds) {
    errors.Add(rec.line(), column, "\"" + rec.Text(column) + "\"",
               "must be at most 1e15 seconds");
    return -1;
  }
  return v ? std::llround(*v) : -1;
}

struct DlrmCounts {
  int64_t before_start = 0;  // created before the trace window
  int64_t after_end = 0;     // still running at its end
  int64_t whole_window = 0;  // both
  int64_t negative = 0;
  int64_t cpu = 0;
  int64_t gpu = 0;
};

}  // namespace

Status ReadDlrm(const std::string& path, const catalog::Catalog& catalog, Trace& trace) {
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  Result<catalog::CsvTable> table = catalog::CsvTable::Parse(path, *text);
  if (!table.ok()) return Status::Invalid(table.status().message());
  if (Status s = table->RequireColumns({"instance_sn", "role", "app_name", "cpu_request",
                                        "gpu_request", "rdma_request", "memory_request",
                                        "max_instance_per_node", "creation_time",
                                        "scheduled_time", "deletion_time"});
      !s.ok()) {
    return Status::Invalid(s.message());
  }
  ErrorList errors(path);
  int64_t window_end = 0;
  for (const catalog::CsvRow& row : table->rows()) {
    catalog::CsvRecord rec(*table, row);
    for (const char* c : {"creation_time", "scheduled_time", "deletion_time"}) {
      window_end = std::max(window_end, TimeOf(rec, c, errors));
    }
  }
  if (!errors.ok()) return errors.ToStatus();
  SpecTable specs(&trace.specs);
  DlrmCounts counts;
  for (const catalog::CsvRow& row : table->rows()) {
    catalog::CsvRecord rec(*table, row);
    std::optional<double> cpu = NonNegative(rec, "cpu_request", errors);
    std::optional<double> gpu = NonNegative(rec, "gpu_request", errors);
    std::optional<double> mem = NonNegative(rec, "memory_request", errors);
    if (!cpu || !gpu || !mem) continue;
    if (*gpu != std::floor(*gpu) || *gpu > 16) {
      errors.Add(rec.line(), "gpu_request", "\"" + rec.Text("gpu_request") + "\"",
                 "must be a whole number of GPUs, 0-16");
      continue;
    }
    if (std::ceil(*cpu) > std::numeric_limits<int>::max()) {
      errors.Add(rec.line(), "cpu_request", "\"" + rec.Text("cpu_request") + "\"",
                 "must be at most 2147483647 vCPUs");
      continue;
    }
    const int64_t created = TimeOf(rec, "creation_time", errors);
    const int64_t scheduled = TimeOf(rec, "scheduled_time", errors);
    const int64_t deleted = TimeOf(rec, "deletion_time", errors);
    if (created == -1 || scheduled == -1 || deleted == -1) continue;
    const int64_t submit = created >= 0 ? created : 0;
    const int64_t start = scheduled >= 0 ? scheduled : submit;
    const int64_t end = deleted >= 0 ? deleted : window_end;
    if (end < start) {
      ++counts.negative;
      continue;
    }
    counts.before_start += created < 0 && deleted >= 0 ? 1 : 0;
    counts.after_end += created >= 0 && deleted < 0 ? 1 : 0;
    counts.whole_window += created < 0 && deleted < 0 ? 1 : 0;
    const int gpus = static_cast<int>(*gpu);
    (gpus > 0 ? counts.gpu : counts.cpu) += 1;
    const std::string& app = rec.Text("app_name");
    const std::string& per_node = rec.Text("max_instance_per_node");
    const std::string key = app + "|" + rec.Text("role") + "|" + rec.Text("cpu_request") + "|" +
                            rec.Text("gpu_request") + "|" + rec.Text("memory_request") + "|" +
                            rec.Text("rdma_request") + "|" + per_node;
    int64_t index = specs.Find(key);
    if (index < 0) {
      JobSpec spec;
      spec.name = rec.Text("instance_sn");
      spec.tenant = "dlrm";
      spec.kind = WorkloadKind::kRealtimeInference;
      spec.priority = Priority::kHigh;  // README: latency-sensitive, high-priority
      spec.resources.gpus = gpus;
      if (*cpu > 0) spec.resources.vcpus = static_cast<int>(std::ceil(*cpu));
      if (*mem > 0) spec.resources.ram_gib = *mem;
      spec.labels["app"] = app;
      spec.labels["role"] = rec.Text("role");
      if (per_node != "-1") spec.labels["max_instance_per_node"] = per_node;
      spec.labels["rdma_pct"] = rec.Text("rdma_request");
      spec.origin.source = path;
      spec.origin.path = "line " + std::to_string(rec.line());
      if (Status s = spec::ValidateAgainstCatalog(spec, catalog, 0); !s.ok()) {
        errors.Add(rec.line(), "", "", s.message());
        continue;
      }
      index = specs.Add(key, std::move(spec));
    }
    TraceJob job;
    job.name = rec.Text("instance_sn");
    job.spec = static_cast<uint32_t>(index);
    job.submit_s = submit;
    job.duration_s = end - start;
    trace.jobs.push_back(std::move(job));
  }
  if (!errors.ok()) return errors.ToStatus();
  auto& n = trace.notes;
  n.push_back(WithThousands(counts.gpu) + " GPU services (HN) and " + WithThousands(counts.cpu) +
              " CPU services (CN); GPU model not disclosed (any model)");
  n.push_back("trace window: 0.." + WithThousands(window_end) + " s (the last time in the file)");
  n.push_back(WithThousands(counts.whole_window) +
              " instances span the whole window (no times): submitted at 0, run to its end");
  n.push_back(WithThousands(counts.before_start) +
              " instances created before the window: submitted at 0, run until deletion_time");
  n.push_back(WithThousands(counts.after_end) +
              " instances still running at the window's end: their duration stops there");
  if (counts.negative > 0) {
    n.push_back("skipped " + WithThousands(counts.negative) +
                " instances whose deletion_time is before scheduled_time");
  }
  n.push_back("no latency figures in the trace: latency.slo_ms left unset");
  return Status::Ok();
}

}  // namespace meridian::sim
