#include "estimate/plan.h"

#include <algorithm>
#include <cmath>

#include "estimate/defaults.h"
#include "estimate/memory.h"
#include "estimate/options.h"
#include "estimate/run_time.h"
#include "estimate/serving.h"
#include "estimate/throughput.h"

namespace meridian::estimate {

namespace {

std::optional<UnixSeconds> AbsoluteDeadline(const Deadline& d, UnixSeconds at) {
  if (d.at) return *d.at;
  if (d.after_submit_s) return at + *d.after_submit_s;
  return std::nullopt;
}

bool Allowed(const JobSpec& job, const std::string& gpu) {
  const auto& allowed = job.resources.gpu_models;
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), gpu) != allowed.end();
}

std::string AllowedList(const JobSpec& job) {
  std::string out;
  for (const auto& g : job.resources.gpu_models) out += (out.empty() ? "" : ", ") + g;
  return out;
}

// Defaults the planner itself applies (the spec-level ones come from Resolve).
void AddPlanAssumptions(const ResolvedJob& job, const catalog::Catalog& catalog, Plan* plan) {
  const JobSpec& s = job.spec;
  if (s.resources.cpu_fallback && s.resources.cpu_fallback->slowdown > 0) {
    plan->assumptions.push_back({"resources.cpu_fallback", "not priced",
                                 "the catalog has no CPU-only offerings yet; GPU options only"});
  }
  if (s.kind == WorkloadKind::kRealtimeInference && !s.latency.users.empty()) {
    if (!s.latency.slo_ms) {
      plan->assumptions.push_back({"latency.slo_ms", Fixed(kDefaultLatencySloMs, 0),
                                   "default round-trip SLO for real-time services"});
    }
    for (const auto& u : s.latency.users) {
      if (!catalog.FindRegion(u)) {
        plan->assumptions.push_back({"latency.users", u, "not a catalog region; ignored"});
      }
    }
  }
  plan->assumptions.push_back({"energy.pue", "1.0 (not applied)",
                               "energy counts GPU board power x GPUs x hours only"});
}

// Full recomputation is not in the job spec; say where the plan turned it on.
void AddRecomputeAssumption(const ResolvedJob& job, const GpuEstimate& e, Plan* plan) {
  int mb = e.shortfall ? e.shortfall->reduced_micro_batch : job.dims->micro_batch;
  double stored = MemoryAt(job, e.memory.gpus, mb).activations_gib;
  std::string reason = "activations stored in full do not fit " + e.gpu +
                       " at any count; the cheapest fit keeps only each layer's input (" +
                       Fixed(e.memory.activations_gib, 1) + " GiB per GPU instead of " +
                       Fixed(stored, 1) + " at micro_batch " + std::to_string(mb) +
                       ") and re-runs the forward in backward (4 forward passes, not 3: x " +
                       Fixed(kRecomputeComputeFactor, 2) + " GPU-hours)";
  plan->assumptions.push_back({"training.activation_recompute", "full on " + e.gpu, reason});
}

// Where the job runs at another precision than its own on `gpu`, say so.
void AddPrecisionAssumption(const ResolvedJob& job, const GpuEstimate& e, Plan* plan) {
  if (e.throughput.precision == job.precision) return;
  plan->assumptions.push_back(
      {"model.precision", std::string(ToString(e.throughput.precision)) + " on " + e.gpu,
       e.gpu + " has no native " + std::string(ToString(job.precision)) +
           "; the job runs at the nearest precision it has, at that precision's speed and size"});
}

// The replica set of a real-time service on `gpu` (ServiceEstimate): sized
// hour by hour from `at` over the run; nullopt without a model shape.
std::optional<ServiceEstimate> ServiceOn(const ResolvedJob& job, const catalog::GpuModel& gpu,
                                         const catalog::Catalog& catalog, const GpuEstimate& e,
                                         UnixSeconds at) {
  if (job.spec.kind != WorkloadKind::kRealtimeInference || !job.dims) return std::nullopt;
  const ThroughputQuery q = QueryFor(e, e.memory.gpus, ReferenceInterconnect(gpu, catalog));
  Result<ReplicaServing> s = EstimateReplicaServing(job, gpu, catalog, q);
  if (!s.ok()) return std::nullopt;
  ServiceEstimate out;
  out.replica_rps = s->requests_per_s;
  out.request_ms = s->request_s * 1000;
  const Latency& lat = job.spec.latency;
  const auto load_at = [&](int hour) { return ReplicasForLoad(lat.RpsAt(hour), out.replica_rps); };
  out.min_replicas = kMaxServiceReplicas;
  for (int h = 0; h < 24; ++h) {
    const int n = ReplicaSetSize({}, load_at(h));
    out.peak_replicas = std::max(out.peak_replicas, n);
    out.min_replicas = std::min(out.min_replicas, n);
  }
  const double end = static_cast<double>(at) + e.throughput.run_hours * 3600;
  for (double u = static_cast<double>(at); u < end;) {
    const double b = std::min(end, (std::floor(u / 3600) + 1) * 3600);
    const int hour = static_cast<int>(static_cast<int64_t>(u / 3600) % 24);
    out.replica_hours += ReplicaSetSize({}, load_at(hour)) * (b - u) / 3600;
    u = b;
  }
  const int peak_load = ReplicasForLoad(lat.PeakRps(), out.replica_rps);
  out.arithmetic = s->arithmetic + "; ";
  out.arithmetic += lat.has_load() ? "peak " + Fixed(lat.PeakRps(), 1) + " req/s needs " +
                                         std::to_string(std::max(1, peak_load)) + " up"
                                   : "no load: 1 up";
  const AvailabilityTerms terms;
  out.arithmetic += ", a set of " + std::to_string(out.peak_replicas) + " for " + Fixed(terms.target, 3) +
                    " at " + Fixed(terms.zone, 3) + " each (" +
                    std::to_string(out.min_replicas) + "-" + std::to_string(out.peak_replicas) +
                    " by the hour): " + Fixed(out.replica_hours, 1) + " replica-hours over " +
                    Fixed(e.throughput.run_hours, 1) + " h";
  return out;
}

