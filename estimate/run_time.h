// The one model of how long a job runs on a GPU model. `plan` (MakePlan and
// its options), the scheduler's queue (sched::MakeQueuedJob, and so
// `plan --fleet`, `simulate` and `serve`) and the simulator's recorded run
// times all take their hours from here, so no path can drift from another:
//
//   RunPrecision      the precision the job computes at on a model: its own
//                     where native; else a 16-bit or 8-bit format falls back
//                     to the nearest the model has (bf16 -> fp16 -> fp32,
//                     fp8 -> bf16 -> fp16 -> fp32, int8 -> fp16 -> bf16 ->
//                     fp32, tf32 -> fp32, fp16 -> bf16 -> fp32) when the
//                     precision was the kind's default, or on the model the
//                     job's run time was recorded on (it ran there). A stated
//                     precision elsewhere, and fp64, never fall back.
//   EstimateOnGpu     memory fit and run hours on the fitted count, at that
//                     precision (the estimator's roofline: compute-bound at
//                     dense TFLOPS x efficiency, decode at memory bandwidth)
//   SpanFactor        the run-time factor of a count spread over several
//                     nodes or instances (inter-node scaling)
//   MigRunHours       the run on a MIG slice (compute share 7/g for counted
//                     work; a run of stated duration lasts as long)
//   RecordedRunRatio  how a run recorded on one model scales to another, per
//                     GPU, for the job's kind at each model's precision
//
// Pure functions of their arguments; safe from any thread.
#pragma once

#include <optional>

#include "catalog/catalog.h"
#include "core/status.h"
#include "estimate/defaults.h"
#include "estimate/plan.h"

namespace meridian::estimate {

// The precision `job` computes at on `gpu`; nullopt when it cannot run there.
std::optional<Precision> RunPrecision(const ResolvedJob& job, const catalog::GpuModel& gpu);

// Why `job` cannot run on `gpu` for want of a precision ("" when it can).
std::string PrecisionRefusal(const ResolvedJob& job, const catalog::GpuModel& gpu);

// `job` at precision `p` (a copy: memory and speed follow the precision).
ResolvedJob AtPrecision(const ResolvedJob& job, Precision p);

// The estimate of `job` on `gpu`: the precision it runs at there, its memory
// fit and its run hours on the fitted count. Unresolvable with the reason when
// the model cannot run it (precision, memory); InvalidArgument when the work
// cannot be counted at all (a whole-job refusal).
Result<GpuEstimate> EstimateOnGpu(const ResolvedJob& job, const catalog::GpuModel& gpu,
                                  const catalog::Catalog& catalog);

// Run-time factor of `gpus` GPUs spread over `nodes` nodes or instances:
// the count's ScalingEfficiency assumed one node up to kGpusPerNode GPUs;
// separate nodes scale as kInterNodeScaling does. 1 for one node, and for a
// run of stated duration (no work to speed up or slow down).
double SpanFactor(const JobSpec& job, int gpus, int nodes);

// Run hours on a MIG slice of `compute_slices` sevenths of the GPU, for a run
// of `run_hours` on the whole GPU.
double MigRunHours(const JobSpec& job, double run_hours, int compute_slices);

// How many times longer a run recorded on `recorded` (at `p_recorded`) takes
// on `target` (at `p_target`), per GPU: bandwidth-limited kinds (inference,
// rendering) by memory bandwidth, the rest by effective TFLOPS (dense peak x
// efficiency). 1 for a real-time service (it runs as long as it is needed,
// on any model), and when either model has no rate at its precision.
double RecordedRunRatio(WorkloadKind kind, const catalog::GpuModel& recorded,
                        Precision p_recorded, const catalog::GpuModel& target,
                        Precision p_target);

}  // namespace meridian::estimate
