#include "estimate/run_time.h"

#include <algorithm>
#include <vector>

#include "estimate/memory.h"
#include "estimate/throughput.h"

namespace meridian::estimate {

namespace {

// The formats a precision may fall back to, nearest first. fp64 has none:
// scientific codes need its accuracy; fp32 is on every model.
const std::vector<Precision>& FallbacksOf(Precision p) {
  static const std::vector<Precision> none;
  static const std::vector<Precision> bf16 = {Precision::kFp16, Precision::kFp32};
  static const std::vector<Precision> fp16 = {Precision::kBf16, Precision::kFp32};
  static const std::vector<Precision> fp8 = {Precision::kBf16, Precision::kFp16, Precision::kFp32};
  static const std::vector<Precision> int8 = {Precision::kFp16, Precision::kBf16, Precision::kFp32};
  static const std::vector<Precision> tf32 = {Precision::kFp32};
  switch (p) {
    case Precision::kBf16: return bf16;
    case Precision::kFp16: return fp16;
    case Precision::kFp8: return fp8;
    case Precision::kInt8: return int8;
    case Precision::kTf32: return tf32;
    case Precision::kFp32:
    case Precision::kFp64: break;
  }
  return none;
}

bool MayFallBack(const ResolvedJob& job, const catalog::GpuModel& gpu) {
  return !job.spec.model.precision || job.spec.work.recorded_on == gpu.name;
}

}  // namespace

std::optional<Precision> RunPrecision(const ResolvedJob& job, const catalog::GpuModel& gpu) {
  if (gpu.Supports(job.precision)) return job.precision;
  if (!MayFallBack(job, gpu)) return std::nullopt;
  for (Precision p : FallbacksOf(job.precision)) {
    if (gpu.Supports(p)) return p;
  }
  return std::nullopt;
}

std::string PrecisionRefusal(const ResolvedJob& job, const catalog::GpuModel& gpu) {
  if (RunPrecision(job, gpu)) return "";
  std::string why = std::string(ToString(job.precision)) + " is not supported natively on " + gpu.name;
  if (job.spec.model.precision && !FallbacksOf(job.precision).empty()) {
    why += " (model.precision is stated; leave it out to run at the nearest precision " +
           gpu.name + " has)";
  }
  return why;
}

ResolvedJob AtPrecision(const ResolvedJob& job, Precision p) {
  ResolvedJob out = job;
  out.precision = p;
  return out;
}

Result<GpuEstimate> EstimateOnGpu(const ResolvedJob& job, const catalog::GpuModel& gpu,
                                  const catalog::Catalog& catalog) {
  std::optional<Precision> p = RunPrecision(job, gpu);
  if (!p) return Status::Unresolvable(PrecisionRefusal(job, gpu));
  std::optional<ResolvedJob> fallback;
  if (*p != job.precision) fallback = AtPrecision(job, *p);
  const ResolvedJob& on = fallback ? *fallback : job;
  MemoryFit fit = FitMemory(on, gpu);
  if (!fit.memory) return Status::Unresolvable(fit.reason);
  const double slowdown = fit.shortfall ? fit.shortfall->slowdown : 1.0;
  Result<ThroughputEstimate> t =
      EstimateThroughput(on, gpu, catalog, {fit.memory->gpus, slowdown, fit.memory->recompute});
  if (!t.ok()) return t.status();
  GpuEstimate e;
  e.gpu = gpu.name;
  e.memory = *fit.memory;
  e.throughput = *t;
  e.shortfall = fit.shortfall;
  e.mig_profile = fit.mig_profile;
  return e;
}

double SpanFactor(const JobSpec& job, int gpus, int nodes) {
  if (nodes <= 1 || job.work.form == Work::Form::kNone) return 1.0;
  return ScalingEfficiency(gpus) / kInterNodeScaling;
}

double MigRunHours(const JobSpec& job, double run_hours, int compute_slices) {
  if (job.work.form == Work::Form::kNone) return run_hours;
  return run_hours * 7.0 / static_cast<double>(std::max(1, compute_slices));
}

double RecordedRunRatio(WorkloadKind kind, const catalog::GpuModel& recorded,
                        Precision p_recorded, const catalog::GpuModel& target,
                        Precision p_target) {
  if (kind == WorkloadKind::kRealtimeInference) return 1.0;  // a service runs as long as it is needed
  if (BandwidthLimited(kind)) {
    if (target.memory_bandwidth_gbps <= 0) return 1.0;
    return recorded.memory_bandwidth_gbps / target.memory_bandwidth_gbps;
  }
  const double rec = EffectiveTflops(recorded, p_recorded, kind);
  const double tgt = EffectiveTflops(target, p_target, kind);
  if (rec <= 0 || tgt <= 0) return 1.0;
  return rec / tgt;
}

}  // namespace meridian::estimate
