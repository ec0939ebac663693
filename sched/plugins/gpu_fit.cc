#include "sched/plugins/gpu_fit.h"

#include "estimate/defaults.h"
#include "sched/gang.h"
#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> GpuFit::Create(PluginArgs& args) {
  Options o;
  o.allow_gangs = args.Bool("allow_gangs", o.allow_gangs);
  o.max_gang_nodes = static_cast<int>(args.Integer("max_gang_nodes", o.max_gang_nodes, 1, 64));
  return FinishPlugin<GpuFit>(args, o);
}

PreFilterResult GpuFit::PreFilter(const CycleContext& ctx, CycleState&) const {
  const QueuedJob& job = ctx.job();
  PreFilterResult r;
  if (!job.refusal.empty()) {
    r.status = Status::Unresolvable(job.refusal);
    return r;
  }
  if (job.cpu_only || (job.demands.empty() && job.cpu_fallback_slowdown > 0)) return r;
  if (job.demands.empty()) {
    std::string why = "no allowed GPU model fits the job";
    if (ctx.explain() == ExplainLevel::kFull) {
      size_t shown = 0;
      for (size_t m = 0; m < ctx.catalog().gpus().size() && shown < 3; ++m) {
        if (!job.unfit_models.test(m)) continue;
        why += (shown++ == 0 ? ": " : "; ") + ctx.catalog().gpus()[m].name + ": " +
               UnfitReason(job, GpuModelId(static_cast<uint16_t>(m)), ctx.catalog());
      }
      if (job.unfit_models.count() > shown) {
        why += "; and " + std::to_string(job.unfit_models.count() - shown) + " more";
      }
    }
    r.status = Status::Unresolvable(why);
    return r;
  }
  GpuModelSet fitting;
  for (const ModelDemand& d : job.demands) fitting.set(d.model.index());
  r.models = fitting;
  return r;
}

// What depends on the GPU model alone (allowed, precision), asked once per
// model in a Filter call rather than once per candidate.
std::string_view GpuFit::ModelReject(const CycleContext& ctx, GpuModelId model) const {
  const QueuedJob& job = ctx.job();
  if (!job.allowed_models.test(model.index())) return "GPU model not in resources.gpu_models";
  // The estimator gave each model it fits a demand, at a precision the model
  // computes natively (estimate::RunPrecision); a model without one does not
  // fit the job (no precision it may run at, or too little memory).
  if (!job.DemandFor(model)) return "the job does not fit this GPU model (precision or memory)";
  return "";
}

std::string_view GpuFit::Reject(const CycleContext& ctx, const Candidate& c,
                                ModelMemo* memo) const {
  if (c.kind == CandidateKind::kCpuNode) return "";
  const QueuedJob& job = ctx.job();
  if (c.demand >= job.demands.size()) return "no GPU demand for this candidate";
  const ModelDemand& d = job.demands[c.demand];
  const catalog::Catalog& cat = ctx.catalog();
  GpuModelId model;
  if (c.kind == CandidateKind::kElastic) {
    const OfferingFacts facts = ctx.offering(c.offering);
    model = facts.model;
    if (model != d.model) return "offering's GPU model is not the demand's";
    if (c.instances * facts.gpu_count < d.gpus) return "too few GPUs in the offering";
    // Each spot instance is reclaimed on its own: past some count a gang's
    // rework is half its run or more (estimate::SpotRunMultiplier).
    if (c.pricing == PricingModel::kSpot && c.instances > 1 && !job.SpotRunMultiplier(c.instances)) {
      return "spot: this many instances would be reclaimed too often (rework half the run or more)";
    }
    if (c.instances > 1 && (!options_.allow_gangs || c.instances > options_.max_gang_nodes)) {
      return c.instances > 1 && !options_.allow_gangs ? "multi-node placements are not allowed"
                                                      : "spans more instances than max_gang_nodes";
    }
  } else {
    model = ctx.fleet().node(c.node).gpu_model;
    if (model != d.model) return "node's GPU model is not the demand's";
  }
  // What depends on the model (and so on the demand: one per model) alone.
  const size_t m = model.index();
  const catalog::GpuModel& gpu = cat.gpus()[m];
  // A stated vram_gib may use all of the memory; a modelled need leaves headroom.
  auto stated = [&] { return job.spec && job.spec->resources.vram_gib.has_value(); };
  auto whole_why = [&]() -> const char* {
    double usable = stated() ? gpu.vram_gib : gpu.vram_gib * estimate::kVramHeadroom;
    return usable < d.vram_per_gpu_gib ? "too little VRAM per GPU" : "";
  };
  const char* whole = "";
  if (memo == nullptr || m >= kMaxGpuModels) {
    if (std::string_view why = ModelReject(ctx, model); !why.empty()) return why;
    whole = whole_why();
  } else {
    if (!memo->known.test(m)) {
      memo->why[m] = ModelReject(ctx, model).data();  // string literals
      memo->whole[m] = whole_why();
      memo->known.set(m);
    }
    if (*memo->why[m] != '\0') return memo->why[m];
    whole = memo->whole[m];
  }
  if (c.kind == CandidateKind::kMigSlice) {
    if (c.mig_profile >= gpu.mig_profiles.size()) return "unknown MIG profile";
    double mem = gpu.mig_profiles[c.mig_profile].memory_gib;
    double usable = stated() ? mem : mem * estimate::kVramHeadroom;
    if (d.mig_profile < 0) return "job does not allow MIG (resources.mig)";
    if (usable < d.vram_per_gpu_gib) return "MIG slice has too little memory";
    return "";
  }
  if (c.kind == CandidateKind::kElastic) return "";
  if (*whole != '\0') return whole;
  std::span<const NodeId> members = ctx.members(c);
  const Node& first = ctx.fleet().node(members[0]);
  if (c.gpus_per_node > first.gpus) return "more GPUs per node than the node has";
  if (static_cast<int>(members.size()) * c.gpus_per_node < d.gpus) return "too few GPUs";
  if (members.size() > 1) {
    // A real-time service's replica set (every member holds the whole demand,
    // realtime_replicas) may span clusters: they are its failure domains.
    const bool replica_set =
        job.kind == WorkloadKind::kRealtimeInference && c.gpus_per_node >= d.gpus;
    if (!options_.allow_gangs) return "multi-node placements are not allowed";
    if (static_cast<int>(members.size()) > options_.max_gang_nodes) {
      return "spans more nodes than max_gang_nodes";
    }
    const GangRule::Broken broken = CheckGangMembers(ctx.fleet(), members, replica_set, false).broken;
    if (broken == GangRule::kClusters) return "gang members in different clusters";
    for (size_t i = 1; i < members.size(); ++i) {
      const Node& mn = ctx.fleet().node(members[i]);
      if (mn.gpu_model != first.gpu_model) return "gang members of different GPU models";
      if (mn.gpus < c.gpus_per_node) return "a gang member has too few GPUs";
    }
    if (broken == GangRule::kListedTwice) return "a node listed twice in the gang";
  }
  return "";
}

size_t GpuFit::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                      Rejections& rejected) const {
  ModelMemo memo;  // by GPU model: the verdict does not depend on the candidate
  return KeepIf(cands, rejected, [&](const Candidate& c) { return Reject(ctx, c, &memo); });
}

}  // namespace meridian::sched
