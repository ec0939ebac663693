// The engine of `meridian simulate` (sim/engine.h), shared by its parts:
// engine.cc (events, the run loop and a job's life), engine_place.cc (a
// decision's placement and run time), engine_replicas.cc (a preemptible
// service's replicas on spot with on-demand fallback) and engine_migrate.cc
// (moves of running work at checkpoints). Internal to sim/.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/scheduler.h"
#include "sim/engine.h"
#include "sim/hourly_carbon.h"
#include "sim/service_replicas.h"
#include "sim/spot_leases.h"

namespace meridian::sim::engine_internal {

// kRetry: a waiting job's Decision::retry_at (spot back, a plugin's time
// rule): a cycle then, though nothing arrived or ended. kReplicaReclaim: one
// spot replica of a service's replica set (Event::lease); kReplicaCheck: a
// set sized for the next hour's load (and a look for spot to replace
// on-demand replicas); kReplicaRetire: the replicas that hour no longer
// needs stop; kReplicaSpot: a spot offering a set holding on-demand
// replicas could use changes its count (a look for spot to replace them);
// kCheckpoint: a running preemptible job's checkpoint, where it may move
// (engine_migrate.cc; only under a profile with `migrate`); kCarbonHour: a
// new hour of the grid's carbon for such a job whose checkpoints are
// further apart (sched::kCarbonHourS), where it may move too; kSpotChange:
// a spot offering cheaper than such a job's on-demand cloud run changes
// its count, where it may move to spot.
enum class EventKind : uint8_t {
  kEnd, kReclaim, kReplicaReclaim, kNodeFailure, kFlexLimit, kFlexCancel, kStart, kRetry,
  kReplicaCheck, kReplicaRetire, kReplicaSpot, kCheckpoint, kCarbonHour, kSpotChange
};

struct Event {
  UnixSeconds t;
  EventKind kind;
  uint32_t job;
  uint32_t attempt;
  uint64_t seq;
  uint32_t lease = 0;  // kReplicaReclaim: the replica's SpotLeases key
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (kind != o.kind) return kind > o.kind;
    return seq > o.seq;
  }
};

// What a run or a replica is charged by the hour, and where.
struct Meter {
  int64_t gpu_milli = 0;                // GPUs held, thousandths
  double watts = 0;
  Money rate;                           // per hour running
  PayKind pay = PayKind::kOnDemand;
  bool on_fleet = false;
  RegionId region;
  ClusterId cluster;                    // on the fleet
};

// One replica of a service's replica set (sim/service_replicas.h): billed
// from its launch, serving from up_from.
struct Replica : Meter {
  OfferingId offering;
  uint32_t lease = 0;                   // its spot lease's SpotLeases key; 0: on-demand
  UnixSeconds launched = 0, up_from = 0;
  UnixSeconds retire_at = 0;            // replaced by spot: stops then; 0: not
};

