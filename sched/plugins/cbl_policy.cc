#include "sched/plugins/cbl_policy.h"

#include <algorithm>
#include <cmath>

#include "estimate/pricing.h"
#include "sched/registry.h"

namespace meridian::sched {

namespace {

// Whether the policy judges the job at all: spot is an option and there is a deadline.
bool Judged(const QueuedJob& job) { return job.deadline && job.spot_run_multiplier; }

estimate::CheckpointTerms TermsOf(const QueuedJob& job) {
  return estimate::CheckpointOf(job.spec ? job.spec->checkpoint : Checkpoint{});
}

double OnDemandSeconds(const CycleContext& ctx, Candidate c) {
  c.pricing = PricingModel::kOnDemand;
  return ctx.RunHours(c) * 3600.0;
}

}  // namespace

Result<std::unique_ptr<Plugin>> CantBeLate::Create(PluginArgs& args) {
  Options o;
  const std::string rule = args.Choice("rule", "greedy", {"greedy", "uniform_progress"});
  o.rule = rule == "uniform_progress" ? Rule::kUniformProgress : Rule::kGreedy;
  o.restarts = static_cast<int>(args.Integer("restarts", o.restarts, 1, 10));
  return FinishPlugin<CantBeLate>(args, o);
}

int64_t CantBeLate::NetSeconds(const QueuedJob& job, double work_s) const {
  const estimate::CheckpointTerms t = TermsOf(job);
  return static_cast<int64_t>(std::ceil(work_s)) + options_.restarts * t.restart_overhead_s +
         t.interval_s;
}

bool CantBeLate::Behind(const QueuedJob& job, UnixSeconds now) {
  const double window = static_cast<double>(*job.deadline - job.submitted);
  if (window <= 0) return true;
  return job.done < static_cast<double>(now - job.submitted) / window;
}

std::string_view CantBeLate::Verdict(const CycleContext& ctx, const Candidate& c) const {
  const QueuedJob& job = ctx.job();
  if (ctx.ever_pass() || c.kind != CandidateKind::kElastic || !Judged(job)) return "";
  const bool net = *job.deadline - ctx.now() <= NetSeconds(job, OnDemandSeconds(ctx, c));
  const bool spot = c.pricing == PricingModel::kSpot;
  if (net) return spot ? "safety net: time left <= work left + restarts; on-demand to the end" : "";
  if (spot) return "";
  if (options_.rule == Rule::kGreedy) return "greedy: before the safety net, spot or nothing";
  return Behind(job, ctx.now()) ? "" : "uniform progress: ahead of the line C x t / D, spot or nothing";
}

size_t CantBeLate::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                          Rejections& rejected) const {
  if (!Judged(ctx.job())) return cands.size();
  return KeepIf(cands, rejected, [&](const Candidate& c) { return Verdict(ctx, c); });
}

std::optional<UnixSeconds> CantBeLate::RetryAt(const CycleContext& ctx) const {
  const QueuedJob& job = ctx.job();
  if (!Judged(job)) return std::nullopt;
  std::optional<UnixSeconds> at;
  auto earliest = [&](UnixSeconds t) {
    if (t > ctx.now() && (!at || t < *at)) at = t;
  };
  for (const ModelDemand& d : job.demands) {
    earliest(*job.deadline - NetSeconds(job, static_cast<double>(d.run_hours) * 3600.0));
  }
  if (options_.rule == Rule::kUniformProgress && !Behind(job, ctx.now())) {
    const double window = static_cast<double>(*job.deadline - job.submitted);
    earliest(job.submitted + static_cast<UnixSeconds>(std::floor(job.done * window)) + 1);
  }
  return at;
}

}  // namespace meridian::sched
