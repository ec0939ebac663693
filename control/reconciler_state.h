// The reconciler's in-memory state: its view of each active job and of the
// fleet it schedules on. Internal to control/ (reconciler*.cc).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "control/reconciler.h"
#include "control/replica_set.h"
#include "core/ledger.h"
#include "sched/decision.h"
#include "sched/market.h"
#include "sched/queued_job.h"
#include "sched/scheduler.h"

namespace meridian::control {

// Why the backend was told to stop a job's attempt; it decides what the
// attempt's end becomes (cancelled; preempted and requeued; or moved: started
// at once on the place its checkpoint's re-decision chose).
enum class StopKind { kNone, kCancel, kPreempt, kMove };

// A backend call that failed transiently, made again once the reconciler's
// steady clock reaches next_ms.
struct BackendRetry {
  int failures = 0;
  int64_t next_ms = 0;
  // A launch whose outcome the backend could not tell after a restart
  // (FindLaunched failed): looked up by name again before any new launch.
  bool find_first = false;
};

// The backend call a job waits on: decided under the reconciler's lock, made
// once it is released, its answer applied under the lock again
// (Reconciler::CallBackend). Until then no other step acts on the job.
enum class PendingCall { kNone, kLaunch, kStop, kFind, kAdopt };

struct Reconciler::BackendCall {
  PendingCall kind = PendingCall::kNone;
  std::string job_id;  // "" for a stop of an attempt no job wants any more
  int attempt = 0;
  // A service's replica (Active::replicas) the call is for; -1: the job's
  // own attempt. A replica's calls leave the job's `pending` alone.
  int replica = -1;
  int replica_attempt = 0;  // kFind, kAdopt of a replica: its backend attempt
  LaunchRequest launch;     // kLaunch
  std::string handle;       // kStop: the attempt to stop
  int64_t grace_s = 0;      // kStop
  std::string on_stopped;   // kStop: the note a first try that succeeds adds
  std::string when;         // kFind, kAdopt: recovery's occasion, for the events
  // Not made: a launch whose "scheduled" the store did not take, or any
  // call once the lease may have lapsed (ReconcilerOptions::lease_held).
  bool skipped = false;
  // The backend's answers.
  Result<std::string> launched = Status::Internal("not made");
  Status stopped;
  Result<std::optional<std::string>> found = Status::Internal("not made");  // kFind
  Result<RunObservation> adopted = Status::Internal("not made");            // kAdopt
};

struct Reconciler::Active {
  JobRow row;
  std::shared_ptr<const JobSpec> spec;
  std::optional<sched::QueuedJob> queued;
  // The fleet generation whose scheduler holds `queued` in its queue (0:
  // none), and whether Waiting() has an explanation for the job.
  uint64_t enqueued_in = 0;
  bool explained = false;
  StopKind stop_kind = StopKind::kNone;
  bool holds = false;     // its allocation is (to be) in the ledger
  bool done = false;      // reached a terminal state this cycle
  std::optional<BackendRetry> launch_retry;  // scheduled, its launch tried again
  std::optional<BackendRetry> stop_retry;    // stop_kind set, the stop sent again
  PendingCall pending = PendingCall::kNone;  // a call on its way (BackendCall)
  // The profile measured over the attempt that just ended, until the next
  // decision applies it. This and the other parts that only some jobs have
  // for a while (`full`, `move_to`) are held apart, not inline: a congested
  // queue holds thousands of Actives, and each would carry them all.
  std::unique_ptr<JobTelemetry> measured;
  // A real-time service placed as a replica set: one process per member of
  // its allocation (control/replica_set.h); empty for any other job.
  std::vector<Replica> replicas;
  // The size the set was last kept at (ReplicasWanted); -1: not yet sized.
  int replicas_wanted = -1;
  // The service's minutes met so far, kept over its attempts (TallyService).
  ServiceTally slo;
  // Moves at checkpoints (reconciler_move.cc), for a job this daemon placed:
  // what its running attempt was placed on (the decision's choice; unset for
  // an attempt adopted after a restart, which is not reconsidered), when the
  // daemon saw it run (its clock), the share of the work saved before this
  // attempt (work_done), the checkpoints taken, its next one, when it last moved, and
  // the placement a move in progress goes to.
  std::optional<sched::ScoredCandidate> placed;
  UnixSeconds run_since = 0;
  double work_done = 0;
  // The job with all its work, kept while `queued` is its form for the work
  // left (work_done > 0 when it was queued): what the work left is scaled from.
  std::unique_ptr<sched::QueuedJob> full;
  int checkpoints = 0;
  UnixSeconds next_checkpoint = 0;
  std::optional<UnixSeconds> last_move;
  std::unique_ptr<sched::Decision> move_to;
  UnixSeconds freed_ask = 0;  // the last ask when fleet GPUs freed (AskOnFreedGpus); 0: none
  // The next turn of a UTC hour it is asked at (AskAtCarbonHour), for a job
  // checkpointing less often; 0: none. And the last ask of any kind.
  UnixSeconds next_hour = 0;
  UnixSeconds asked = 0;
};

// Records a call of `kind` for `a`'s attempt in `calls` and marks `a` as
// waiting on it; the caller fills in what the kind needs.
inline Reconciler::BackendCall& RecordCall(Reconciler::Active& a, PendingCall kind,
                                           std::vector<Reconciler::BackendCall>* calls) {
  Reconciler::BackendCall call;
  call.kind = kind;
  call.job_id = a.row.id;
  call.attempt = a.row.attempts;
  a.pending = kind;
  calls->push_back(std::move(call));
  return calls->back();
}

struct Reconciler::FleetState {
  std::string signature;
  uint64_t generation = 0;  // a new one for every fleet built
  std::vector<NodeRow> nodes;  // schedulable nodes, fleet order (node i = cluster i)
  std::vector<std::string> without_agent;  // ready registered nodes: never placed on (kNoAgentReason)
  std::map<std::string, NodeId> by_name;
  std::shared_ptr<const sched::Fleet> fleet;
  std::unique_ptr<sched::Scheduler> scheduler;
  Ledger ledger;
  std::unique_ptr<sched::CatalogMarket> market;
};

// Replica `index` of `set`; null if it has none.
Replica* FindReplica(std::vector<Replica>& set, int index);
// A call of `kind` for replica `r` of `a`'s current attempt; it leaves the
// job's `pending` alone (the replica's marks it).
Reconciler::BackendCall ReplicaCall(PendingCall kind, const Reconciler::Active& a,
                                    const Replica& r);

// An event for `job_id` that changes nothing else.
inline void Note(const std::string& job_id, const std::string& message, UnixSeconds now,
                 std::vector<JobUpdate>* out) {
  JobUpdate u;
  u.job_id = job_id;
  u.message = message;
  u.at = now;
  out->push_back(std::move(u));
}

// The update of a job queued again after an attempt: its placement, handle
// and allocation cleared with its start and end times.
inline JobUpdate RequeueUpdate() {
  JobUpdate u;
  u.clear_ended = true;
  u.placement = Placement{};
  u.handle = "";
  u.allocation_json = "";
  return u;
}

int64_t GraceOf(const JobSpec& s);
// The grace period a stop of `a` gives: its spec's, or the default when its
// stored spec did not parse.
inline int64_t GraceOf(const Reconciler::Active& a) { return a.spec ? GraceOf(*a.spec) : 30; }
// How an attempt ended, in the job's events: "exited with code 3",
// "killed by signal 9", "lost: <why>".
std::string DescribeEnd(const RunObservation& o);
// What the backend is asked to start for `a`'s attempt: its spec, where it
// was placed and what its allocation holds there.
LaunchRequest LaunchRequestFor(const Reconciler::Active& a, const std::string& checkpoint_dir,
                               const std::string& log_dir);
nlohmann::json AllocationToJson(const Allocation& a, const Reconciler::FleetState& fs);
std::optional<Allocation> AllocationFromJson(const std::string& text, JobId job, TenantId tenant,
                                             const Reconciler::FleetState& fs);

}  // namespace meridian::control