// A job between its submission and its end.
struct LiveJob : Meter {
  sched::QueuedJob q;                   // as queued now: run hours scaled to the work left
  const sched::QueuedJob* shape = nullptr;
  double done = 0;                      // fraction of the work saved at checkpoints
  uint32_t attempt = 0;
  int64_t interval_s = 0, restart_s = 0;
  // The placement of the current attempt.
  UnixSeconds run_start = 0;
  int64_t overhead_s = 0;               // restart overhead at the start of this run
  double full_s = 0;                    // the whole job's run seconds on this placement
  uint32_t nodes = 0;                   // fleet nodes held
  bool spot = false, flex = false, running = false;
  OfferingId offering;
  UnixSeconds run_end = 0;              // the current run's planned end
  // Moves (engine_migrate.cc): the candidate this attempt was placed on and
  // its description, the checkpoints taken before this run, the last move,
  // and whether this run follows a move (its restart and the checkpoint's
  // transfer, transfer_s, are then the move's).
  sched::Candidate placement;
  std::string where;
  int checkpoints = 0;
  std::optional<UnixSeconds> last_move;
  bool moved_in = false;
  int64_t transfer_s = 0;
  UnixSeconds freed_ask = 0;            // the last ask when fleet GPUs freed; 0: none
  UnixSeconds hour_ask = 0;             // the last ask at a new carbon hour; 0: none
  UnixSeconds spot_ask = 0;             // the last ask when spot returned; 0: none
  UnixSeconds spot_look = 0;            // the pending kSpotChange event's time; 0: none
  UnixSeconds asked = 0;                // the last ask of any kind; 0: none
  // A job with a CPU profile: the vCPUs its recorded speed holds at (the GPU
  // share) and the run-time factor of the vCPUs it was given.
  double cpu_share = 0;
  double cpu_factor = 1;
  UnixSeconds retry = 0;                // the pending kRetry event's time; 0: none
  // A real-time service's placement: its GPU model (index into the shape's
  // demands) and its replicas (sim/service_slo.h).
  uint8_t demand = 0;
  uint16_t replicas = 1;
  // A service run as single replicas (sim/service_replicas.h): the mix,
  // the on-demand offering and one replica's instances on it, the run's
  // planned end, and the replicas now held. The run itself then holds
  // nothing and costs nothing; its replicas do.
  bool replica_set = false;
  ReplicaMix mix;
  int load = 1;                         // replicas up the hour being served (or prepared) needs
  int size = 1;                         // the set for that load and the target (RealtimeReplicas::SetSize)
  OfferingId on_demand;
  int od_instances = 1;
  UnixSeconds set_end = 0;
  UnixSeconds spot_watch = 0;           // the pending kReplicaSpot event's time; 0: none
  std::vector<Replica> set;
};

// The fleet's vCPUs per GPU over its GPU nodes; with no GPU nodes, the
// catalog offerings' mean (an elastic-only replay).
double VcpusPerGpu(const World& w);
// The fleet's GPU node with the most vCPUs.
sched::Node LargestGpuNode(const World& w);

class Engine {
 public:
  Engine(const Trace& trace, const JobShapes& shapes, const World& world,
         std::unique_ptr<sched::Scheduler> scheduler, Ledger ledger, const EngineOptions& options,
         PolicyRun* out)
      : trace_(trace), shapes_(shapes), world_(world), sched_(std::move(scheduler)),
        ledger_(std::move(ledger)), options_(options), out_(*out),
        t0_(world.market->options().start), carbon_(*world.market, t0_),
        flex_max_s_(std::llround(world.catalog->market().flex_start_max_run_hours * 3600.0)),
        slot_(trace.jobs.size(), kNone), mig_(*world.fleet, trace.jobs.size()),
        vcpus_per_gpu_(VcpusPerGpu(world)), largest_node_(LargestGpuNode(world)),
        spot_(*world.market), next_lease_(static_cast<uint32_t>(trace.jobs.size())) {}

  void Run();
  // The profile's vCPU policy for jobs with a CPU profile.
  void set_cpu_allocation(sched::CpuAllocation a) { cpu_allocation_ = a; }
  // The profile's replica terms for preemptible services.
  void set_replica_terms(const ReplicaTerms& t) { replica_terms_ = t; }
  // Ask the profile's move plugin at running jobs' checkpoints (EngineOptions::migrations).
  void set_migrations(bool on) { migrations_ = on; }

 private:
  static constexpr uint32_t kNone = ~0u;
  // The sensitivity policy gives a job at most twice its GPU share of vCPUs,
  // so one hungry loader cannot take a node's CPUs from the GPUs beside it.
  static constexpr double kCpuCap = 2.0;

