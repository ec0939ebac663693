// Scheduler: a profile's plugins bound to a fleet, and the one placement
// path. Decide(job, snapshot) answers, for one queued job at snapshot.now:
//   run now       kPlace (or kPreempt / kDefer) with the allocation to commit
//   ever?         kReject (Unresolvable) when no candidate could ever pass the
//                 filters, even on an empty fleet, with the reasons per filter
//   earliest start kWait with `start`: when capacity frees on a node the job
//                 could use, from the running allocations' expected ends
// Decide reads the snapshot only; Commit is the single step that mutates the
// ledger (and calls Reserve/Bind plugins).
//
// How a decision runs (docs/scheduler.md has the details):
//   1. PreFilter plugins (reject early, narrow regions/models)
//   2. candidates from the indexes: per demand (GPU model) the pools of the
//      allowed regions, nodes with enough free GPUs (or a free MIG instance)
//      in fleet order; gangs within a cluster; elastic offerings pre-grouped
//      per (model, GPU count, pricing model) and merged across the job's
//      models by the run's cost; then AddCandidates plugins. Generated in
//      batches and filtered until max_*_candidates are feasible (bounded, as
//      kube-scheduler's percentageOfNodesToScore).
//   3. Score plugins, NormalizeScore per plugin, weights; best total wins
//      (ties: first, or seeded random); the ledger's CanReserve and the Permit
//      plugins check it, else the next best is tried.
//   4. nothing feasible: PostFilter plugins (preemption); else the "ever" pass
//      over one representative node per node group against an empty ledger;
//      Unresolvable if nothing passes, else the earliest start.
//
// Not thread-safe: a Scheduler owns its scratch space and its plugins' state;
// use one per thread. The same snapshot, profile and seed give the same
// decisions: randomness is seeded per decision from (seed, job id, now).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "sched/decision.h"
#include "sched/move.h"
#include "sched/plugin.h"
#include "sched/profile.h"
#include "sched/snapshot.h"

namespace meridian::sched {

struct SchedulerOptions {
  uint64_t seed = 0;
  std::optional<ExplainLevel> explain;  // overrides the profile's
  // false: DecideInCycle decides every job in full (the reference the kept
  // verdicts are tested against).
  bool keep_waits = true;
};

// How a cycle hands its decisions over.
struct CycleHandover {
  // Kept verdicts handed to `decided` too. A caller for whom a kept wait
  // changes nothing (its retry_at is the one it was given with the full
  // decision) sets it false; kept_verdicts() counts them.
  bool report_kept = true;
  // kPreempt decisions committed at once (victims released, the preemptor
  // reserved), as the simulator wants. The daemon sets it false: it stops
  // the victims and the preemptor stays queued, decided again once they
  // have stopped.
  bool commit_preemptions = true;
};

class Scheduler {
 public:
  // Builds the profile's plugins (argument errors name their field) and
  // prepares them for `fleet`.
  static Result<std::unique_ptr<Scheduler>> Create(const Profile& profile,
                                                   std::shared_ptr<const Fleet> fleet,
                                                   const SchedulerOptions& options = {});
  ~Scheduler();

  const Profile& profile() const;
  const Fleet& fleet() const;

  // The decision for `job` against `snap` (see the class comment).
  Decision Decide(const QueuedJob& job, const Snapshot& snap);

  // At a checkpoint of running job `r` (snap.ledger holds its allocation):
  // stay, or move to the placement Decide gives its work left with its own
  // capacity counted free, when the profile's move plugin (migrate) finds
  // the saving worth the move's cost (sched/move.h). `ledger` is snap.ledger:
  // the job's allocation is set aside on it while the decision is made
  // (Ledger::SetAside) and it is exactly as before on return; a caller
  // applying a move releases the job, then commits the placement.
  MoveDecision Reconsider(const RunningJob& r, const Snapshot& snap, Ledger* ledger);

