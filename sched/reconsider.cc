// Scheduler::Reconsider (sched/move.h): the re-decision at a running job's
// checkpoint, quoted with the functions every decision prices, times and
// greens a placement with, and judged by the profile's move plugin.
#include <algorithm>
#include <cmath>

#include "estimate/pricing.h"
#include "sched/cost.h"
#include "sched/cycle.h"
#include "sched/plugins/candidate_region.h"
#include "sched/plugins/carbon.h"
#include "sched/plugins/egress_locality.h"

namespace meridian::sched {

namespace {

const MovePlugin* FindMovePlugin(const Scheduler::Impl& s) {
  for (const PluginSlot& p : s.slots) {
    if (p.move) return p.move;
  }
  return nullptr;
}

// The profile's plugin of type P (carbon, cpu_fallback), or nullptr.
template <typename P>
const P* FindPlugin(const Scheduler::Impl& s) {
  for (const PluginSlot& p : s.slots) {
    if (const auto* c = dynamic_cast<const P*>(p.plugin.get())) return c;
  }
  return nullptr;
}

// What the quote reads from the profile's plugins: grams from its carbon
// plugin, at its settings.
struct Pricers {
  const Carbon* carbon = nullptr;
};

// Whether two candidates hold the same capacity (a re-decision that picks
// the job's own place means stay).
bool SamePlace(const Candidate& a, const Candidate& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case CandidateKind::kElastic:
      return a.offering == b.offering && a.pricing == b.pricing && a.instances == b.instances;
    case CandidateKind::kCpuNode: return a.node == b.node;
    case CandidateKind::kMigSlice:
      return a.node == b.node && a.mig_gpu == b.mig_gpu && a.mig_shape == b.mig_shape;
    case CandidateKind::kNode:
    case CandidateKind::kGang:
      return a.node == b.node && a.gpus_per_node == b.gpus_per_node && a.gang_size == b.gang_size;
  }
  return false;
}

// The work left on `c` from c.start, after `overhead_h` of moving.
RunQuote QuoteRun(const CycleContext& ctx, const Candidate& c, const Pricers& with,
                  double overhead_h) {
  RunQuote q;
  q.usd = ComputeRunCost(ctx, c);
  q.hours = ctx.RunHours(c);
  if (with.carbon) {
    const Carbon::Emission e = with.carbon->EmissionOf(ctx, c);
    q.grams_known = e.known;
    q.grams = e.known ? e.grams() : 0;
  }
  q.start = c.start;
  q.finish = c.start + static_cast<UnixSeconds>(std::ceil((overhead_h + q.hours) * 3600.0));
  return q;
}

struct Places {
  Candidate here, there;
};

MoveCosts CostsOf(const CycleContext& ctx, const RunningJob& r, const Places& p,
                  double transfer_gbit_s) {
  const estimate::CheckpointTerms terms = estimate::CheckpointOf(r.job->spec->checkpoint);
  MoveCosts m;
  m.egress_usd_per_gb = CatalogEgressUsdPerGb(ctx.catalog(), RegionOf(ctx, p.here),
                                              RegionOf(ctx, p.there));
  m.egress_usd = Money::FromDollars(r.checkpoint_gb * m.egress_usd_per_gb);
  m.transfer_hours = r.checkpoint_gb * 8.0 / transfer_gbit_s / 3600.0;
  m.restart_hours = static_cast<double>(terms.restart_overhead_s) / 3600.0;
  m.wait_hours = static_cast<double>(std::max<UnixSeconds>(0, p.there.start - ctx.now())) / 3600.0;
  return m;
}

MoveQuote Quote(const Scheduler::Impl& s, const CycleContext& ctx, const RunningJob& r,
                const Places& p, std::string to, double transfer_gbit_s) {
  const Pricers with{FindPlugin<Carbon>(s)};
  MoveQuote q;
  q.costs = CostsOf(ctx, r, p, transfer_gbit_s);
  q.stay = QuoteRun(ctx, p.here, with, 0);
  q.move = QuoteRun(ctx, p.there, with, q.costs.overhead_hours());
  // The new place is held while the checkpoint arrives and the job restarts:
  // its own rates over those hours.
  const double share = q.move.hours > 0 ? q.costs.overhead_hours() / q.move.hours : 0;
  q.costs.overhead_usd = q.move.usd.Times(share);
  q.costs.overhead_grams = static_cast<int64_t>(std::llround(static_cast<double>(q.move.grams) * share));
  q.from = r.where.empty() ? DescribeCandidate(ctx, p.here) : r.where;
  q.to = std::move(to);
  q.deadline = r.job->deadline;
  const estimate::CheckpointTerms terms = estimate::CheckpointOf(r.job->spec->checkpoint);
  q.deadline_margin_s = terms.interval_s + terms.restart_overhead_s;
  q.checkpoint = r.checkpoints;
  q.occasion = r.occasion;
  return q;
}

MoveDecision Stay(const RunningJob& r, const std::string& why) {
  MoveDecision d;
  d.job = r.job->id;
  d.reason = "stays on " + r.where + " " + AskedWhen(r.checkpoints, r.occasion) + ": " + why;
  return d;
}

}  // namespace

std::string AskedWhen(int checkpoint, MoveOccasion occasion) {
  const char* when = "";
  switch (occasion) {
    case MoveOccasion::kCheckpoint: break;
    case MoveOccasion::kGpusFreed: when = "when GPUs freed, "; break;
    case MoveOccasion::kCarbonHour: when = "at a new carbon hour, "; break;
    case MoveOccasion::kSpotReturned: when = "when spot returned, "; break;
  }
  return std::string(when) + "after checkpoint " + std::to_string(checkpoint);
}

MoveDecision Scheduler::Reconsider(const RunningJob& r, const Snapshot& snap, Ledger* ledger) {
  Impl& s = *impl_;
  const MovePlugin* judge = FindMovePlugin(s);
  if (!judge) return Stay(r, "the profile has no move plugin (migrate)");
  if (std::optional<std::string> hold = judge->Hold(r, snap.now)) return Stay(r, *hold);

  // The decision for the work left, as if queued now, with the job's own
  // capacity free: its own place competes like any other. The job is set
  // aside on the ledger itself, which reads as after Take and is exactly as
  // before once `aside` ends (Ledger::SetAside): a copy of the whole ledger
  // at every checkpoint of every running job cost ten times the run.
  Ledger::SetAside aside(*ledger, r.job->id);
  Decision d = Decide(*r.job, snap);
  if (d.kind != DecisionKind::kPlace && d.kind != DecisionKind::kDefer) {
    return Stay(r, "no other placement for the work left now (" + std::string(ToString(d.kind)) +
                       (d.status.ok() ? "" : ": " + d.status.message()) + ")");
  }
  Places p{r.placement, d.chosen->candidate};
  p.here.start = snap.now;
  p.here.run_cost_micros = Candidate::kNoRunCost;
  if (SamePlace(p.here, p.there)) return Stay(r, "the best placement for the work left is where it runs");

  CycleState state;
  Rng rng(Rng::Mix(s.options.seed, r.job->id.value(), static_cast<uint64_t>(snap.now)));
  CycleContext ctx({r.job, &snap, ledger, &state, &rng, &s.ws.members, s.explain, false});
  std::string to = d.chosen->where.empty() ? DescribeCandidate(ctx, p.there) : d.chosen->where;
  MoveDecision out = judge->Judge(Quote(s, ctx, r, p, std::move(to), judge->TransferGbitPerS()));
  out.job = r.job->id;
  if (out.verdict == MoveVerdict::kMove) out.placement = std::move(d);
  return out;
}

}  // namespace meridian::sched