  LiveJob& Live(uint32_t j) { return *live_[slot_[j]]; }
  JobOutcome& Out(uint32_t j) { return out_.jobs[j]; }
  sched::Snapshot Snap(UnixSeconds t) const {
    sched::Snapshot s;
    s.now = t;
    s.fleet = world_.fleet.get();
    s.ledger = &ledger_;
    s.market = &spot_;  // the replay market less this run's spot leases
    s.elastic = world_.elastic.get();
    return s;
  }
  void Push(UnixSeconds t, EventKind k, uint32_t j) {
    events_.push({t, k, j, Live(j).attempt, seq_++});
  }
  void Arrive(uint32_t j);
  void Handle(const Event& e);
  void Cycle(UnixSeconds t);
  void Repartition(UnixSeconds t);
  std::vector<const sched::QueuedJob*> Queue();
  void Apply(const sched::Decision& d, UnixSeconds t);
  void Retry(uint32_t j, std::optional<UnixSeconds> retry_at, UnixSeconds t);
  void Place(uint32_t j, const sched::Decision& d, UnixSeconds t);
  void StartRun(uint32_t j, UnixSeconds t);
  bool StartLease(uint32_t j, UnixSeconds t, UnixSeconds end);
  void EndLease(uint32_t j, UnixSeconds t);
  void PushReclaims(const std::vector<uint32_t>& jobs, UnixSeconds t);
  enum class Stop { kReclaim, kNodeFailure, kPreempted, kFlexLimit, kFlexCancel };
  void Interrupt(uint32_t j, UnixSeconds t, Stop why, bool released);
  void Finish(uint32_t j, UnixSeconds t);
  void Account(const Meter& m, JobOutcome& o, UnixSeconds a, UnixSeconds b);
  void ChargeRegion(RegionId r, int64_t cost, int64_t co2);
  void Served(uint32_t j, const LiveJob& l, UnixSeconds b);
  void SetWork(LiveJob& l, const TraceJob& tj);
  void Requeue(uint32_t j);
  void Drop(uint32_t j);
  void GpuLevels(UnixSeconds t);
  void Note(const std::string& key);
  // Replica sets (engine_replicas.cc).
  bool TakesSpot(const LiveJob& l) const;
  bool RunsAsReplicas(const LiveJob& l, const Allocation& a) const;
  int LoadAt(const LiveJob& l, UnixSeconds t) const;
  int64_t Lead(const LiveJob& l) const;
  UnixSeconds NextCheck(const LiveJob& l, UnixSeconds t) const;
  void SizeFor(LiveJob& l, int load);
  bool Meets(const LiveJob& l, const ReplicaMix& held, UnixSeconds t) const;
  void Grow(uint32_t j, UnixSeconds t, UnixSeconds hour, const ReplicaMix& want, ReplicaMix& held);
  void Shrink(uint32_t j, UnixSeconds t, UnixSeconds hour, const ReplicaMix& held);
  void PlanReplicas(LiveJob& l, const Allocation& a, UnixSeconds t);
  void StartReplicas(uint32_t j, UnixSeconds t, UnixSeconds end);
  ReplicaMix MixFor(const LiveJob& l, UnixSeconds t) const;
  double SpotUp(const LiveJob& l, OfferingId o, UnixSeconds t) const;
  std::span<const sched::ElasticChoice> SpotChoices(const LiveJob& l) const;
  std::vector<SpotCandidate> SpotCandidates(const LiveJob& l, UnixSeconds t) const;
  Money OnDemandReplicaRate(const LiveJob& l, UnixSeconds t) const;
  bool SpotFits(const LiveJob& l, const sched::ElasticChoice& e, UnixSeconds t) const;
  std::optional<sched::ElasticChoice> SpotFor(const LiveJob& l, UnixSeconds t, OfferingId avoid) const;
  bool Launch(uint32_t j, Replica& r, UnixSeconds t, UnixSeconds up_from, bool spot, bool fallback,
              OfferingId avoid);
  void StopReplica(uint32_t j, Replica& r, UnixSeconds t);
  void StopReplicas(uint32_t j, UnixSeconds t);
  void ReclaimReplica(uint32_t j, uint32_t lease, UnixSeconds t);
  void Rebalance(uint32_t j, UnixSeconds t);
  void WatchSpot(uint32_t j, UnixSeconds t);
  void BackToSpot(uint32_t j, UnixSeconds t);
  void Retire(uint32_t j, UnixSeconds t);
  // Moves at checkpoints (engine_migrate.cc).
  void PushCheckpoint(uint32_t j, UnixSeconds at);
  void Checkpoint(uint32_t j, UnixSeconds t);
  bool RunsAttempt(uint32_t j, uint32_t attempt);
  bool AskAtCheckpoints(UnixSeconds t);
  bool Ask(uint32_t j, UnixSeconds t, sched::MoveOccasion occasion);
  bool Movable(const LiveJob& l) const;
  void PushCarbonHour(uint32_t j, UnixSeconds after);
  bool AskAtCarbonHour(UnixSeconds t);
  bool CheaperSpot(const LiveJob& l, const sched::ElasticChoice& e, UnixSeconds t) const;
  void WatchSpotForRun(uint32_t j, UnixSeconds t);
  void SpotChanged(uint32_t j, uint32_t attempt, UnixSeconds t);
  bool AskWhenSpotReturns(UnixSeconds t);
  void Freed(const LiveJob& l);
  void WatchForGpus(uint32_t j);
  bool AskOnFreedGpus(UnixSeconds t);
  bool AskFirst(const std::vector<std::pair<uint32_t, uint32_t>>& runs, UnixSeconds t,
                UnixSeconds LiveJob::*last, sched::MoveOccasion occasion, std::vector<uint32_t>* left);
  void MoveTo(uint32_t j, const sched::MoveDecision& m, UnixSeconds t);
  void ChargeEgress(const LiveJob& l, JobOutcome& o, int64_t micros, UnixSeconds t);
  void ChargeMoveOverhead(const LiveJob& l, JobOutcome& o, UnixSeconds b);

