// The discrete-event engine of `meridian simulate`: replays a Trace through
// the scheduling core (sched::Scheduler with a profile) against a fleet and
// the ReplayMarket, on a virtual clock. It has no scheduling logic of its
// own: it advances time, hands the queue to the scheduler at event times,
// applies the decisions (runs, deferrals, preemptions, rejections) and
// accounts for what happened.
//
// Events, in a priority queue by (time, kind, sequence): run ends, spot
// reclaims (the offering's count falls below what a lease and the leases
// started before it hold: sim/spot_leases.h, newest first), fleet node
// failures (when EngineOptions::node_mtbf_h is set), flex-start's
// 7-day limit, flex-start requests cancelled unserved, deferred starts; and
// arrivals read in order from the trace. After all events of one instant,
// one scheduling cycle (Scheduler::RunCycle over every waiting job; a lone
// waiting job is decided by Decide + Commit, which is the same cycle) runs
// if anything arrived or was released. Cost grows with events, not time.
// The scheduler sees the market less the run's own spot leases, so jobs
// share each offering's spot count; a spot lease whose instances another
// lease of the same cycle took is not started, and its job is queued again.
//
// Progress: a job's run on a placement lasts its recorded duration_s where
// the trace gives one, else the estimator's time for the placement
// (ModelDemand::run_hours for the chosen model, mig_run_hours on a MIG slice,
// the CPU fallback's slowdown on a CPU node; spot at on-demand speed: rework
// comes from the replayed reclaims). Checkpoints are every
// checkpoint.interval of progress (the estimator's default, 30 min, when
// unstated); a reclaim, a preemption or flex-start's limit loses the progress
// since the last one, and the next run begins with checkpoint.restart_overhead
// (default 5 min). Checkpoints are computed when a run stops, not scheduled
// as events (but for moves, below). A requeued job is queued with its run hours scaled to the work
// left, so the core sees what remains.
//
// Moves (engine_migrate.cc): under a profile with a `migrate` plugin, each
// checkpoint of a running preemptible job is an event after whose instant's
// cycle (the queue has what freed first) the core's Scheduler::Reconsider
// (sched/move.h) is asked, with the work left, whether to move. A move ends the run at the checkpoint (nothing lost), charges the
// checkpoint's egress from the quote (checkpoint GB x the catalog's $/GB),
// releases the place and commits the new one, whose run begins with the
// restart overhead plus the quote's transfer time. The checkpoint's size is
// estimate::CheckpointGb: the job's checkpoint.size_gb, else the training
// state the memory model holds (16 B x model.params_b; 0 GB without it).
// When fleet GPUs free, the running jobs on a CPU node are asked too,
// between checkpoints, after that instant's cycle as well, at most
// sched::kMaxMoveAsksAtOnce at once; a move then keeps the work up to that
// moment (the job saves its state when stopped, the contract serve assumes
// too).
//
// Preemptible real-time services (sim/service_replicas.h): under a profile
// with realtime_replicas and spot, a preemptible service the scheduler places
// as an on-demand replica set runs its replicas one by one, on spot with
// on-demand fallback, each with its own spot lease (kReplicaReclaim events),
// bill and span of serving; a reclaimed replica is replaced at once, and
// every hour the set moves on-demand replicas back to spot where it can. The
// engine places these replicas itself (the scheduler placed the set), the
// one placement rule of its own. Files: engine.cc (events, the run loop, a
// job's life), engine_place.cc (a decision's placement), engine_replicas.cc
// (replica sets), engine_migrate.cc (moves), engine_impl.h (the class they share).
//
// Reproducible bit for bit: the same trace, fleet, profile, market and seed
// give the same outcomes (the scheduler's randomness is seeded per decision;
// the market's draws per job and attempt). Not thread-safe; independent runs
// may go on in parallel threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "sched/elastic.h"
#include "sched/fleet.h"
#include "sched/profile.h"
#include "sched/queued_job.h"
#include "sim/market_replay.h"
#include "sim/metrics.h"
#include "sim/mig_cycle.h"
#include "sim/service_slo.h"
#include "sim/trace.h"

namespace meridian::sim {

// What every policy's run shares, read-only.
struct World {
  std::shared_ptr<const catalog::Catalog> catalog;
  std::shared_ptr<const sched::Fleet> fleet;
  std::shared_ptr<const ReplayMarket> market;          // its start is the trace's second 0
  std::shared_ptr<const sched::ElasticIndex> elastic;  // nullptr: no elastic capacity
};

// The trace's shapes in queued form: MakeQueuedJob once per Trace::specs
// entry (not once per job), shared by every policy's run; each job is a copy
// with its own id, submission, deadline and duration.
class JobShapes {
 public:
  static JobShapes Make(const Trace& trace, const catalog::Catalog& catalog);
  // nullptr when the shape could not be queued (refusal() says why).
  const sched::QueuedJob* Of(uint32_t spec) const {
    return spec < shapes_.size() && shapes_[spec] ? &*shapes_[spec] : nullptr;
  }
  const std::string& refusal(uint32_t spec) const { return refusals_[spec]; }
  const std::vector<std::string>& tenants() const { return tenants_; }

