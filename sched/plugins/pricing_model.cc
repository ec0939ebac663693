#include "sched/plugins/pricing_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "estimate/defaults.h"
#include "estimate/pricing.h"
#include "sched/cost.h"
#include "sched/elastic.h"
#include "sched/registry.h"

namespace meridian::sched {

namespace {

using estimate::Fixed;

struct Checkpointing {
  double interval_h;
  double restart_h;
};

Checkpointing CheckpointingOf(const QueuedJob& job) {
  const estimate::CheckpointTerms t = estimate::CheckpointOf(job.spec ? job.spec->checkpoint : Checkpoint{});
  return {static_cast<double>(t.interval_s) / 3600.0,
          static_cast<double>(t.restart_overhead_s) / 3600.0};
}

double OnDemandHours(const CycleContext& ctx, const Candidate& c) {
  Candidate od = c;
  od.pricing = PricingModel::kOnDemand;
  return ctx.RunHours(od);
}

std::string Minutes(double hours) { return Fixed(hours * 60.0, 0) + "m"; }

int FleetGpus(const Candidate& c) {
  return c.gpus_per_node * (c.kind == CandidateKind::kGang ? c.gang_size : 1);
}

}  // namespace

Result<std::unique_ptr<Plugin>> PricingModelChoice::Create(PluginArgs& args) {
  Options o;
  o.loss_margin = args.Number("loss_margin", o.loss_margin, 0, 20);
  o.flex_wait_margin = args.Number("flex_wait_margin", o.flex_wait_margin, 1, 10);
  o.spot_wait = args.Bool("spot_wait", o.spot_wait);
  return FinishPlugin<PricingModelChoice>(args, o);
}

bool PricingModelChoice::WaitsForSpot(const CycleContext& ctx) const {
  const QueuedJob& job = ctx.job();
  if (!options_.spot_wait || !job.deadline || !job.spot_run_multiplier || ctx.ever_pass()) return false;
  const ElasticIndex* index = ctx.snapshot().elastic;
  if (!index) return false;
  for (const ModelDemand& d : job.demands) {
    if (!index->Choices(d.model, d.gpus, PricingModel::kSpot).empty()) return true;
  }
  return false;
}

double PricingModelChoice::SpotBoundHours(const QueuedJob& job) const {
  const Checkpointing cp = CheckpointingOf(job);
  return options_.loss_margin * (cp.interval_h + cp.restart_h);
}

// The last second at which a job with `t_od_h` of work left may still wait
// for spot (and take spot at no delay): slack >= the bound, in whole seconds
// so that the filter and RetryAt agree to the second.
UnixSeconds PricingModelChoice::WaitUntil(const QueuedJob& job, double t_od_h) const {
  const double keep_h = CheckpointingOf(job).restart_h + SpotBoundHours(job);
  return *job.deadline - static_cast<UnixSeconds>(std::ceil((t_od_h + keep_h) * 3600.0 - 1e-6));
}

PricingModelChoice::Verdict PricingModelChoice::Judge(const CycleContext& ctx,
                                                      const Candidate& c) const {
  return JudgeWith(ctx, c, WaitsForSpot(ctx));
}

PricingModelChoice::Verdict PricingModelChoice::JudgeWith(const CycleContext& ctx,
                                                          const Candidate& c, bool waits) const {
  Verdict v;
  const QueuedJob& job = ctx.job();
  if (!job.deadline) return v;
  v.has_deadline = true;
  const Checkpointing cp = CheckpointingOf(job);
  const double t_od = OnDemandHours(ctx, c);
  const double extra = std::max(0.0, ctx.RunHours(c) - t_od);
  const double delay = static_cast<double>(std::max<UnixSeconds>(0, c.start - ctx.now())) / 3600.0;
  v.slack_h = static_cast<double>(*job.deadline - ctx.now()) / 3600.0 - t_od - cp.restart_h;
  const bool elastic = c.kind == CandidateKind::kElastic;
  const bool spot_now = waits && ctx.now() <= WaitUntil(job, t_od);
  if (elastic && c.pricing == PricingModel::kSpot) {
    v.need_h = delay + SpotBoundHours(job) + (options_.spot_wait ? 0.0 : extra);
    v.reason = "spot: slack below the loss bound (on-demand fallback would miss the deadline)";
    if (waits) {  // spot now, or not at all: a later start may find none left
      v.allowed = spot_now && delay == 0;
      if (delay > 0) v.reason = "spot: no later start while waiting for spot (it may be gone by then)";
      if (v.allowed) v.reason = {};
      return v;
    }
  } else if (elastic && c.pricing == PricingModel::kOnDemand && spot_now) {
    v.allowed = false;
    v.waiting = true;
    v.need_h = SpotBoundHours(job);
    v.reason = "waiting for spot: the slack still allows it";
    return v;
  } else if (elastic && c.pricing == PricingModel::kFlexStart) {
    v.need_h = options_.flex_wait_margin * delay + extra;
    v.reason = "flex-start: slack below the expected wait (on-demand fallback would miss the deadline)";
  } else if (delay > 0) {
    v.need_h = delay + extra;
    v.reason = "later start: slack below the delay (on-demand fallback would miss the deadline)";
  } else {
    return v;
  }
  v.allowed = v.slack_h >= v.need_h;
  if (v.allowed) v.reason = {};
  return v;
}

size_t PricingModelChoice::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                                  Rejections& rejected) const {
  if (!ctx.job().deadline) return cands.size();
  const bool waits = WaitsForSpot(ctx);
  return KeepIf(cands, rejected, [&](const Candidate& c) -> std::string_view {
    Verdict v = JudgeWith(ctx, c, waits);
    if (v.allowed) return "";
    if (!rejected.wants_example()) return v.reason;
    detail_ = Why(ctx, c, v);
    return detail_;
  });
}

