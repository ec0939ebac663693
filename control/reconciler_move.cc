// Moves of running work at checkpoints in the daemon (Reconciler::
// ReconsiderRunning): the question the simulator asks at each checkpoint
// (sim/engine_migrate.cc), asked of the same core, sched::Scheduler::
// Reconsider (sched/move.h), with the same work-left rule
// (sched/work_left.h). Only the way a verdict is carried out differs: a move
// is a stop at the checkpoint (SIGTERM and the grace period, as a
// preemption's) and, once the process has ended, a launch on the new place
// with the job's checkpoint directory, which every attempt of a job shares.
//
// What the daemon knows of a run's progress is time: the share of the work
// an attempt has done is the time since the daemon saw it run, less its
// restart overhead, over the time its placement was planned for (the
// allocation's expected end). The job saves its state when told to stop
// (the contract MERIDIAN_CHECKPOINT_DIR states), so a move loses no work.
// A preempted or lost attempt keeps its work up to its last checkpoint, as
// in the simulator, and is queued for the work left (WorkDoneBy).
//
// When the fleet's GPUs are released (a job ends, is stopped or moves away),
// the jobs running on CPU nodes are asked too, between their checkpoints,
// after the cycle's scheduling step, so the queue has the GPUs first
// (AskOnFreedGpus), as the simulator asks after its cycle.
//
// Not reconsidered: services (their replicas keep their own set), attempts
// adopted after a restart (the decision that placed them is not stored), and
// a move in progress when the daemon restarts ends as a preemption does (the
// job is queued and decided again).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "control/reconciler_state.h"
#include "estimate/pricing.h"
#include "sched/move.h"
#include "sched/work_left.h"