// Fits, times and prices one GPU model (EstimateOnGpu: the run-time model the
// scheduler's queue shares); a non-OK InvalidArgument status means the whole
// job cannot be counted.
Status PlanGpu(const ResolvedJob& job, const catalog::GpuModel& gpu,
               const catalog::Catalog& catalog, const PlanContext& ctx, Plan* plan) {
  if (!Allowed(job.spec, gpu.name)) {
    plan->rejected.push_back({gpu.name, "not in resources.gpu_models (" + AllowedList(job.spec) + ")"});
    return Status::Ok();
  }
  Result<GpuEstimate> e = EstimateOnGpu(job, gpu, catalog);
  if (!e.ok()) {
    if (e.status().code() == StatusCode::kInvalidArgument) return e.status();
    plan->rejected.push_back({gpu.name, e.status().message()});
    return Status::Ok();
  }
  GpuEstimate estimate = std::move(e).value();
  std::optional<ResolvedJob> fallback;
  if (estimate.throughput.precision != job.precision) {
    fallback = AtPrecision(job, estimate.throughput.precision);
  }
  estimate.service = ServiceOn(fallback ? *fallback : job, gpu, catalog, estimate, ctx.at);
  const double slo = job.spec.latency.slo_ms.value_or(kDefaultLatencySloMs);
  if (estimate.service && estimate.service->request_ms > slo) {
    plan->rejected.push_back({gpu.name, "latency: one request takes " + Fixed(estimate.service->request_ms, 1) +
                                            " ms to its first token here, over latency.slo_ms " +
                                            Fixed(slo, 0) + " before any round trip"});
    return Status::Ok();
  }
  OptionSet set = BuildOptions(fallback ? *fallback : job, estimate, catalog, ctx);
  if (set.options.empty()) {
    plan->rejected.push_back({gpu.name, set.refusal});
    return Status::Ok();
  }
  AddPrecisionAssumption(job, estimate, plan);
  if (estimate.memory.recompute == Recompute::kFull) AddRecomputeAssumption(job, estimate, plan);
  plan->estimates.push_back(std::move(estimate));
  for (auto& o : set.options) plan->options.push_back(std::move(o));
  for (const auto& n : set.notes) plan->notes.push_back(gpu.name + ": " + n);
  return Status::Ok();
}

void RejectAll(const catalog::Catalog& catalog, const std::string& reason, Plan* plan) {
  for (const auto& g : catalog.gpus()) plan->rejected.push_back({g.name, reason});
}

void AddDeadlineNote(Plan* plan) {
  if (!plan->deadline || plan->options.empty()) return;
  bool any = std::any_of(plan->options.begin(), plan->options.end(),
                         [](const Option& o) { return o.meets_deadline; });
  if (!any) {
    plan->notes.push_back("no option meets the deadline " + FormatRfc3339(*plan->deadline) +
                          "; the options below finish late, soonest first among equal cost");
  }
}

}  // namespace

Result<Plan> MakePlan(const JobSpec& job, const catalog::Catalog& catalog,
                      const PlanRequest& request) {
  ResolvedJob resolved = Resolve(job);
  Plan plan;
  plan.job = job;
  plan.at = request.at;
  plan.deadline = AbsoluteDeadline(job.deadline, request.at);
  plan.assumptions = resolved.assumptions;
  if (job.resources.gpus && *job.resources.gpus == 0) {
    RejectAll(catalog, "job asks for no GPU (gpus: 0)", &plan);
    plan.rejected.push_back({"*", "no CPU-only offerings are in the catalog yet"});
    return plan;
  }
  AddPlanAssumptions(resolved, catalog, &plan);
  PlanContext ctx{request.at, plan.deadline};
  for (const auto& gpu : catalog.gpus()) {
    Status st = PlanGpu(resolved, gpu, catalog, ctx, &plan);
    if (!st.ok()) {
      plan.estimates.clear();
      plan.options.clear();
      plan.rejected.clear();
      RejectAll(catalog, st.message(), &plan);
      plan.rejected.push_back({"*", st.message()});
      return plan;
    }
  }
  RankOptions(&plan.options);
  CollapseZones(&plan.options);
  AddDeadlineNote(&plan);
  if (request.max_options > 0 && plan.options.size() > request.max_options) {
    plan.options.resize(request.max_options);
  }
  return plan;
}

}  // namespace meridian::estimate
