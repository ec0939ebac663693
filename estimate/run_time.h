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
//                     dense TFLOPS x efficiency, decode at memory bandwidth,
//                     plus the communication of its parallel layout), on
//                     nodes of kGpusPerNode over the model's reference
//                     interconnect (parallelism.h, ReferenceInterconnect)
//   SpanFactor        the run-time factor of a count of one node spread over
//                     several nodes or instances (every collective crosses
//                     the network)
//   HoursOverSlowerNetwork  a gang across instances over the instance type's
//                     own network, when slower than the reference: `plan`
//                     leaves the offering out for it, the scheduler too
//   MigRunHours       the run on a MIG slice (memory-slice share for
//                     bandwidth-bound work, compute share 7/g for the rest;
//                     a run of stated duration lasts as long)
//   MigSliceShare     that share, also for resizing a slice (sched/mig_fleet)
//   RecordedRunRatio  how a run recorded on one model scales to another, per
//                     GPU, for the job's kind at each model's precision
//
// Pure functions of their arguments; safe from any thread.
#pragma once

#include <optional>

#include "catalog/catalog.h"
#include "core/status.h"
#include "estimate/defaults.h"
#include "estimate/parallelism.h"
#include "estimate/plan.h"
#include "estimate/throughput.h"

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

// The query behind `e` (its micro-batch, recomputation and slowdown) at `gpus`
// GPUs over `net`; above e's count it keeps e's layout shape (more replicas).
ThroughputQuery QueryFor(const GpuEstimate& e, int gpus, const Interconnect& net);

// Run-time factor of `q.gpus` GPUs (at most one node) spread over several
// nodes or instances, against one node over q.net: every GPU on its own node
// with its share of q.net's network (Gbit/s / gpus_per_node), so no tensor
// parallelism and every collective over the network. 1 past one node (the
// estimate already spans nodes), for one GPU, and for a run of stated duration
// (no work to speed up or slow down); never below 1. `job` at its precision on
// `gpu` (RunPrecision).
double SpanFactor(const ResolvedJob& job, const catalog::GpuModel& gpu,
                  const catalog::Catalog& catalog, const ThroughputQuery& q);

// A gang across `instances` (> 1) instances of `off` pays the instance
// type's own network: its run hours over it, when that is slower than
// `reference_hours` (q's run over q.net, the interconnect the estimate
// assumes, times the SpanFactor of a count of one node spread over
// instances); nullopt when not slower, for one instance, and for a run of
// stated duration. `plan` leaves such an offering out for the count, and the
// scheduler does not generate it (sched::ModelDemand::slow_network).
std::optional<double> HoursOverSlowerNetwork(const ResolvedJob& job, const catalog::GpuModel& gpu,
                                             const catalog::Catalog& catalog,
                                             const ThroughputQuery& q, double reference_hours,
                                             const catalog::Offering& off, int instances);

// The speed of MIG slice `profile` of `gpu` as a share of the whole GPU's,
// slices / of: for bandwidth-bound work (decode, rendering, a low-intensity
// roofline) its memory slices over the GPU's (8 on A100/H100/H200: a slice
// gets that share of the memory bandwidth), for the rest its compute slices
// over 7. The one rule for a run on a slice: MigRunHours, and the
// scheduler's resizing of a slice (sched/mig_fleet.cc, SizeMigByShare).
struct MigShare {
  int slices = 1;
  int of = 1;
};
MigShare MigSliceShare(const catalog::GpuModel& gpu, const catalog::MigProfile& profile,
                       bool bandwidth_bound);

// Whether `e` runs at memory bandwidth (its roofline's memory side), so a
// MIG slice runs it at its memory-slice share.
bool MigBandwidthBound(const GpuEstimate& e);

// Run hours of `e` on MIG slice `profile` of `gpu`: run_hours x of / slices
// (MigSliceShare: x 8/m bandwidth-bound, x 7/g otherwise); a run of stated
// duration lasts as long.
double MigRunHours(const JobSpec& job, const GpuEstimate& e, const catalog::GpuModel& gpu,
                   const catalog::MigProfile& profile);

// How many times longer a run recorded on `recorded` (at `p_recorded`) takes
// on `target` (at `p_target`), per GPU: bandwidth-limited kinds (inference,
// rendering) by memory bandwidth, the rest by effective TFLOPS (dense peak x
// efficiency). 1 for a real-time service (it runs as long as it is needed,
// on any model), and when either model has no rate at its precision.
double RecordedRunRatio(WorkloadKind kind, const catalog::GpuModel& recorded,
                        Precision p_recorded, const catalog::GpuModel& target,
                        Precision p_target);

}  // namespace meridian::estimate
