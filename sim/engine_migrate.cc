// Moves of running work at checkpoints (sim/engine.h, "Moves"): the engine
// asks the core (Scheduler::Reconsider, sched/move.h) at each checkpoint of a
// running preemptible job, and between them when fleet GPUs free (a job on
// a CPU node) or the carbon hour turns (a job checkpointing less often),
// and applies its verdict. The costs it charges are
// the quote's (egress, transfer time) and the restart overhead the job's
// checkpoint terms give, so the core and the simulator price a move alike.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "estimate/pricing.h"
#include "sim/charge.h"
#include "sim/engine_impl.h"

namespace meridian::sim::engine_internal {

// The next checkpoint of j's run at `at`, when it comes before the run ends.
// Only running preemptible jobs, and not replica sets (their replicas move
// on their own rules, sim/service_replicas.h).
void Engine::PushCheckpoint(uint32_t j, UnixSeconds at) {
  const LiveJob& l = Live(j);
  if (Movable(l) && at < l.run_end) Push(at, EventKind::kCheckpoint, j);
}

// Whether a run may be asked to move at all.
bool Engine::Movable(const LiveJob& l) const {
  return migrations_ && l.q.preemptible && !l.replica_set && l.interval_s > 0;
}

// The next turn of a UTC hour after `after`, for a run whose checkpoints
// are more than an hour apart: the grid's carbon changes every hour, and
// asked only at its checkpoints such a job would run on for hours where the
// power has turned dirty (or the cheap hours elsewhere have begun).
void Engine::PushCarbonHour(uint32_t j, UnixSeconds after) {
  const LiveJob& l = Live(j);
  if (!Movable(l) || l.interval_s <= sched::kCarbonHourS) return;
  const UnixSeconds next = (after / sched::kCarbonHourS + 1) * sched::kCarbonHourS;
  if (next < l.run_end) Push(next, EventKind::kCarbonHour, j);
}

// Whether job j is still running the attempt `attempt` (a stop, a move or
// its end makes another).
bool Engine::RunsAttempt(uint32_t j, uint32_t attempt) {
  return slot_[j] != kNone && Live(j).attempt == attempt && Live(j).running;
}

// At a checkpoint of j's run: the work done so far is saved; the core is
// asked with the work left whether to move, once the instant's cycle has
// served the queue (AskAtCheckpoints). Staying changes nothing.
void Engine::Checkpoint(uint32_t j, UnixSeconds) {
  if (Live(j).running) at_checkpoint_.emplace_back(j, Live(j).attempt);
}

// After the cycle of an instant: the jobs at a checkpoint then are asked.
// True when one moved.
bool Engine::AskAtCheckpoints(UnixSeconds t) {
  bool moved = false;
  std::vector<std::pair<uint32_t, uint32_t>> due;
  due.swap(at_checkpoint_);
  for (const auto& [j, attempt] : due) {
    // A stop or an earlier move this instant makes it another attempt.
    if (!RunsAttempt(j, attempt)) continue;
    if (Ask(j, t, sched::MoveOccasion::kCheckpoint)) {
      moved = true;
    } else {
      PushCheckpoint(j, t + Live(j).interval_s);
    }
  }
  return moved;
}

// The question at t, a checkpoint or a moment between two (fleet GPUs
// freed, a new carbon hour), where a move stops the job as at a checkpoint:
// it saves its state in its grace period, so the work up to t is kept
// either way. True when the job moved.
bool Engine::Ask(uint32_t j, UnixSeconds t, sched::MoveOccasion occasion) {
  LiveJob& l = Live(j);
  const int64_t progress = t - l.run_start - l.overhead_s;
  if (progress <= 0) return false;  // still restarting: nothing new to save
  l.asked = t;
  sched::QueuedJob before = l.q;
  const double done_before = l.done;
  l.done = std::min(1.0, l.done + static_cast<double>(progress) / l.full_s);
  SetWork(l, trace_.jobs[j]);
  sched::RunningJob r;
  r.job = &l.q;
  r.placement = l.placement;
  r.where = l.where;
  r.checkpoints = l.checkpoints + static_cast<int>(progress / l.interval_s);
  r.checkpoint_gb = estimate::CheckpointGb(*l.q.spec);
  r.last_move = l.last_move;
  r.occasion = occasion;
  sched::MoveDecision m = sched_->Reconsider(r, Snap(t), &ledger_);
  if (m.verdict == sched::MoveVerdict::kMove && m.placement && m.quote) {
    l.checkpoints = r.checkpoints;
    MoveTo(j, m, t);
    return true;
  }
  l.q = std::move(before);
  l.done = done_before;
  return false;
}

// A run ended that held fleet GPUs: the jobs on CPU nodes are asked once
// the queue has been served (AskOnFreedGpus).
void Engine::Freed(const LiveJob& l) {
  if (migrations_ && l.on_fleet && l.placement.kind != sched::CandidateKind::kCpuNode) {
    gpus_freed_ = true;
  }
}

// A run that starts on a CPU node, of a job that may move: asked when fleet
// GPUs free, as the daemon asks its jobs on CPU nodes. Jobs on cloud
// capacity are asked at their checkpoints only: asked whenever owned GPUs
// free, they took the GPUs the next arrivals would have used and sent those
// to the cloud (on sim/replay_test.cc's
// DefaultMeetsAsManyDeadlinesAsSkypilotLikeForNoMore, default then cost
// more than skypilot-like on its Philly-like workload).
void Engine::WatchForGpus(uint32_t j) {
  const LiveJob& l = Live(j);
  if (!Movable(l) || l.placement.kind != sched::CandidateKind::kCpuNode) return;
  on_cpu_[j] = l.attempt;
}

// Asks some of `runs` (job, attempt) on `occasion`; true when one moved.
// Of those still running that attempt, past their restart and not asked at
// t yet, the first sched::kMaxMoveAsksAtOnce by `last` (when each was last
// asked on this occasion) least recently first, then in the order of
// `runs`, are asked, so a long list is gone through in turn (an earlier
// move this instant may have ended one or started it anew: it is skipped).
// The others still running that attempt, and those that stayed, go to
// *left when given.
bool Engine::AskFirst(const std::vector<std::pair<uint32_t, uint32_t>>& runs, UnixSeconds t,
                      UnixSeconds LiveJob::*last, sched::MoveOccasion occasion,
                      std::vector<uint32_t>* left) {
  std::vector<std::tuple<UnixSeconds, size_t, uint32_t>> due;
  std::vector<uint32_t> rest;
  for (size_t i = 0; i < runs.size(); ++i) {
    const uint32_t j = runs[i].first;
    if (!RunsAttempt(j, runs[i].second)) continue;
    const LiveJob& l = Live(j);
    if (t - l.run_start - l.overhead_s > 0 && l.asked != t) {
      due.emplace_back(l.*last, i, j);
    } else {
      rest.push_back(j);
    }
  }
  const size_t n = std::min<size_t>(due.size(), sched::kMaxMoveAsksAtOnce);
  std::partial_sort(due.begin(), due.begin() + static_cast<std::ptrdiff_t>(n), due.end());
  bool moved = false;
  for (size_t i = 0; i < due.size(); ++i) {
    const uint32_t j = std::get<2>(due[i]);
    if (i < n && slot_[j] != kNone && Live(j).running && Live(j).asked != t) {
      Live(j).*last = t;
      if (Ask(j, t, occasion)) {
        moved = true;
        continue;
      }
    }
    rest.push_back(j);
  }
  if (left) *left = std::move(rest);
  return moved;
}

// After the cycle of an instant at which fleet GPUs freed: the queue has had
// them first; then the running jobs on CPU nodes are asked whether to move
// (AskFirst, in job order among equals). True when one moved.
bool Engine::AskOnFreedGpus(UnixSeconds t) {
  gpus_freed_ = false;
  std::vector<std::pair<uint32_t, uint32_t>> runs;
  for (auto it = on_cpu_.begin(); it != on_cpu_.end();) {
    if (!RunsAttempt(it->first, it->second)) {
      it = on_cpu_.erase(it);
      continue;
    }
    runs.push_back(*it);
    ++it;
  }
  return AskFirst(runs, t, &LiveJob::freed_ask, sched::MoveOccasion::kGpusFreed, nullptr);
}

// After the cycle of an instant that turned a UTC hour: the jobs whose hour
// came are asked (AskFirst); those left out are asked at a later hour.
bool Engine::AskAtCarbonHour(UnixSeconds t) {
  std::vector<std::pair<uint32_t, uint32_t>> came;
  came.swap(at_hour_);
  return AskFirst(came, t, &LiveJob::hour_ask, sched::MoveOccasion::kCarbonHour, nullptr);
}

// Whether spot offering `e` could take the run for less than it pays now.
bool Engine::CheaperSpot(const LiveJob& l, const sched::ElasticChoice& e, UnixSeconds t) const {
  if (!l.q.allowed_regions.test(e.region.index())) return false;
  const std::optional<Money> price = world_.market->PricePerHour(e.offering, PricingModel::kSpot, t);
  return price && price->Times(e.instances) < l.rate;
}

// A run on on-demand cloud capacity, of a job that may take spot, watches
// the spot offerings of its GPU model and count that cost less: the next
// change of one's count is a chance to move to spot (kSpotChange), as a
// service's on-demand replicas watch for spot (engine_replicas.cc).
void Engine::WatchSpotForRun(uint32_t j, UnixSeconds t) {
  LiveJob& l = Live(j);
  l.spot_look = 0;
  if (!Movable(l) || l.on_fleet || l.pay != PayKind::kOnDemand || !TakesSpot(l) ||
      l.demand >= l.shape->demands.size()) {
    return;
  }
  std::optional<UnixSeconds> next;
  for (const sched::ElasticChoice& e : SpotChoices(l)) {
    if (!CheaperSpot(l, e, t)) continue;
    const std::optional<UnixSeconds> change = spot_.NextSpotChange(e.offering, t);
    if (change && *change > t && (!next || *change < *next)) next = change;
  }
  if (!next || *next >= l.run_end) return;
  l.spot_look = *next;
  Push(*next, EventKind::kSpotChange, j);
}

// A count changed: if one of the cheaper spot offerings now has the
// instances the run needs, it is asked after the instant's cycle
// (AskWhenSpotReturns); else it watches on.
void Engine::SpotChanged(uint32_t j, uint32_t attempt, UnixSeconds t) {
  LiveJob& l = Live(j);
  if (l.spot_look != t || !l.running) return;  // superseded, or not running
  l.spot_look = 0;                              // one look per watch
  for (const sched::ElasticChoice& e : SpotChoices(l)) {
    if (CheaperSpot(l, e, t) && spot_.SpotInstances(e.offering, t) >= e.instances) {
      spot_back_.emplace_back(j, attempt);
      return;
    }
  }
  WatchSpotForRun(j, t);
}

// After the cycle of an instant at which cheaper spot returned: the runs it
// could take are asked (AskFirst); every one that stayed, or was left out,
// watches on (one that moved watches for itself if it is on on-demand
// again: StartRun).
bool Engine::AskWhenSpotReturns(UnixSeconds t) {
  std::vector<std::pair<uint32_t, uint32_t>> back;
  back.swap(spot_back_);
  std::vector<uint32_t> left;
  const bool moved =
      AskFirst(back, t, &LiveJob::spot_ask, sched::MoveOccasion::kSpotReturned, &left);
  for (uint32_t j : left) {
    if (slot_[j] != kNone && Live(j).running) WatchSpotForRun(j, t);
  }
  return moved;
}

// Ends j's run at checkpoint `t` with its work saved (l.done already counts
// it), charges the checkpoint's egress, and starts it on the move's place.
void Engine::MoveTo(uint32_t j, const sched::MoveDecision& m, UnixSeconds t) {
  last_activity_ = std::max(last_activity_, t);
  LiveJob& l = Live(j);
  JobOutcome& o = Out(j);
  // The ending run's restart overhead is its only time without progress.
  o.lost_gpu_ms += l.gpu_milli * std::min<int64_t>(l.overhead_s, t - l.run_start);
  ChargeMoveOverhead(l, o, t);
  Account(l, o, l.run_start, t);
  Served(j, l, t);
  ChargeEgress(l, o, m.quote->costs.egress_usd.micros(), t);
  Freed(l);
  EndLease(j, t);
  sched_->Release(JobId(j), Snap(t), &ledger_);
  if (Status s = sched_->Commit(*m.placement, Snap(t), &ledger_); !s.ok()) {
    // The place was found against this very ledger less the job; a refusal
    // here is a core error, and the job is queued again rather than lost.
    Note("move not committed (the job is queued again): " + s.message());
    Requeue(j);
    return;
  }
  ++o.moves;
  out_.timeline.Spread(Timeline::kMoves, t - t0_, t - t0_, 1.0);
  l.last_move = t;
  l.moved_in = true;
  l.transfer_s = static_cast<int64_t>(std::ceil(m.quote->costs.transfer_hours * 3600.0));
  l.running = false;
  Place(j, *m.placement, t);
}

// Egress is billed where the checkpoint leaves from: the old place's region
// and pricing model, so totals by job, pricing model and region stay equal.
void Engine::ChargeEgress(const LiveJob& l, JobOutcome& o, int64_t micros, UnixSeconds t) {
  if (micros <= 0) return;
  o.cost_micros += micros;
  o.move_cost_micros += micros;
  out_.cost_by_pricing[static_cast<size_t>(l.pay)] += micros;
  ChargeRegion(l.region, micros, 0);
  out_.timeline.Spread(static_cast<Timeline::Series>(Timeline::kSpend + static_cast<int>(l.pay)),
                       t - t0_, t - t0_, static_cast<double>(micros));
}

// A run that follows a move: its restart and transfer, up to `b` (the run
// may stop before they are over), at its own rate, are the move's cost.
void Engine::ChargeMoveOverhead(const LiveJob& l, JobOutcome& o, UnixSeconds b) {
  if (!l.moved_in) return;
  const UnixSeconds end = std::min(b, l.run_start + l.overhead_s);
  if (end <= l.run_start) return;
  o.move_cost_micros += RunCostMicros(l.rate, l.run_start, end);
  o.move_gpu_ms += l.gpu_milli * (end - l.run_start);
}

}  // namespace meridian::sim::engine_internal