 private:
  std::vector<std::optional<sched::QueuedJob>> shapes_;
  std::vector<std::string> refusals_;
  std::vector<std::string> tenants_;  // TenantId -> name
};

struct Progress {
  int64_t events = 0;
  int64_t jobs_ended = 0;  // done or rejected
  int64_t jobs = 0;
  int64_t sim_s = 0;       // virtual seconds from the trace's start
};

struct EngineOptions {
  uint64_t seed = 1;  // the scheduler's seed (the market carries its own)
  // Keep a waiting job's verdict until something it depends on changes
  // (sched::Scheduler::DecideInCycle); false decides every waiting job at
  // every cycle, the reference the kept verdicts are tested against.
  bool keep_waits = true;
  // Mean hours between failures of one fleet node; 0: nodes never fail. A
  // run on k nodes fails after an exponential time of mean mtbf / k (seeded
  // per job and attempt), losing its work since the last checkpoint as a
  // reclaim does; the node is back at once.
  double node_mtbf_h = 0;
  // Called every `progress_every` events and once at the end; may be empty.
  std::function<void(const Progress&)> on_progress;
  int64_t progress_every = 8192;
  // Observers for tests and checks; may be empty. on_cycle: after each
  // scheduling cycle, with the ledger; on_job_end: when a job is done or
  // rejected (each job at most once).
  std::function<void(UnixSeconds, const Ledger&)> on_cycle;
  // Apply MIG repartition proposals between cycles on a fleet with a
  // repartitionable MIG cluster (sim/mig_cycle.h); false: never drain.
  bool mig_repartition = true;
  // Under a profile with a `migrate` plugin, ask it at each checkpoint of a
  // running preemptible job whether to move (Scheduler::Reconsider); false:
  // never (`simulate --no-migrations`).
  bool migrations = true;
  std::function<void(uint32_t job, JobState state)> on_job_end;
};

// One policy's replay of the trace.
struct PolicyRun {
  std::string policy;             // as named on the command line
  std::vector<JobOutcome> jobs;   // by trace job index
  Timeline timeline;
  RegionHours region_hours;
  // Spend and carbon of every run attempt, by pricing model and by region
  // (RegionId index); reservations' idle time is added by Summarize.
  std::array<int64_t, kPayKinds> cost_by_pricing{};
  std::vector<int64_t> cost_by_region;
  std::vector<int64_t> co2_by_region;
  std::vector<int64_t> cost_by_cluster;  // fleet clusters (ClusterId index)
  int64_t fleet_gpu_ms = 0;              // GPU-seconds run on the fleet, thousandths
  int64_t end_s = 0;              // the last arrival, start, stop or end, seconds from the trace's start
  int64_t events = 0;
  int64_t decisions = 0;       // decided in full
  int64_t kept_verdicts = 0;   // waits kept unchanged (Scheduler::DecideInCycle)
  int64_t cycles = 0;
  std::vector<std::string> notes;  // rejections and errors, counted
  MigStats mig;                    // MIG drains and fragmentation (sim/mig_cycle.h)
  // Real-time services: their stretches of serving, and their minutes due
  // and met, in trace order (sim/service_slo.h).
  std::vector<ServiceSpan> service_spans;
  std::vector<ServiceMinutes> services;
  // Preemptible services run as single replicas (sim/service_replicas.h):
  // spot replicas reclaimed, and their replacements on spot and on-demand.
  int64_t replica_reclaims = 0;
  int64_t replaced_on_spot = 0, replaced_on_demand = 0;
};

// Replays `trace` under `profile`. Errors: the profile's plugins cannot be
// built for the fleet, or a ledger cannot be made (kInvalidArgument /
// kInternal); a job the core refuses is an outcome (kRejected), not an error.
Result<PolicyRun> Simulate(const Trace& trace, const JobShapes& shapes, const World& world,
                           const sched::Profile& profile, const std::string& policy,
                           const EngineOptions& options = {});

// The job's deadline in seconds from the trace's start, if it has one: its
// deadline_s, else the spec's deadline (relative, or absolute against the
// market's start).
std::optional<int64_t> DeadlineS(const TraceJob& job, const JobSpec& spec, UnixSeconds start);


// The summary.json figures of one run (metrics.h).
Summary Summarize(const Trace& trace, const World& world, const PolicyRun& run);

}  // namespace meridian::sim