  // Decide for a job of a cycle's queue, deciding again only what an event
  // could change: a job that waited with no feasible candidate keeps that
  // verdict (Decision::kept) while none of its plugins' WaitInputs changed
  // (no capacity it could use freed, no victim placed, the market and the
  // clock as they declare), its retry_at has not come, and no cycle plugin
  // wants a full decision for it. The verdicts are the ones Decide gives:
  // only the work is saved. A job whose QueuedJob changes while it waits
  // must be forgotten first (Forget); commits and releases forget by themselves.
  Decision DecideInCycle(const QueuedJob& job, const Snapshot& snap);
  // DecideInCycle's kept verdict alone, written into `d` (a Decision reused
  // across jobs: nothing is allocated); false: `job` needs a full decision.
  bool KeepWait(const QueuedJob& job, const Snapshot& snap, Decision* d);
  // Decide in full, keeping the verdict when it is a wait DecideInCycle may
  // hand back later: for a caller whose KeepWait just said false.
  Decision DecideAndKeep(const QueuedJob& job, const Snapshot& snap);
  void Forget(JobId job);
  // How many verdicts DecideInCycle kept, and decided in full, so far.
  int64_t kept_verdicts() const;
  int64_t full_decisions() const;

  // Applies a kPlace/kPreempt/kDefer decision to `ledger`: unreserves the
  // victims, reserves the allocation, then Reserve and Bind plugins; on a
  // failure everything done is undone. Other kinds are a no-op.
  Status Commit(const Decision& d, const Snapshot& snap, Ledger* ledger);
  // Releases `job` (finished, cancelled or preempted): ledger and Reserve plugins.
  void Release(JobId job, const Snapshot& snap, Ledger* ledger);

  // `jobs` in the order the QueueSort plugins give (then submission time,
  // sequence, id). Stable and deterministic.
  std::vector<const QueuedJob*> SortQueue(const Snapshot& snap,
                                          std::span<const QueuedJob* const> jobs) const;

  // One scheduling cycle: sorts `jobs`, decides each in turn against
  // `ledger` at snap.now, commits placements as it goes (later jobs see
  // earlier ones' allocations). With head_of_line_blocking the cycle stops at
  // the first job that waits. Returns the decisions in decision order.
  std::vector<Decision> RunCycle(const Snapshot& snap, std::span<const QueuedJob* const> jobs,
                                 Ledger* ledger);
  // The same cycle, handing each decision to `decided` as it is made (after
  // its commit) instead of collecting them: a kept verdict costs no
  // allocation. `decided` must not change the ledger or the queue.
  void RunCycle(const Snapshot& snap, std::span<const QueuedJob* const> jobs, Ledger* ledger,
                const std::function<void(Decision&)>& decided, CycleHandover handover = {});

  // The queue kept here across cycles, for a caller that tells what enters
  // and leaves it instead of handing the whole queue to every cycle (the
  // simulator). Enqueue: a new job, or one queued again or changed (decided
  // afresh; `job` must stay where it is until dequeued). Dequeue: placed,
  // rejected, cancelled.
  void Enqueue(const QueuedJob& job);
  void Dequeue(JobId job);
  size_t queued() const;
  // The queued jobs, in the order they were enqueued.
  std::vector<const QueuedJob*> Queued() const;
  // One cycle over the queue: the decisions RunCycle(snap, Queued(), ledger,
  // decided, {.report_kept = false, .commit_preemptions}) makes, in the same order (a queue of one: DecideInCycle
  // and its commit, without cycle plugins). Where the profile allows it (no
  // head-of-line blocking, no cycle plugin, sort keys of the job alone), it
  // looks only at the jobs an event could change (sched/queue_state.h): the
  // unkept ones, and kept verdicts whose inputs moved, a wait shape's in
  // queue order only while a free may still fit it. Placed and rejected
  // jobs stay queued until the caller dequeues them.
  // With commit_preemptions false, a preemptor whose decision was not
  // committed stays queued and is decided in full at the next cycle.
  void RunQueue(const Snapshot& snap, Ledger* ledger, const std::function<void(Decision&)>& decided,
                bool commit_preemptions = true);

  // The same cycle for a caller that commits decisions itself (the daemon
  // commits placements at once but a preemption only once its victims have
  // stopped): BeginCycle, then for each job in SortQueue order Decide, the
  // caller's commit, and Decided; stop when EndsCycle says so; then EndCycle.
  // Without these, cycle plugins (backfill's reservation for the queue's
  // head) never see the decisions.
  void BeginCycle(const Snapshot& snap);
  void Decided(const Snapshot& snap, const QueuedJob& job, Decision* d);
  bool EndsCycle(const Decision& d) const;  // head_of_line_blocking and a job that waits
  void EndCycle();

  // The scheduler's internals (sched/cycle.h); opaque outside sched/.
  struct Impl;

 private:
  explicit Scheduler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace meridian::sched
