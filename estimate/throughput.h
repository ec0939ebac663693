// The throughput model: how long a job runs on N GPUs of one model. Compute
// time is FLOPs over (N x dense peak at the job's precision x achievable
// efficiency); memory-bound work (decode, rendering) is bytes over (N x memory
// bandwidth x kMemoryBandwidthEfficiency); a roofline takes the larger.
// Communication is charged on top: a training job with a known shape runs in
// its fastest parallel layout (parallelism.h), its run time x the layout's step
// time over its compute time; inference pays its tensor-parallel all-reduces.
// A precision the GPU lacks natively makes it ineligible.
#pragma once

#include <string>

#include "catalog/catalog.h"
#include "core/status.h"
#include "estimate/defaults.h"
#include "estimate/parallelism.h"
#include "estimate/plan.h"

namespace meridian::estimate {

// The stated achievable fraction of peak for a kind when the catalog has no
// measured figure: 0.75 for training and inference, 0.70 for scientific,
// 0.50 for data science and rendering.
double DefaultEfficiency(WorkloadKind kind);

struct Efficiency {
  double value = 0;
  bool measured = false;
};
// The catalog's measured matmul efficiency (a bf16 measurement, used for
// bf16/fp16) where present, else DefaultEfficiency(kind).
Efficiency ComputeEfficiency(const catalog::GpuModel& gpu, Precision p, WorkloadKind kind);

// Effective TFLOPS of one GPU at `p` for `kind` (peak x efficiency); 0 when
// the precision is not native.
double EffectiveTflops(const catalog::GpuModel& gpu, Precision p, WorkloadKind kind);

// Whether gpu_hours of `kind` scale with memory bandwidth (rendering, decode)
// rather than with compute at the job's precision (training, prefill, rest).
bool BandwidthLimited(WorkloadKind kind);

// GPU-hours on `target` for work measured as `gpu_hours` on `reference`:
// rendering/inference by bandwidth ratio, others by effective-TFLOPS ratio.
// Unresolvable when either GPU lacks the precision.
Result<double> ConvertGpuHours(double gpu_hours, const catalog::GpuModel& reference,
                               const catalog::GpuModel& target, Precision p, WorkloadKind kind);

struct ThroughputQuery {
  int gpus = 1;
  double slowdown = 1;  // from a VRAM shortfall's smaller micro-batch
  // Full recomputation re-runs each layer's forward in backward: training
  // tokens count 8 x P x T FLOPs instead of 6; stated FLOPs and GPU-hours
  // (measured without it) take x kRecomputeComputeFactor.
  Recompute recompute = Recompute::kNone;
  int micro_batch = 0;  // training: the fitted micro-batch; 0 = the job's
  Interconnect net;     // how the GPUs reach each other (ReferenceInterconnect or an offering's)
  std::optional<LayoutShape> keep;  // a count above the fitted one: the fitted layout's shape
};

// Run time of `job` on `q.gpus` GPUs of `gpu`. Unresolvable when the GPU lacks
// the job's precision (per-GPU rejection); InvalidArgument when the job's work
// cannot be counted at all (a whole-job rejection).
Result<ThroughputEstimate> EstimateThroughput(const ResolvedJob& job,
                                              const catalog::GpuModel& gpu,
                                              const catalog::Catalog& catalog,
                                              const ThroughputQuery& q);

}  // namespace meridian::estimate