std::optional<UnixSeconds> PricingModelChoice::RetryAt(const CycleContext& ctx) const {
  const QueuedJob& job = ctx.job();
  if (!options_.spot_wait || !job.deadline || !job.spot_run_multiplier) return std::nullopt;
  // The first second the slack is below the bound: on-demand from then on.
  std::optional<UnixSeconds> at;
  for (const ModelDemand& d : job.demands) {
    const UnixSeconds t = WaitUntil(job, static_cast<double>(d.run_hours)) + 1;
    if (t > ctx.now() && (!at || t < *at)) at = t;
  }
  return at;
}

std::string PricingModelChoice::Label(const CycleContext& ctx, const Candidate& c) {
  if (c.kind == CandidateKind::kElastic) return std::string(ToString(c.pricing));
  const Cluster& cl = ctx.fleet().cluster(ctx.fleet().node(c.node).cluster);
  return cl.pricing == CapacityPricing::kReserved ? "reserved fleet" : "owned";
}

Money PricingModelChoice::EffectiveCost(const CycleContext& ctx, const Candidate& c) const {
  const QueuedJob& job = ctx.job();
  if (c.kind == CandidateKind::kElastic && c.pricing == PricingModel::kReserved) {
    std::optional<Money> p = ElasticPricePerHour(ctx, c);
    if (!p) return RunCost(ctx, c);
    estimate::PricingTerms term;
    term.term_hours = estimate::kReservedTermHours;
    return p->Times(c.instances * estimate::BilledHours(term, ctx.RunHours(c)));
  }
  if (c.kind == CandidateKind::kElastic || c.kind == CandidateKind::kCpuNode) return RunCost(ctx, c);
  const Cluster& cl = ctx.fleet().cluster(ctx.fleet().node(c.node).cluster);
  if (cl.pricing != CapacityPricing::kReserved) return RunCost(ctx, c);
  if (job.preemptible || job.tier == Priority::kCritical) return Money();  // lent, already paid
  const double hours = ctx.RunHours(c);
  if (c.kind == CandidateKind::kMigSlice) {
    return cl.gpu_hour.Times(hours * c.mig_shape.span / static_cast<double>(kMigMemorySlices));
  }
  return cl.gpu_hour.Times(FleetGpus(c) * hours);
}

int64_t PricingModelChoice::Score(const CycleContext& ctx, const Candidate& c) const {
  return -EffectiveCost(ctx, c).micros();
}

void PricingModelChoice::ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                                    std::span<int64_t> out) const {
  ScoreEach(*this, ctx, cands, out);
}

