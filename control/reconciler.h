// Reconciler: the daemon's loop that turns stored jobs into running processes.
// Each cycle it
//   1. picks up new jobs and cancel requests: it finds them in the store by
//      state (queued, cancel_requested), so those written through any
//      replica's API count, whatever order their transactions committed in,
//   2. refreshes the fleet (the backend's own nodes plus nodes registered
//      through the API; registered nodes without a heartbeat for
//      node_timeout_s go down) and rebuilds the scheduler when it changed,
//   3. reads what the backend saw (Poll) and moves jobs on (running,
//      succeeded, failed, cancelled; preempted -> requeued, keeping the
//      checkpoint directory so the next attempt resumes from it),
//   4. runs the scheduling core over the queue (sched::Scheduler with the
//      configured profile, the fleet, the ledger of running attempts and the
//      catalog's market) and acts on each decision: launch, stop victims with
//      their grace period, fail what can never run,
//   5. writes every transition (with its event) in one store transaction.
// A job requeued after a run (preempted, lost) is decided again with its
// measured profile: the CPU request and GPU choice the telemetry sampler's
// recommendation calls for (telemetry/adjust.h), noted in its events.
// A job is recorded "scheduled" with its placement before the backend
// launches it, and "starting" with the backend's handle after.
//
// A launch that fails transiently (control/backend.h, IsTransient) is tried
// again with backoff up to BackendRetryPolicy::launch_attempts tries, the job
// staying "scheduled" with its allocation and each failure a note in its
// events; then, or at once for a permanent error, the job fails with the
// reason. A stop (cancel, preemption) that fails transiently is sent again
// with backoff until the backend takes it; one the backend refuses for good
// (it does not know the attempt) ends the attempt as lost.
//
// Only the leader among the daemons serving one database runs the loop
// (control/leadership.h); it may be started and stopped many times, each
// Start forgetting what the last run held and recovering from the store.
//
// After a restart, or on taking the lead, Start() re-adopts the attempts that were running
// (Backend::Adopt with the stored handle), rebuilds the ledger from their
// stored allocations, adopts attempts that were launched but whose handle was
// not committed (Backend::FindLaunched, by the attempt's name) and requeues
// jobs that were scheduled but not launched.
//
// Threading: the loop runs on its own thread and is the only caller of the
// backend and the only writer of the state below; Notify, RequestCancel and
// Plan may be called from any thread. No launch or stop is made under the
// state's mutex, so a backend slow to answer (a hung kubectl, an sbatch
// waiting on a slurmctld that does not answer) holds this thread only, not
// the API's plans. A cycle asks for the backend's nodes and observations
// (Nodes, Poll) before it takes the mutex; under it, it decides and records
// each launch and stop as a BackendCall (the job's `pending` keeps every
// other step off it); it releases the mutex, makes the calls, and takes it
// again to apply the answers (CallBackend). Applying re-checks the job: a
// launch whose job changed meanwhile is stopped, and a cancel that came
// while the backend was busy stops the attempt just launched. Recovery's
// Adopt and FindLaunched (at Start, after a store write failed, and their
// retries) are BackendCalls too, so a backend hung while it adopts holds up
// no plan either.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "catalog/catalog.h"
#include "control/backend.h"
#include "control/metrics.h"
#include "control/replica_set.h"
#include "control/retention.h"
#include "control/store.h"
#include "control/telemetry_sampler.h"
#include "core/fleet.h"
#include "core/job.h"
#include "estimate/serving.h"
#include "sched/decision.h"
#include "sched/fleet.h"
#include "sched/profile.h"
#include "sched/move.h"

namespace meridian::sched {
struct ModelDemand;
}