namespace meridian::control {

namespace {

sched::Snapshot SnapshotOf(const Reconciler::FleetState& fs, UnixSeconds now) {
  sched::Snapshot snap;
  snap.now = now;
  snap.fleet = fs.fleet.get();
  snap.ledger = &fs.ledger;
  snap.market = fs.market.get();
  return snap;
}

// The restart an attempt begins with: none for a job's first run, the
// checkpoint terms' overhead for one that resumes saved work.
int64_t OverheadOf(const Reconciler::Active& a, const estimate::CheckpointTerms& t) {
  return a.work_done > 0 ? t.restart_overhead_s : 0;
}

}  // namespace

void Reconciler::StartCheckpoints(Active& a, UnixSeconds now) {
  a.run_since = now;
  if (!a.placed || !a.spec || !a.spec->preemptible || !a.replicas.empty()) return;
  const estimate::CheckpointTerms t = estimate::CheckpointOf(a.spec->checkpoint);
  if (t.interval_s <= 0) return;
  a.next_checkpoint = now + OverheadOf(a, t) + t.interval_s;
  checkpoints_.emplace(a.next_checkpoint, a.row.seq);
  if (a.placed->candidate.kind == sched::CandidateKind::kCpuNode) on_cpu_.insert(a.row.seq);
  // The grid's carbon changes every hour: a job checkpointing less often is
  // asked at each turn of a UTC hour too, as in the simulator.
  a.next_hour = 0;
  if (t.interval_s > sched::kCarbonHourS) {
    a.next_hour = (now / sched::kCarbonHourS + 1) * sched::kCarbonHourS;
    carbon_hours_.emplace(a.next_hour, a.row.seq);
  }
}

double Reconciler::WorkDoneBy(const Active& a, UnixSeconds t, bool to_checkpoint) const {
  if (!a.placed || !a.spec || a.run_since == 0 || !fleet_) return a.work_done;
  const Allocation* held = fleet_->ledger.Find(JobId(static_cast<uint32_t>(a.row.seq)));
  if (!held) return a.work_done;
  const estimate::CheckpointTerms terms = estimate::CheckpointOf(a.spec->checkpoint);
  int64_t progress_s = std::max<int64_t>(0, t - a.run_since - OverheadOf(a, terms));
  if (to_checkpoint) {
    progress_s = terms.interval_s > 0 ? progress_s / terms.interval_s * terms.interval_s : 0;
  }
  const int64_t planned_s = std::max<int64_t>(1, held->end - held->start);
  const double share = std::min(1.0, static_cast<double>(progress_s) / static_cast<double>(planned_s));
  return a.work_done + (1.0 - a.work_done) * share;
}

bool Reconciler::Askable(const Active& a) const {
  return !a.done && a.row.state == JobState::kRunning && a.stop_kind == StopKind::kNone &&
         a.pending == PendingCall::kNone && a.placed && a.queued && a.spec &&
         !resync_.count(a.row.id);
}

void Reconciler::ReconsiderRunning(UnixSeconds now, std::vector<JobUpdate>* out) {
  // Each ask is a full decision, and a tenant picks its jobs' checkpoint
  // interval: at most sched::kMaxMoveAsksAtOnce asks per cycle, the oldest
  // due first, so jobs checkpointing every second cannot hold up the loop.
  int asks = 0;
  while (!checkpoints_.empty() && checkpoints_.begin()->first <= now &&
         asks < sched::kMaxMoveAsksAtOnce) {
    const UnixSeconds at = checkpoints_.begin()->first;
    const int64_t seq = checkpoints_.begin()->second;
    checkpoints_.erase(checkpoints_.begin());
    auto found = by_seq_.find(seq);
    if (found == by_seq_.end()) continue;
    Active& a = *found->second;
    if (a.next_checkpoint != at || !Askable(a)) continue;
    ++asks;
    if (!AskToMove(a, now, sched::MoveOccasion::kCheckpoint, out)) {
      a.next_checkpoint = at + estimate::CheckpointOf(a.spec->checkpoint).interval_s;
      checkpoints_.emplace(a.next_checkpoint, a.row.seq);
    }
  }
}

void Reconciler::AskAtCarbonHour(UnixSeconds now, std::vector<JobUpdate>* out) {
  // At most sched::kMaxMoveAsksAtOnce per cycle, the earliest hour first;
  // the rest are asked in the next cycles. A job asked this cycle already
  // (at its checkpoint, or when GPUs freed) has had the answer.
  int asks = 0;
  while (!carbon_hours_.empty() && carbon_hours_.begin()->first <= now &&
         asks < sched::kMaxMoveAsksAtOnce) {
    const UnixSeconds at = carbon_hours_.begin()->first;
    const int64_t seq = carbon_hours_.begin()->second;
    carbon_hours_.erase(carbon_hours_.begin());
    auto found = by_seq_.find(seq);
    if (found == by_seq_.end()) continue;
    Active& a = *found->second;
    if (a.next_hour != at || a.done || a.row.state != JobState::kRunning) continue;
    a.next_hour = (now / sched::kCarbonHourS + 1) * sched::kCarbonHourS;
    // Stopping, or waiting on a backend call: asked at the next hour.
    if (!Askable(a) || a.asked == now) {
      carbon_hours_.emplace(a.next_hour, seq);
      continue;
    }
    ++asks;
    if (!AskToMove(a, now, sched::MoveOccasion::kCarbonHour, out)) {
      carbon_hours_.emplace(a.next_hour, seq);
    }
  }
}

void Reconciler::AskOnFreedGpus(UnixSeconds now, std::vector<JobUpdate>* out) {
  if (!gpus_freed_) return;
  gpus_freed_ = false;
  // The jobs on CPU nodes that have run past their restart, those asked
  // this way least recently first, then in the order they came.
  std::vector<std::pair<UnixSeconds, int64_t>> due;
  for (auto it = on_cpu_.begin(); it != on_cpu_.end();) {
    auto found = by_seq_.find(*it);
    if (found == by_seq_.end() || !found->second->placed ||
        found->second->placed->candidate.kind != sched::CandidateKind::kCpuNode ||
        found->second->done) {
      it = on_cpu_.erase(it);
      continue;
    }
    const Active& a = *found->second;
    ++it;
    if (!Askable(a) || a.asked == now) continue;  // asked at its checkpoint this cycle
    const estimate::CheckpointTerms t = estimate::CheckpointOf(a.spec->checkpoint);
    if (now - a.run_since - OverheadOf(a, t) > 0) due.emplace_back(a.freed_ask, a.row.seq);
  }
  const size_t n = std::min<size_t>(due.size(), sched::kMaxMoveAsksAtOnce);
  std::partial_sort(due.begin(), due.begin() + static_cast<std::ptrdiff_t>(n), due.end());
  for (size_t i = 0; i < n; ++i) {
    Active& a = *by_seq_.at(due[i].second);
    a.freed_ask = now;
    AskToMove(a, now, sched::MoveOccasion::kGpusFreed, out);
  }
}

bool Reconciler::AskToMove(Active& a, UnixSeconds now, sched::MoveOccasion occasion,
                           std::vector<JobUpdate>* out) {
  if (!fleet_ || !fleet_->scheduler) return false;
  a.asked = now;
  const estimate::CheckpointTerms t = estimate::CheckpointOf(a.spec->checkpoint);
  FleetState& fs = *fleet_;
  const JobId jid(static_cast<uint32_t>(a.row.seq));
  const Allocation* held = fs.ledger.Find(jid);
  auto node = fs.by_name.find(a.row.placement.node);
  if (!held || node == fs.by_name.end()) return false;
  const int64_t progress_s = std::max<int64_t>(0, now - a.run_since - OverheadOf(a, t));
  const double done = WorkDoneBy(a, now, false);
  const sched::QueuedJob left = sched::WithWorkLeft(a.full ? *a.full : *a.queued, done);
  sched::RunningJob r;
  r.job = &left;
  r.placement = a.placed->candidate;
  r.placement.node = node->second;  // the fleet may have been rebuilt since
  r.where = a.placed->where;
  r.checkpoints = a.checkpoints + (t.interval_s > 0 ? static_cast<int>(progress_s / t.interval_s) : 0);
  r.checkpoint_gb = estimate::CheckpointGb(*a.spec);
  r.last_move = a.last_move;
  r.occasion = occasion;
  sched::MoveDecision m = fs.scheduler->Reconsider(r, SnapshotOf(fs, now), &fs.ledger);
  if (m.verdict != sched::MoveVerdict::kMove || !m.placement ||
      m.placement->kind != sched::DecisionKind::kPlace || !m.placement->allocation) {
    // A wait for the new place (kDefer) is not taken: the daemon launches
    // what it can start now. Staying is said in the job's reason.
    if (m.verdict == sched::MoveVerdict::kMove) {
      m.reason = "stays: the better place " +
                 (m.quote ? m.quote->to : std::string()) + " does not start now";
    }
    if (m.reason != a.row.reason) {
      a.row.reason = m.reason;
      JobUpdate u;
      u.job_id = a.row.id;
      u.reason = m.reason;
      out->push_back(u);
    }
    return false;
  }
  a.checkpoints = r.checkpoints;
  a.work_done = done;
  a.move_to = std::make_unique<sched::Decision>(std::move(*m.placement));
  a.stop_kind = StopKind::kMove;
  metrics_->moves++;
  const int64_t grace = GraceOf(a);
  Transition(a, JobState::kCheckpointing,
             m.reason + "; SIGTERM, " + std::to_string(grace) + "s to checkpoint before SIGKILL",
             now, out);
  StopAttempt(a, "", now, out);  // retried until the backend takes it
  return true;
}

void Reconciler::MoveStopped(Active& a, const std::string& how, UnixSeconds ended,
                             UnixSeconds now, std::vector<JobUpdate>* out) {
  ReleaseAttempt(a, ended, out);  // billed while its placement is still known
  std::unique_ptr<sched::Decision> to = std::move(a.move_to);
  a.placed.reset();
  Unqueue(a);
  Transition(a, JobState::kQueued,
             "stopped at its checkpoint to move; the process " + how +
                 "; the next attempt resumes from its checkpoint directory",
             now, out, RequeueUpdate());
  std::string why = "the fleet changed";
  if (a.row.cancel_requested) {
    a.queued.reset();
    return;  // queued, the cancel ends it
  }
  if (to && fleet_ && fleet_->scheduler && a.pending == PendingCall::kNone) {
    Status st = fleet_->scheduler->Commit(*to, SnapshotOf(*fleet_, now), &fleet_->ledger);
    if (st.ok()) {
      a.last_move = now;
      RecordPlacement(a, *to, "moved to", now, out);
      RequestLaunch(a);
      return;
    }
    why = st.message();
  }
  // Decided again for the work left, as after a preemption.
  a.queued.reset();
  Note(a.row.id, "the place it was moving to is no longer free (" + why + "); decided again",
       now, out);
}

}  // namespace meridian::control