std::string PricingModelChoice::Why(const CycleContext& ctx, const Candidate& c,
                                    const Verdict& v) const {
  const QueuedJob& job = ctx.job();
  const std::string label = Label(ctx, c);
  const std::string slack = "slack " + Fixed(v.slack_h, 1) + " h";
  if (v.waiting) {
    return label + ": waiting for spot, " + slack + " >= spot loss bound " + Fixed(v.need_h, 2) +
           " h (on-demand once below)";
  }
  const bool elastic = c.kind == CandidateKind::kElastic;
  const Checkpointing cp = CheckpointingOf(job);
  const double t_od = OnDemandHours(ctx, c);
  if (elastic && c.pricing == PricingModel::kSpot) {
    if (!v.has_deadline) return "spot: no deadline, so a reclaim cannot make it late";
    const double extra = std::max(0.0, ctx.RunHours(c) - t_od);
    return std::string("spot: ") + slack + (v.allowed ? " >= " : " < ") +
           Fixed(options_.loss_margin, 0) + " x (" + Minutes(cp.interval_h) + " + " +
           Minutes(cp.restart_h) + ") + " + Fixed(extra, 2) + " h rework = " +
           Fixed(v.need_h, 2) + " h loss bound";
  }
  if (elastic && c.pricing == PricingModel::kFlexStart) {
    if (!v.has_deadline) return "flex-start: no deadline, so the wait cannot make it late";
    return std::string("flex-start: ") + slack + (v.allowed ? " >= " : " < ") + "flex wait " +
           Fixed(v.need_h, 1) + " h";
  }
  if (c.start > ctx.now()) {
    if (!v.has_deadline) return label + ", later start: no deadline";
    return label + ", later start: " + slack + (v.allowed ? " >= " : " < ") + "delay " +
           Fixed(v.need_h, 1) + " h";
  }
  if (!elastic) {
    const Cluster& cl = ctx.fleet().cluster(ctx.fleet().node(c.node).cluster);
    if (cl.pricing == CapacityPricing::kReserved) {
      return job.preemptible || job.tier == Priority::kCritical
                 ? "reserved fleet: idle reserved capacity, lent first to " +
                       std::string(job.preemptible ? "preemptible" : "critical") + " work at 0 $"
                 : "reserved fleet: kept for preemptible and critical work, at its committed " +
                       cl.gpu_hour.ToString() + " $/GPU-h";
    }
    return "owned: no risk to the deadline";
  }
  if (c.pricing == PricingModel::kReserved) return "reserved: billed in whole 1-year terms";
  // On-demand now: say why the cheaper, riskier options were not taken.
  std::vector<std::string> parts;
  const std::optional<double> spot = job.SpotRunMultiplier(c.instances);
  if (!spot) {
    parts.push_back("no spot (not preemptible, or reclaims would cost too much)");
  } else if (v.has_deadline) {
    double need = options_.loss_margin * (cp.interval_h + cp.restart_h) +
                  t_od * (*spot - 1);
    parts.push_back(slack + (v.slack_h < need ? " < " : " >= ") + "spot loss bound " +
                    Fixed(need, 2) + " h");
  }
  if (!job.flex_refusal.empty()) {
    parts.push_back("no flex-start (" + job.flex_refusal + ")");
  } else if (!ctx.market().PricePerHour(c.offering, PricingModel::kFlexStart, ctx.now())) {
    parts.push_back("no flex-start sold here");
  } else if (v.has_deadline) {
    double wait = options_.flex_wait_margin * ctx.market().FlexStartWaitHours(c.offering, ctx.now());
    parts.push_back(slack + (v.slack_h < wait ? " < " : " >= ") + "flex wait " + Fixed(wait, 1) +
                    " h");
  }
  std::string out = v.has_deadline ? "on-demand" : "on-demand: no deadline";
  for (size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 && v.has_deadline ? ": " : "; ") + parts[i];
  }
  return out;
}

std::string PricingModelChoice::ExplainScore(const CycleContext& ctx, const Candidate& c,
                                             int64_t) const {
  return Why(ctx, c, Judge(ctx, c)) + "; " + EffectiveCost(ctx, c).ToString() + " $";
}

}  // namespace meridian::sched