  const Trace& trace_;
  const JobShapes& shapes_;
  const World& world_;
  std::unique_ptr<sched::Scheduler> sched_;
  Ledger ledger_;
  const EngineOptions& options_;
  PolicyRun& out_;
  const UnixSeconds t0_;
  HourlyCarbon carbon_;
  const int64_t flex_max_s_;

  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  std::vector<uint32_t> slot_;                    // by job: index into live_, or kNone
  std::vector<std::unique_ptr<LiveJob>> live_;
  std::vector<uint32_t> free_;
  // A cycle's full decisions, in order.
  std::vector<sched::Decision> decided_;
  bool dirty_ = false;
  int64_t fleet_milli_ = 0, cloud_milli_ = 0, ended_ = 0;
  std::map<std::string, int64_t> notes_;
  // The last instant something happened to a job (an arrival, a start, a
  // stop, an end): the run's end. Stale events of stopped attempts and
  // wake-ups that change nothing may come later and do not count, or a
  // policy that stops a long run early would pay its reservations longer.
  UnixSeconds last_activity_ = 0;
  MigCycle mig_;
  const double vcpus_per_gpu_;  // the GPU share of vCPUs (sim/cpu_model.h)
  const sched::Node largest_node_;  // the fleet's GPU node with the most vCPUs
  sched::CpuAllocation cpu_allocation_ = sched::CpuAllocation::kGpuShare;
  SpotLeases spot_;  // this run's spot leases; the market its scheduler sees
  ReplicaTerms replica_terms_;
  bool migrations_ = false;
  // Moves when fleet GPUs free (engine_migrate.cc): whether some freed since
  // the last asks, and the running jobs that may be asked then (on a CPU
  // node), with the attempt that put them there (an entry of a later
  // attempt is stale).
  bool gpus_freed_ = false;
  std::map<uint32_t, uint32_t> on_cpu_;
  // Jobs at a checkpoint this instant (job, attempt), asked after its cycle,
  // and those at a new carbon hour.
  std::vector<std::pair<uint32_t, uint32_t>> at_checkpoint_;
  std::vector<std::pair<uint32_t, uint32_t>> at_hour_;
  std::vector<std::pair<uint32_t, uint32_t>> spot_back_;  // runs that may move to spot now
  // Replicas' spot leases: keys from the trace's job count up (a job's own
  // lease is keyed by its index), and the job each belongs to.
  uint32_t next_lease_;
  std::unordered_map<uint32_t, uint32_t> lease_job_;
};

}  // namespace meridian::sim::engine_internal
