// QueuedJob: a job as the scheduler holds it in its queue, with everything a
// decision needs computed ONCE at enqueue from the estimator (estimate/):
// for every allowed GPU model that fits, the GPU count, VRAM per GPU, run
// hours and the smallest MIG slice; the job's tier, absolute deadline,
// preemptibility, allowed regions (data residency) and the regions of its
// data and users. A decision never calls MakePlan or FitMemory.
//
// A QueuedJob is an immutable value once made; the JobSpec it came from is
// shared read-only (plugins read fields the demand does not summarize).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <algorithm>
#include <vector>

#include "catalog/catalog.h"
#include "core/ids.h"
#include "core/job.h"
#include "sched/fleet.h"

namespace meridian::sched {

// The job's need on one GPU model.
struct ModelDemand {
  GpuModelId model;
  uint16_t gpus = 1;             // GPUs the job runs on (estimator's fitted count)
  Precision precision = Precision::kBf16;  // what it computes at on this model (RunPrecision)
  float vram_per_gpu_gib = 0;    // what one GPU must hold
  float run_hours = 0;           // on `gpus` GPUs on one node, before spot rework
  // Run-time factor when the GPUs span several nodes or instances
  // (estimate::SpanFactor); 1 when spanning changes nothing.
  float span_factor = 1;
  // A recorded run time on this model: the recorded one x this (RecordedRunRatio
  // from Work::recorded_on; 1 without a recorded model).
  float recorded_ratio = 1;
  // Smallest MIG profile holding the job (jobs with `mig: true` on one GPU):
  // index into the model's mig_profiles and its span in memory slices; -1/0 none.
  int8_t mig_profile = -1;
  uint8_t mig_span = 0;
  float mig_run_hours = 0;       // on that slice (estimate::MigRunHours): memory-slice
                                 // share when bandwidth-bound, else x 7 / compute slices
                                 // (a run of stated duration: run_hours)
  bool mig_bandwidth_bound = false;  // which share (estimate::MigBandwidthBound)
  bool shortfall = false;        // fits only with a smaller micro-batch (slower)
  // Real-time services with a model shape: one replica (`gpus` GPUs) on this
  // model serves replica_rps requests per second and answers one request in
  // request_ms (estimate::EstimateReplicaServing); 0: unknown.
  float replica_rps = 0;
  float request_ms = 0;
  // Offerings of this model whose network would make the job's gang across
  // their instances slower than run_hours x span_factor assume
  // (estimate::HoursOverSlowerNetwork): not generated when the job spans
  // instances, as `plan` leaves them out. Sorted.
  std::vector<OfferingId> slow_network;
  bool SlowNetwork(OfferingId o) const {
    return !slow_network.empty() && std::binary_search(slow_network.begin(), slow_network.end(), o);
  }
};

// How many nodes and GPUs per node a job of `gpus` GPUs takes on nodes of
// `node_gpus` GPUs: one node when it fits, else equal shares on
// ceil(gpus / node_gpus) nodes (12 GPUs on 8-GPU nodes: 2 x 6).
struct GangShape {
  int nodes = 1;
  int gpus_per_node = 1;
};
GangShape ShapeFor(int gpus, int node_gpus);

struct QueuedJob {
  JobId id;
  TenantId tenant;
  std::shared_ptr<const JobSpec> spec;
  Priority tier = Priority::kNormal;
  UnixSeconds submitted = 0;
  uint64_t sequence = 0;                 // trace order, breaks equal submission times
  std::optional<UnixSeconds> deadline;   // absolute
  bool preemptible = false;
  WorkloadKind kind = WorkloadKind::kTraining;
  Precision precision = Precision::kBf16;
  bool cpu_only = false;                 // gpus: 0
  int vcpus = 0;                         // whole job; 0 = not stated
  int64_t ram_mib = 0;                   // whole job; 0 = not stated
  double cpu_fallback_slowdown = 0;      // 0 = no CPU fallback

  std::vector<ModelDemand> demands;      // fitting allowed models, catalog order
  // Share of the work already done and saved (0..1): a requeued job's
  // demands hold the run hours of what is left (the simulator's SetWork).
  double done = 0;
  GpuModelSet allowed_models;            // resources.gpu_models (all when empty)
  GpuModelSet unfit_models;              // allowed, but the estimator rejected them
  std::string refusal;                   // whole-job refusal (work not countable), or ""

  // Pricing-model rules that do not change while the job waits.
  // Spot's run-time factor on one instance; nullopt: no spot (not
  // preemptible, or refused). SpotRunMultiplier(n) for n instances.
  std::optional<double> spot_run_multiplier;
  double spot_loss_h = 0;                // hours lost per reclaim (estimate::SpotLossHours)
  std::string flex_refusal;              // "" = flex-start may carry it (deadline aside)

  RegionSet allowed_regions;             // data residency (all when none stated)
  RegionId data_region;                  // invalid: no input data
  double data_gb = 0;
  std::vector<RegionId> user_regions;    // real-time services' users

  const ModelDemand* DemandFor(GpuModelId m) const;
  // Spot's run-time factor on `instances` instances, each reclaimed on its
  // own (estimate::SpotRunMultiplier); nullopt: no spot.
  std::optional<double> SpotRunMultiplier(int instances) const;
};

struct EnqueueRequest {
  JobId id;
  TenantId tenant;
  UnixSeconds submitted = 0;
  uint64_t sequence = 0;
};

// Builds the queued form of `spec`. The spec must have passed
// spec::ValidateAgainstCatalog; models that do not fit are recorded in
// unfit_models (their reasons come from UnfitReason when explained).
Result<QueuedJob> MakeQueuedJob(std::shared_ptr<const JobSpec> spec, const catalog::Catalog& catalog,
                                const EnqueueRequest& request);

// Why the estimator rejects model `m` for the job (re-derived; for explanations).
std::string UnfitReason(const QueuedJob& job, GpuModelId m, const catalog::Catalog& catalog);

}  // namespace meridian::sched