namespace meridian::control {

// Renders a dry-run decision as `meridian plan -o json --fleet` does (the CLI
// passes its renderer in, so control does not depend on cli).
using PlanRenderer =
    std::function<nlohmann::json(const JobSpec& job, const sched::Decision& decision,
                                 const sched::Fleet& fleet, const sched::Profile& profile,
                                 UnixSeconds at)>;

struct ReconcilerOptions {
  std::shared_ptr<const catalog::Catalog> catalog;
  sched::Profile profile;
  std::string region = "gcp:us-central1";  // catalog region of the daemon's nodes
  double gpu_hour_usd = 0;                 // what a GPU-hour on them costs
  double vcpu_hour_usd = kDefaultVcpuHourUsd;    // a run on CPUs: per vCPU-hour held
  double ram_gib_hour_usd = kDefaultRamGibHourUsd;  // and per GiB-hour of RAM held
  std::string state_dir;                   // jobs/<id>/{logs,checkpoint}
  int64_t interval_ms = 200;
  int64_t node_timeout_s = 30;
  int max_requeues = 3;                    // lost attempts requeued before failing
  BackendRetryPolicy backend_retry;        // transient launch and stop failures
  std::function<UnixSeconds()> clock;      // default: the system clock
  std::function<int64_t()> steady_ms;      // retry timers; default: the monotonic clock
  PlanRenderer plan_renderer;
  // A running job's measured profile (the telemetry sampler's view); when
  // set, a requeued job's next attempt asks for what it measured
  // (telemetry/adjust.h).
  std::function<std::optional<JobTelemetry>(const std::string& job_id)> measured;
  telemetry::Thresholds thresholds;        // the telemetry config's (MIG headroom)
  // false: every waiting job is decided in full at every cycle, the
  // reference the kept queue (sched/queue_state.h) is tested and benchmarked
  // against.
  bool keep_waits = true;
  RetentionOptions retention;              // what is deleted, and when (control/retention.h)
  // Whether this daemon's lease surely still holds (Leadership::LeaseHeld),
  // asked before each backend call; null: always (alone on its database).
  std::function<bool()> lease_held;
  // The lease epoch this daemon leads at (Leadership::epoch): given to
  // Backend::Fence before recovery and carried by every launch, so that a
  // backend shared with other replicas refuses a deposed leader's launch.
  // Null: 0, unfenced (alone on its database).
  std::function<int64_t()> epoch;
  // Told when the backend refused a launch as Deposed: step down.
  std::function<void()> deposed;
};

// Why a queued job is still queued: the last cycle's decision for it, kept so
// the API can show the explanation without deciding again.
struct WaitExplanation {
  std::string decision;  // "wait", "defer", "preempt", "error", "none" (no schedulable nodes)
  std::string message;   // the job's reason
  struct Filter {
    std::string plugin;
    uint32_t rejected = 0;
    std::vector<std::string> examples;
  };
  std::vector<Filter> filters;               // the filters that turned candidates away
  std::optional<UnixSeconds> earliest_start;  // when capacity it could use frees, if known
  std::string start_reason;
  std::string pricing;  // the pricing model it waits for ("owned" on the fleet)
  std::string pricing_reason;
  uint32_t candidates = 0, feasible = 0;
};

// One schedulable node's MIG layout as the scheduler sees it.
struct MigSlice {
  std::string profile;  // "1g.10gb"
  int start = 0, span = 0;
};
struct NodeLayout {
  int mig_gpus = 0;             // GPUs in MIG mode
  std::vector<MigSlice> slices;  // the layout of each MIG-mode GPU
};

class Reconciler {
 public:
  Reconciler(Store* store, Backend* backend, Metrics* metrics, ReconcilerOptions options);
  ~Reconciler();

  // Forgets what an earlier run held, recovers from the store (see the class
  // comment), then starts the loop.
  Status Start();
  // Stops the loop (and its writes); Start may follow.
  void Stop();
  // Wakes the loop now (a submission, a cancel, a node change).
  void Notify();
  void RequestCancel(const std::string& job_id);
  // The decision the scheduler would take for `job` now, without acting.
  Result<nlohmann::json> Plan(const JobSpec& job);
  // One cycle, on the caller's thread (the loop calls it; so can a benchmark
  // that did not Start the loop).
  Status RunCycle();
  // Recovery alone (Start calls it), for benchmarks that drive RunCycle.
  Status Recover();

