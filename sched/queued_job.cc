#include "sched/queued_job.h"

#include <algorithm>

#include "estimate/defaults.h"
#include "estimate/memory.h"
#include "estimate/pricing.h"
#include "estimate/regions.h"
#include "estimate/throughput.h"

namespace meridian::sched {

GangShape ShapeFor(int gpus, int node_gpus) {
  if (node_gpus <= 0 || gpus <= node_gpus) return {1, std::max(gpus, 0)};
  int nodes = (gpus + node_gpus - 1) / node_gpus;
  return {nodes, (gpus + nodes - 1) / nodes};
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

// The demand on one model, or the estimator's reason it does not fit.
Result<ModelDemand> DemandOn(const estimate::ResolvedJob& r, const catalog::GpuModel& gpu,
                             GpuModelId id, const catalog::Catalog& catalog) {
  if (!gpu.Supports(r.precision)) {
    return Status::Unresolvable(std::string(ToString(r.precision)) +
                                " is not supported natively on " + gpu.name);
  }
  estimate::MemoryFit fit = estimate::FitMemory(r, gpu);
  if (!fit.memory) return Status::Unresolvable(fit.reason);
  double slowdown = fit.shortfall ? fit.shortfall->slowdown : 1.0;
  auto t = estimate::EstimateThroughput(r, gpu, catalog, {fit.memory->gpus, slowdown});
  if (!t.ok()) return t.status();
  ModelDemand d;
  d.model = id;
  d.gpus = static_cast<uint16_t>(fit.memory->gpus);
  d.vram_per_gpu_gib = static_cast<float>(fit.memory->per_gpu_gib);
  d.run_hours = static_cast<float>(t->run_hours);
  d.shortfall = fit.shortfall.has_value();
  if (fit.mig_profile) {
    for (size_t i = 0; i < gpu.mig_profiles.size(); ++i) {
      const catalog::MigProfile& p = gpu.mig_profiles[i];
      if (p.name != *fit.mig_profile) continue;
      d.mig_profile = static_cast<int8_t>(i);
      d.mig_span = static_cast<uint8_t>(PlacementsOf(p).span);
      // Counted work slows with the slice's share of compute; a run of stated
      // duration (a service) lasts as long on a slice.
      d.mig_run_hours = r.spec.work.form == Work::Form::kNone
                            ? d.run_hours
                            : d.run_hours * 7.0f / static_cast<float>(std::max(1, p.compute_slices));
    }
  }
  return d;
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
  q.ram_mib = static_cast<int64_t>(s.resources.ram_gib.value_or(0) * 1024.0);
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

  if (s.preemptible) q.spot_run_multiplier = estimate::SpotRunMultiplier(s);
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
