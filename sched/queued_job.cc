#include "sched/queued_job.h"

#include <algorithm>

#include "estimate/defaults.h"
#include "estimate/memory.h"
#include "estimate/options.h"
#include "estimate/pricing.h"
#include "estimate/regions.h"
#include "estimate/run_time.h"
#include "estimate/serving.h"
#include "estimate/throughput.h"
#include "sched/cost.h"

namespace meridian::sched {

GangShape ShapeFor(int gpus, int node_gpus) {
  if (node_gpus <= 0 || gpus <= node_gpus) return {1, std::max(gpus, 0)};
  int nodes = (gpus + node_gpus - 1) / node_gpus;
  return {nodes, (gpus + nodes - 1) / nodes};
}

std::optional<double> QueuedJob::SpotRunMultiplier(int instances) const {
  if (!spot_run_multiplier) return std::nullopt;
  if (instances <= 1) return spot_run_multiplier;
  return estimate::SpotRunMultiplier(spot_loss_h, instances);
}

const ModelDemand* QueuedJob::DemandFor(GpuModelId m) const {
  for (const ModelDemand& d : demands) {
    if (d.model == m) return &d;
  }
  return nullptr;
}

namespace {

bool Allowed(const JobSpec& job, const std::string& gpu) {
  const auto& a = job.resources.gpu_models;
  return a.empty() || std::find(a.begin(), a.end(), gpu) != a.end();
}

// The offerings of `gpu` that a gang of d.gpus across their instances would
// run slower on than the reference (the options `plan` leaves out).
void AddSlowNetworks(const estimate::ResolvedJob& on, const catalog::GpuModel& gpu,
                     const catalog::Catalog& catalog, const estimate::ThroughputQuery& q,
                     double reference_hours, ModelDemand& d) {
  if (on.spec.work.form == Work::Form::kNone) return;  // a stated duration runs as long anywhere
  const auto& offers = catalog.offerings();
  for (size_t i = 0; i < offers.size(); ++i) {
    const catalog::Offering& o = offers[i];
    if (o.gpu_model != gpu.name || o.gpu_count <= 0) continue;
    const int instances = estimate::InstancesFor(o, d.gpus);
    if (estimate::HoursOverSlowerNetwork(on, gpu, catalog, q, reference_hours, o, instances)) {
      d.slow_network.push_back(OfferingId(static_cast<uint32_t>(i)));
    }
  }
}

// The demand on one model from the estimator's own estimate of it
// (estimate::EstimateOnGpu, which `plan` uses too), or its reason it does
// not fit.
Result<ModelDemand> DemandOn(const estimate::ResolvedJob& r, const catalog::GpuModel& gpu,
                             GpuModelId id, const catalog::Catalog& catalog) {
  Result<estimate::GpuEstimate> e = estimate::EstimateOnGpu(r, gpu, catalog);
  if (!e.ok()) return e.status();
  ModelDemand d;
  d.model = id;
  d.gpus = static_cast<uint16_t>(e->memory.gpus);
  d.precision = e->throughput.precision;
  d.vram_per_gpu_gib = static_cast<float>(e->memory.per_gpu_gib);
  d.run_hours = static_cast<float>(e->throughput.run_hours);
  d.shortfall = e->shortfall.has_value();
  if (e->mig_profile) {
    for (size_t i = 0; i < gpu.mig_profiles.size(); ++i) {
      const catalog::MigProfile& p = gpu.mig_profiles[i];
      if (p.name != *e->mig_profile) continue;
      d.mig_profile = static_cast<int8_t>(i);
      d.mig_span = static_cast<uint8_t>(PlacementsOf(p).span);
      d.mig_run_hours = static_cast<float>(estimate::MigRunHours(r.spec, *e, gpu, p));
      d.mig_bandwidth_bound = estimate::MigBandwidthBound(*e);
    }
  }
  const estimate::ResolvedJob on = estimate::AtPrecision(r, d.precision);
  const estimate::ThroughputQuery q =
      estimate::QueryFor(*e, e->memory.gpus, estimate::ReferenceInterconnect(gpu, catalog));
  d.span_factor = static_cast<float>(estimate::SpanFactor(on, gpu, catalog, q));
  if (r.spec.kind == WorkloadKind::kRealtimeInference && r.dims) {
    Result<estimate::ReplicaServing> s = estimate::EstimateReplicaServing(on, gpu, catalog, q);
    if (s.ok()) {
      d.replica_rps = static_cast<float>(s->requests_per_s);
      d.request_ms = static_cast<float>(s->request_s * 1000);
    }
  }
  AddSlowNetworks(on, gpu, catalog, q, e->throughput.run_hours * d.span_factor, d);
  return d;
}

// Recorded-run ratio of each demand (see ModelDemand).
void AddRecordedRatios(const estimate::ResolvedJob& r, const catalog::Catalog& catalog, QueuedJob& q) {
  const catalog::GpuModel* recorded = catalog.FindGpu(r.spec.work.recorded_on);
  const std::optional<Precision> p_recorded =
      recorded ? estimate::RunPrecision(r, *recorded) : std::nullopt;
  for (ModelDemand& d : q.demands) {
    if (!recorded || !p_recorded) continue;
    const catalog::GpuModel& target = catalog.gpus()[d.model.index()];
    d.recorded_ratio = static_cast<float>(
        estimate::RecordedRunRatio(r.spec.kind, *recorded, *p_recorded, target, d.precision));
  }
}

}  // namespace

Result<QueuedJob> MakeQueuedJob(std::shared_ptr<const JobSpec> spec, const catalog::Catalog& catalog,
                                const EnqueueRequest& req) {
  if (!spec) return Status::Invalid("queued job without a spec");
  const JobSpec& s = *spec;
  QueuedJob q;
  q.id = req.id;
  q.tenant = req.tenant;
  q.submitted = req.submitted;
  q.sequence = req.sequence;
  q.tier = s.priority;
  q.preemptible = s.preemptible;
  q.kind = s.kind;
  if (s.deadline.at) q.deadline = *s.deadline.at;
  else if (s.deadline.after_submit_s) q.deadline = req.submitted + *s.deadline.after_submit_s;
  q.vcpus = s.resources.vcpus.value_or(0);
  q.ram_mib = StatedRamMib(s);
  if (s.resources.cpu_fallback) q.cpu_fallback_slowdown = s.resources.cpu_fallback->slowdown;
  q.cpu_only = s.resources.gpus && *s.resources.gpus == 0;

  estimate::ResolvedJob r = estimate::Resolve(s);
  q.precision = r.precision;
  for (size_t i = 0; i < catalog.gpus().size() && i < kMaxGpuModels; ++i) {
    const catalog::GpuModel& gpu = catalog.gpus()[i];
    if (!Allowed(s, gpu.name)) continue;
    q.allowed_models.set(i);
    if (q.cpu_only || !q.refusal.empty()) continue;
    Result<ModelDemand> d = DemandOn(r, gpu, GpuModelId(static_cast<uint16_t>(i)), catalog);
    if (d.ok()) {
      q.demands.push_back(*d);
    } else if (d.status().code() == StatusCode::kInvalidArgument) {
      q.refusal = d.status().message();  // the work cannot be counted at all
      q.demands.clear();
    } else {
      q.unfit_models.set(i);
    }
  }
  if (!q.refusal.empty()) q.unfit_models = q.allowed_models;
  AddRecordedRatios(r, catalog, q);

  if (s.preemptible) {
    q.spot_run_multiplier = estimate::SpotRunMultiplier(s, 1);
    q.spot_loss_h = estimate::SpotLossHours(s);
  }
  double longest = 0;
  for (const ModelDemand& d : q.demands) longest = std::max<double>(longest, d.run_hours);
  q.flex_refusal = estimate::FlexStartRefusal(s, catalog.market(), {longest, req.submitted, {}});

  for (size_t i = 0; i < catalog.regions().size() && i < kMaxRegions; ++i) {
    if (estimate::ResidencyAllows(s, catalog.regions()[i])) q.allowed_regions.set(i);
  }
  q.data_region = s.data.region.empty() ? RegionId::Invalid() : FindRegionId(catalog, s.data.region);
  q.data_gb = s.data.size_gb;
  for (const auto& u : s.latency.users) {
    RegionId id = FindRegionId(catalog, u);
    if (id.valid()) q.user_regions.push_back(id);
  }
  q.spec = std::move(spec);
  return q;
}

std::string UnfitReason(const QueuedJob& job, GpuModelId m, const catalog::Catalog& catalog) {
  if (!job.refusal.empty()) return job.refusal;
  if (!m.valid() || m.index() >= catalog.gpus().size()) return "unknown GPU model";
  if (!job.allowed_models.test(m.index())) return "not in resources.gpu_models";
  if (job.cpu_only) return "job asks for no GPU (gpus: 0)";
  estimate::ResolvedJob r = estimate::Resolve(*job.spec);
  Result<ModelDemand> d = DemandOn(r, catalog.gpus()[m.index()], m, catalog);
  return d.ok() ? "" : d.status().message();
}

}  // namespace meridian::sched
