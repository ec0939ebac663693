#include "sched/plugins/latency.h"

#include "sched/plugins/candidate_region.h"

#include <algorithm>
#include <cmath>

#include "estimate/defaults.h"
#include "estimate/regions.h"
#include "sched/registry.h"

namespace meridian::sched {

Result<std::unique_ptr<Plugin>> Latency::Create(PluginArgs& args) {
  Options o;
  o.default_slo_ms = args.Number("default_slo_ms", estimate::kDefaultLatencySloMs, 1, 10000);
  return FinishPlugin<Latency>(args, o);
}

Status Latency::Prepare(const PrepareContext& p) {
  const auto& regions = p.catalog.regions();
  regions_ = std::min(regions.size(), kMaxRegions);
  rtt_.assign(regions_ * regions_, 0);
  for (size_t u = 0; u < regions_; ++u) {
    for (size_t r = 0; r < regions_; ++r) {
      rtt_[u * regions_ + r] = static_cast<float>(estimate::EstimateRttMs(regions[u], regions[r]));
    }
  }
  return Status::Ok();
}

bool Latency::Applies(const QueuedJob& job) {
  return job.kind == WorkloadKind::kRealtimeInference && !job.user_regions.empty();
}

double Latency::SloMs(const QueuedJob& job) const {
  return job.spec && job.spec->latency.slo_ms ? *job.spec->latency.slo_ms : options_.default_slo_ms;
}

double Latency::WorstRttMs(const QueuedJob& job, RegionId r) const {
  if (!r.valid() || r.index() >= regions_) return INFINITY;
  double worst = 0;
  for (RegionId u : job.user_regions) {
    if (u.index() >= regions_) continue;
    worst = std::max<double>(worst, rtt_[u.index() * regions_ + r.index()]);
  }
  return worst;
}

double Latency::RequestMs(const CycleContext& ctx, const Candidate& c) {
  return c.kind == CandidateKind::kCpuNode || c.demand >= ctx.job().demands.size()
             ? 0
             : ctx.demand(c).request_ms;
}

PreFilterResult Latency::PreFilter(const CycleContext& ctx, CycleState&) const {
  PreFilterResult out;
  const QueuedJob& job = ctx.job();
  if (!Applies(job)) return out;
  const double slo = SloMs(job);
  RegionSet near;
  for (size_t r = 0; r < regions_; ++r) {
    if (WorstRttMs(job, RegionId(static_cast<uint16_t>(r))) <= slo) near.set(r);
  }
  if (near.none()) {
    std::string why = "no region is within the latency SLO of every user region";
    if (ctx.explain() == ExplainLevel::kFull) {
      why += " (" + estimate::Fixed(slo, 0) + " ms)";
    }
    out.status = Status::Unresolvable(why);
    return out;
  }
  out.regions = near;
  return out;
}

size_t Latency::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                       Rejections& rejected) const {
  const QueuedJob& job = ctx.job();
  if (!Applies(job)) return cands.size();
  const double slo = SloMs(job);
  return KeepIf(cands, rejected, [&](const Candidate& c) -> std::string_view {
    if (WorstRttMs(job, RegionOf(ctx, c)) > slo) return "round trip to the job's users exceeds the latency SLO";
    if (WorstRttMs(job, RegionOf(ctx, c)) + RequestMs(ctx, c) > slo) {
      return "round trip to the job's users plus one request on the GPU exceeds the latency SLO";
    }
    return "";
  });
}

int64_t Latency::Score(const CycleContext& ctx, const Candidate& c) const {
  if (!Applies(ctx.job())) return 0;
  double worst = WorstRttMs(ctx.job(), RegionOf(ctx, c));
  return std::isfinite(worst) ? -std::llround(worst * 100) : INT64_MIN / 2;
}

void Latency::ScoreBatch(const CycleContext& ctx, std::span<const Candidate> cands,
                         std::span<int64_t> out) const {
  ScoreEachIf(Applies(ctx.job()), *this, ctx, cands, out);
}

std::string Latency::ExplainScore(const CycleContext& ctx, const Candidate& c, int64_t) const {
  using estimate::Fixed;
  const QueuedJob& job = ctx.job();
  if (!Applies(job)) return "not a real-time service with users: no latency rule";
  const RegionId r = RegionOf(ctx, c);
  RegionId far = job.user_regions.front();
  for (RegionId u : job.user_regions) {
    if (u.index() < regions_ && r.valid() && r.index() < regions_ &&
        rtt_[u.index() * regions_ + r.index()] > rtt_[far.index() * regions_ + r.index()]) {
      far = u;
    }
  }
  return "worst round trip ~" + Fixed(WorstRttMs(job, r), 1) + " ms from users near " +
         ctx.catalog().regions()[far.index()].id + " (SLO " + Fixed(SloMs(job), 0) + " ms)";
}

}  // namespace meridian::sched