  // The explanations of the queued jobs (each its last decision's), by job id.
  std::map<std::string, WaitExplanation> Waiting() const;
  // The MIG layout of each schedulable node, by node name.
  std::map<std::string, NodeLayout> Layouts() const;
  const ReconcilerOptions& options() const { return options_; }

  std::string LogDir(const std::string& job_id) const;
  std::string CheckpointDir(const std::string& job_id) const;

  struct Active;
  struct FleetState;
  struct BackendCall;

 private:
  void Loop();
  // Drops the state below, as a new Reconciler has it.
  void Forget();
  UnixSeconds Now() const;
  Status LoadNewJobs();
  // The rows of new queued jobs (`marks`, by seq), in one read where it can.
  Result<std::vector<JobRow>> ReadQueued(const std::vector<const Store::ActiveMark*>& marks);
  // `offered`: the backend's Nodes(), asked before the cycle took mu_.
  Status RefreshFleet(UnixSeconds now, const std::vector<BackendNode>& offered,
                      std::vector<JobUpdate>* out);
  void HandleObservation(const RunObservation& obs, UnixSeconds now, std::vector<JobUpdate>* out);
  void HandleCancels(UnixSeconds now, std::vector<JobUpdate>* out);
  // Moves at checkpoints (reconciler_move.cc): at each checkpoint of a
  // running preemptible job this daemon placed, the core's re-decision for
  // the work left (sched::Scheduler::Reconsider, judged by the profile's
  // `migrate`); a move stops the attempt at its checkpoint (SIGTERM, the
  // grace period) and, once it has stopped, starts the job on the new place
  // with the same checkpoint directory (MoveStopped). A stay is the job's
  // reason, not an event.
  void ReconsiderRunning(UnixSeconds now, std::vector<JobUpdate>* out);
  // After the cycle's scheduling step, when GPUs of the fleet were released
  // (ReleaseAttempt): the running jobs on CPU nodes are asked too, between
  // their checkpoints (the queue had the GPUs first); at most
  // sched::kMaxMoveAsksAtOnce, those asked this way least recently first.
  void AskOnFreedGpus(UnixSeconds now, std::vector<JobUpdate>* out);
  // Whether `a` may be asked: running on a placement this daemon made, with
  // no stop or backend call under way.
  bool Askable(const Active& a) const;
  // Asks the core about `a` and starts the move it decides (true), or says
  // why it stays in its reason (false).
  void AskAtCarbonHour(UnixSeconds now, std::vector<JobUpdate>* out);
  bool AskToMove(Active& a, UnixSeconds now, sched::MoveOccasion occasion,
                 std::vector<JobUpdate>* out);
  // The first checkpoint of `a`'s attempt seen running from `now`.
  void StartCheckpoints(Active& a, UnixSeconds now);
  // The share of `a`'s whole work done by `t`: what was saved before its
  // attempt plus the attempt's progress (its time running, less the
  // restart, over the time its allocation was planned for), counted to its
  // last checkpoint when `to_checkpoint`, as a stopped run keeps it in the
  // simulator (sim/engine.cc, Interrupt). `a.work_done` when the daemon did
  // not place the attempt or no longer holds its allocation.
  double WorkDoneBy(const Active& a, UnixSeconds t, bool to_checkpoint) const;
  // `a`'s attempt stopped at the checkpoint of a move: its GPUs released,
  // the move's placement committed and launched; queued and decided again
  // if the place was taken meanwhile.
  void MoveStopped(Active& a, const std::string& how, UnixSeconds ended, UnixSeconds now,
                   std::vector<JobUpdate>* out);
  // Records `d` (kPlace, committed on the ledger) as `a`'s next attempt:
  // "scheduled" with its placement and allocation, `message` as the event.
  void RecordPlacement(Active& a, const sched::Decision& d, const std::string& message,
                       UnixSeconds now, std::vector<JobUpdate>* out);
  Status Schedule(UnixSeconds now, std::vector<JobUpdate>* out);
  // The spec the next decision uses: the stored one, or the one its measured
  // profile adjusts (with a note in the job's events).
  std::shared_ptr<const JobSpec> ProfiledSpec(Active& a, UnixSeconds now,
                                              std::vector<JobUpdate>* out);
  // Records the launch of `a`'s attempt (a.row.placement) as a BackendCall.
  void RequestLaunch(Active& a);
  // Applies the backend's answer to a launch: "starting" with the handle, or
  // LaunchFailed.
  void LaunchAnswered(Active& a, const Result<std::string>& handle, UnixSeconds now,
                      std::vector<JobUpdate>* out);
  void LaunchFailed(Active& a, const Status& st, UnixSeconds now, std::vector<JobUpdate>* out);
  // Records the stop a.stop_kind asks for as a BackendCall; `on_stopped` is
  // noted if its first try succeeds.
  void RequestStop(Active& a, std::string on_stopped = "");
  // A service's replica set (reconciler_replicas.cc, control/replica_set.h).
  // Stops the job's attempt: its process (RequestStop), or every replica.
  void StopAttempt(Active& a, const std::string& on_stopped, UnixSeconds now,
                   std::vector<JobUpdate>* out);
  void StopReplicas(Active& a, const std::string& on_stopped, UnixSeconds now,
                    std::vector<JobUpdate>* out);
  void LaunchReplica(Active& a, Replica& r);
  void StopReplica(Active& a, Replica& r);
  // Writes the set into the job's handle, with `message` as an event ("": none).
  void NoteReplicas(Active& a, const std::string& message, UnixSeconds now,
                    std::vector<JobUpdate>* out);
  void ReplicaCallAnswered(const BackendCall& call, UnixSeconds now, std::vector<JobUpdate>* out);
  void ReplicaStopAnswered(Active& a, Replica& r, const Status& st, UnixSeconds now,
                           std::vector<JobUpdate>* out);
  void ReplicaLaunchFailed(Active& a, Replica& r, const Status& st, UnixSeconds now,
                           std::vector<JobUpdate>* out);
  // A replica whose process ended (`why`) is launched again after a backoff.
  void ScheduleRestart(Active& a, Replica& r, const std::string& why, UnixSeconds now,
                       std::vector<JobUpdate>* out);
  // A replica reclaimed from outside (control/replica_set.h) is launched
  // again at once, without a backoff.
  void ReplaceReclaimed(Active& a, Replica& r, const std::string& why, UnixSeconds now,
                        std::vector<JobUpdate>* out);
  // An observation of a replica's process (false: `o` is no replica's).
  bool HandleReplicaObservation(const RunObservation& o, UnixSeconds now,
                                std::vector<JobUpdate>* out);
  // Once every replica of a set told to stop has stopped, the set's attempt
  // ends (cancelled, or preempted and requeued), as `last` or a SIGTERM.
  void EndReplicaSetIfStopped(Active& a, std::optional<RunObservation> last, UnixSeconds now,
                              std::vector<JobUpdate>* out);
  // Takes back a stored replica set as RecoverRow takes an attempt
  // (reconciler_replica_recovery.cc): each recorded replica's process
  // adopted (Backend::Adopt), each other replica's next attempt looked up by
  // its name (Backend::FindLaunched) in case it was launched but not
  // recorded, and adopted if found. One that ended meanwhile is restarted,
  // or stopped when the service was being stopped. Both are BackendCalls.
  void AdoptReplicaSet(Active& a, std::vector<Replica> set, const std::string& when,
                       UnixSeconds now, std::vector<JobUpdate>* out);
  void AdoptReplica(Active& a, Replica& r, const std::string& when);
  void FindReplicaLaunch(Active& a, Replica& r, const std::string& when);
  void ReplicaRecoveryAnswered(Active& a, Replica& r, const BackendCall& call, UnixSeconds now,
                               std::vector<JobUpdate>* out);
  void ReplicaFindAnswered(Active& a, Replica& r, const BackendCall& call, UnixSeconds now,
                           std::vector<JobUpdate>* out);
  // Restarts whose backoff has passed, stops sent again, and the set's size
  // for the hour (SizeReplicaSet).
  void KeepReplicaSets(UnixSeconds now, std::vector<JobUpdate>* out);
  // The replicas `a`'s set runs in the UTC hour of `now`: with a load
  // (latency.rps, rps_by_hour), estimate::ReplicaSetSize of that hour's
  // load on the placed node's GPU model under the profile's
  // realtime_replicas terms, as `simulate` and `plan` size a set; at most
  // the members placed (the scheduler's peak-hour set). Without a load,
  // every member.
  int ReplicasWanted(Active& a, UnixSeconds now);
  // The scheduler's demand of `a` on `node`'s GPU model (its request time
  // and one replica's requests per second); null when it has none there.
  const sched::ModelDemand* DemandOn(Active& a, const std::string& node);
  // Brings a.slo up to the last whole minute before `now`: the minutes since
  // a.slo.until counted from the replicas' served stretches by
  // estimate::SloMinutesOf (the rule `simulate` counts by), serving from the
  // daemon's region; the stretches counted are dropped.
  void TallyService(Active& a, UnixSeconds now);
  // When the hour's size differs from the size the set is kept at: the
  // members beyond it are stopped, those within it that were stopped are
  // started; one event says why.
  void SizeReplicaSet(Active& a, UnixSeconds now, std::vector<JobUpdate>* out);
  // Applies the backend's answer to a stop; on failure see the class comment.
  void StopAnswered(Active& a, const BackendCall& call, UnixSeconds now,
                    std::vector<JobUpdate>* out);
  // Makes the recorded calls with mu_ released (`l` holds it on entry and on
  // return), applies their answers and writes them, until no call is left.
  Status CallBackend(std::unique_lock<std::mutex>& l);
  void ApplyCall(const BackendCall& call, UnixSeconds now, std::vector<JobUpdate>* out);
  // Launches and stops whose retry time has come.
  void RetryBackendCalls(UnixSeconds now, std::vector<JobUpdate>* out);
  // A job recorded "scheduled" (or without a handle) at a restart: records
  // the lookup of its attempt by name (Backend::FindLaunched) as a
  // BackendCall; the job keeps its placement until the answer. `when` says
  // it in the events ("after a daemon restart").
  void FindUnrecordedLaunch(Active& a, const std::string& when, UnixSeconds now,
                            std::vector<JobUpdate>* out);
  // Applies the lookup's answer: the attempt adopted if the backend has it
  // under its name, else requeued; when the backend cannot say, asked again
  // with backoff (as a launch is retried).
  void FindAnswered(Active& a, const Result<std::optional<std::string>>& found,
                    const std::string& when, UnixSeconds now, std::vector<JobUpdate>* out);
  // Records the adoption of the attempt of a job stored with a handle
  // (Backend::Adopt) as a BackendCall; its allocation is held meanwhile.
  void AdoptStored(Active& a, const std::string& when);
  void AdoptAnswered(Active& a, const BackendCall& call, UnixSeconds now,
                     std::vector<JobUpdate>* out);
  // Takes a stored non-final job as Recover does (adopting its attempt).
  void RecoverRow(JobRow row, const std::string& when, UnixSeconds now,
                  std::vector<JobUpdate>* out);
  // Reads again the jobs whose change the store did not take (Flush).
  Status Resync(UnixSeconds now, std::vector<JobUpdate>* out);
  int64_t NowMs() const;
  void Transition(Active& a, JobState to, const std::string& message, UnixSeconds now,
                  std::vector<JobUpdate>* out, JobUpdate extra = {});
  void ReleaseAttempt(Active& a, UnixSeconds now, std::vector<JobUpdate>* out);
  // Active jobs in and out of active_ (and by_seq_, watch_).
  void AddActive(std::unique_ptr<Active> a);
  // `a` is looked at by the walks of every cycle (watch_) until one finds it
  // quiet again.
  void Watch(Active& a);
  // A job the walks of a cycle have nothing to do for, as long as nothing
  // moves it (a Transition or a cancel, both of which Watch it): waiting in
  // the queue, no cancel asked, no stop, no backend call made or owed, no
  // replicas.
  static bool Quiet(const Active& a);
  void EraseDone();
  // Takes `a` out of the scheduler's queue and drops its explanation: it no
  // longer waits, or its queued form is about to change.
  void Unqueue(Active& a);
  // The explanation of every waiting job when there is no fleet to decide on.
  void ExplainNoFleet(std::vector<JobUpdate>* out);
  // Writes the updates in one transaction. A state change the store did not
  // take (the job's stored state was not the expected one, the job is gone,
  // or the write failed) leaves this view apart from the store: the job is
  // read again from the store next cycle (Resync) and not launched meanwhile.
  Status Flush(std::vector<JobUpdate>* updates);

