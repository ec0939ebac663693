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
  GpuEstimate e;
  e.gpu = gpu.name;
  e.memory = *fit.memory;
  e.shortfall = fit.shortfall;
  Result<ThroughputEstimate> t = EstimateThroughput(
      on, gpu, catalog, QueryFor(e, e.memory.gpus, ReferenceInterconnect(gpu, catalog)));
  if (!t.ok()) return t.status();
  e.throughput = *t;
  e.mig_profile = fit.mig_profile;
  return e;
}

namespace {

Interconnect SpreadInterconnect(const Interconnect& reference) {
  Interconnect net = reference;
  net.inter_gbit_per_s = reference.inter_gbit_per_s / std::max(1, reference.gpus_per_node);
  net.gpus_per_node = 1;
  net.intra_name = "no intra-node link (one GPU per instance)";
  return net;
}

}  // namespace

ThroughputQuery QueryFor(const GpuEstimate& e, int gpus, const Interconnect& net) {
  ThroughputQuery q;
  q.gpus = gpus;
  q.slowdown = e.shortfall ? e.shortfall->slowdown : 1.0;
  q.recompute = e.memory.recompute;
  q.micro_batch = e.shortfall ? e.shortfall->reduced_micro_batch : 0;
  q.net = net;
  if (gpus > e.memory.gpus) q.keep = e.throughput.shape;
  return q;
}

double SpanFactor(const ResolvedJob& job, const catalog::GpuModel& gpu,
                  const catalog::Catalog& catalog, const ThroughputQuery& q) {
  if (job.spec.work.form == Work::Form::kNone || q.gpus <= 1 || q.gpus > kGpusPerNode) return 1.0;
  Result<ThroughputEstimate> node = EstimateThroughput(job, gpu, catalog, q);
  ThroughputQuery spread = q;
  spread.net = SpreadInterconnect(q.net);
  spread.keep.reset();  // one GPU a node: no tensor parallelism to keep
  Result<ThroughputEstimate> apart = EstimateThroughput(job, gpu, catalog, spread);
  if (!node.ok() || !apart.ok() || node->run_hours <= 0) return 1.0;
  return std::max(1.0, apart->run_hours / node->run_hours);
}

std::optional<double> HoursOverSlowerNetwork(const ResolvedJob& job, const catalog::GpuModel& gpu,
                                             const catalog::Catalog& catalog,
                                             const ThroughputQuery& q, double reference_hours,
                                             const catalog::Offering& off, int instances) {
  if (instances <= 1 || job.spec.work.form == Work::Form::kNone) return std::nullopt;
  ThroughputQuery own = q;
  own.net = OfferingInterconnect(q.net, off);
  if (q.gpus <= kGpusPerNode) {  // as SpanFactor: one GPU a node, its share of the network
    own.net.inter_gbit_per_s /= std::max(1, own.net.gpus_per_node);
    own.net.gpus_per_node = 1;
    own.keep.reset();
  }
  Result<ThroughputEstimate> t = EstimateThroughput(job, gpu, catalog, own);
  if (!t.ok() || t->run_hours <= reference_hours * (1 + 1e-9)) return std::nullopt;
  return t->run_hours;
}

MigShare MigSliceShare(const catalog::GpuModel& gpu, const catalog::MigProfile& profile,
                       bool bandwidth_bound) {
  if (bandwidth_bound) {
    int slices = 0;
    for (const auto& p : gpu.mig_profiles) slices = std::max(slices, p.memory_slices);
    if (slices > 0 && profile.memory_slices > 0) return {profile.memory_slices, slices};
  }
  return {std::max(1, profile.compute_slices), 7};
}

bool MigBandwidthBound(const GpuEstimate& e) { return e.throughput.bound == "memory-bandwidth"; }

double MigRunHours(const JobSpec& job, const GpuEstimate& e, const catalog::GpuModel& gpu,
                   const catalog::MigProfile& profile) {
  const double run_hours = e.throughput.run_hours;
  if (job.work.form == Work::Form::kNone) return run_hours;
  const MigShare share = MigSliceShare(gpu, profile, MigBandwidthBound(e));
  return run_hours * share.of / static_cast<double>(share.slices);
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