  Store* store_;
  Backend* backend_;
  Metrics* metrics_;
  ReconcilerOptions options_;
  std::unique_ptr<Retention> retention_;  // swept by the loop after each cycle
  // The profile's realtime_replicas terms (its defaults when it has none).
  estimate::AvailabilityTerms replica_terms_;

  // The state below; held for a cycle's decisions, released for its backend
  // calls (see Threading above).
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Active>> active_;
  std::unordered_map<int64_t, Active*> by_seq_;  // active_ by JobRow::seq (the scheduler's JobId)
  // The jobs of active_ that the walks of every cycle (HandleCancels,
  // RetryBackendCalls, KeepReplicaSets) look at, in active_'s order: all but
  // those waiting quietly in the queue (Quiet), which a congested cluster
  // holds by the thousand. A job enters when it is added, at every
  // Transition and when a cancel is marked; a walk that finds it Quiet takes
  // it out.
  std::map<std::string, Active*> watch_;
  // Jobs (by seq) added or moved to another state since the scheduling step
  // last looked, and those that reached a terminal state: a cycle's
  // bookkeeping follows what changed instead of walking every active job.
  std::vector<int64_t> changed_;
  std::vector<int64_t> done_;
  uint64_t queue_generation_ = 0;  // the fleet generation whose queue holds every waiting job
  std::unique_ptr<FleetState> fleet_;
  uint64_t fleet_generations_ = 0;
  std::map<std::string, uint32_t> tenant_ids_;
  std::set<std::string> resync_;  // jobs to read again from the store (Flush)
  int64_t marks_cursor_ = 0;      // Store::ChangedMarks: where the last read ended
  // Running jobs' next checkpoints (time, seq), for ReconsiderRunning; an
  // entry whose job no longer runs there is dropped when it comes due.
  std::multimap<UnixSeconds, int64_t> checkpoints_;
  std::multimap<UnixSeconds, int64_t> carbon_hours_;  // Active::next_hour, seq
  // Jobs (by seq) seen running on a CPU node, asked when GPUs free
  // (AskOnFreedGpus; an entry whose job left the CPU is dropped then), and
  // whether GPUs were released since the last such asks.
  std::set<int64_t> on_cpu_;
  bool gpus_freed_ = false;
  std::vector<BackendCall> calls_;  // decided, not yet made (CallBackend)

  mutable std::mutex explain_mu_;  // the two maps below
  // The last decision's explanation of each waiting job: updated for the
  // jobs a cycle decided, dropped for those that left the queue.
  std::map<std::string, WaitExplanation> waiting_;
  std::map<std::string, NodeLayout> layouts_;

  std::mutex inbox_mu_;
  std::set<std::string> cancels_;
  bool wake_ = false;
  bool stop_ = false;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace meridian::control
