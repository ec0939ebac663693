#include "sim/engine.h"

#include <algorithm>
#include <cmath>

#include "estimate/defaults.h"
#include "estimate/pricing.h"
#include "sched/plugins/migrate.h"
#include "sched/rng.h"
#include "sim/charge.h"
#include "sim/cpu_model.h"
#include "sim/engine_impl.h"

namespace meridian::sim {

JobShapes JobShapes::Make(const Trace& trace, const catalog::Catalog& catalog) {
  JobShapes s;
  s.shapes_.resize(trace.specs.size());
  s.refusals_.resize(trace.specs.size());
  for (size_t i = 0; i < trace.specs.size(); ++i) {
    const auto& spec = trace.specs[i];
    auto t = std::find(s.tenants_.begin(), s.tenants_.end(), spec->tenant);
    if (t == s.tenants_.end()) t = s.tenants_.insert(s.tenants_.end(), spec->tenant);
    sched::EnqueueRequest req{JobId(0), TenantId(static_cast<uint32_t>(t - s.tenants_.begin())), 0, 0};
    auto q = sched::MakeQueuedJob(spec, catalog, req);
    if (q.ok()) {
      s.shapes_[i] = std::move(q).value();
    } else {
      s.refusals_[i] = q.status().message();
    }
  }
  return s;
}

std::optional<int64_t> DeadlineS(const TraceJob& job, const JobSpec& spec, UnixSeconds start) {
  if (job.deadline_s >= 0) return job.submit_s + job.deadline_s;
  if (spec.deadline.after_submit_s) return job.submit_s + *spec.deadline.after_submit_s;
  if (spec.deadline.at) return *spec.deadline.at - start;
  return std::nullopt;
}

namespace engine_internal {

namespace {

bool HasMovePlugin(const sched::Profile& profile) {
  return std::any_of(profile.plugins.begin(), profile.plugins.end(),
                     [](const sched::PluginConfig& p) { return p.name == sched::Migrate::kName; });
}

}  // namespace

void Engine::Note(const std::string& key) { ++notes_[key]; }

void Engine::Arrive(uint32_t j) {
  const TraceJob& tj = trace_.jobs[j];
  last_activity_ = std::max(last_activity_, t0_ + tj.submit_s);
  JobOutcome& o = Out(j);
  const sched::QueuedJob* shape = shapes_.Of(tj.spec);
  if (!shape) {
    o.state = JobState::kRejected;
    ++ended_;
    if (options_.on_job_end) options_.on_job_end(j, o.state);
    Note("not queued: " + shapes_.refusal(tj.spec));
    return;
  }
  uint32_t s;
  if (free_.empty()) {
    s = static_cast<uint32_t>(live_.size());
    live_.push_back(std::make_unique<LiveJob>());
  } else {
    s = free_.back();
    free_.pop_back();
  }
  slot_[j] = s;
  LiveJob& l = *live_[s];
  l = LiveJob{};
  l.shape = shape;
  l.q = *shape;
  l.q.id = JobId(j);
  l.q.submitted = t0_ + tj.submit_s;
  if (tj.gpu_fraction > 0) {
    sched::SizeMigByShare(l.q, static_cast<int>(std::lround(tj.gpu_fraction * 1000.0f)), *world_.fleet);
  }
  l.q.sequence = j;
  const JobSpec& spec = *shape->spec;
  l.q.deadline.reset();
  if (std::optional<int64_t> d = DeadlineS(tj, spec, t0_)) l.q.deadline = t0_ + *d;
  const estimate::CheckpointTerms checkpoint = estimate::CheckpointOf(spec.checkpoint);
  l.interval_s = checkpoint.interval_s;
  l.restart_s = checkpoint.restart_overhead_s;
  if (tj.cpu.set()) {
    const int gpus = l.q.demands.empty() ? 1 : std::max<int>(1, l.q.demands.front().gpus);
    l.cpu_share = vcpus_per_gpu_ * gpus;
    l.q.vcpus = cpu_allocation_ == sched::CpuAllocation::kSensitivity
                    ? SensitiveVcpus(tj.cpu, l.cpu_share, kCpuCap)
                    : static_cast<int>(std::max(1.0, std::floor(l.cpu_share)));
    // Never more than the nodes it spans have: a request no node holds is never placed.
    if (largest_node_.gpus > 0) {
      const int spans = (gpus + largest_node_.gpus - 1) / largest_node_.gpus;
      l.q.vcpus = std::min(l.q.vcpus, spans * largest_node_.vcpus);
    }
    l.cpu_factor = CpuTimeFactor(tj.cpu, l.cpu_share, l.q.vcpus);
  }
  SetWork(l, tj);
  o.state = JobState::kWaiting;
  sched_->Enqueue(l.q);
  dirty_ = true;
}

void Engine::GpuLevels(UnixSeconds t) {
  out_.timeline.Level(Timeline::kFleetGpus, t - t0_, static_cast<double>(fleet_milli_) / 1000.0);
  out_.timeline.Level(Timeline::kCloudGpus, t - t0_, static_cast<double>(cloud_milli_) / 1000.0);
}

void Engine::Account(const Meter& l, JobOutcome& o, UnixSeconds a, UnixSeconds b) {
  if (b <= a) return;
  const int64_t cost = RunCostMicros(l.rate, a, b);
  const int64_t co2 = RunCo2Grams(l.watts, carbon_, l.region, a, b);
  o.cost_micros += cost;
  o.co2_g += co2;
  o.gpu_ms += l.gpu_milli * (b - a);
  out_.cost_by_pricing[static_cast<size_t>(l.pay)] += cost;
  ChargeRegion(l.region, cost, co2);
  if (l.on_fleet) {
    out_.cost_by_cluster[l.cluster.index()] += cost;
    out_.fleet_gpu_ms += l.gpu_milli * (b - a);
  }
  out_.timeline.Spread(static_cast<Timeline::Series>(Timeline::kSpend + static_cast<int>(l.pay)),
                       a - t0_, b - t0_, static_cast<double>(cost));
  out_.region_hours.Add(l.region, a, b, static_cast<double>(l.gpu_milli) / 1000.0);
  (l.on_fleet ? fleet_milli_ : cloud_milli_) -= l.gpu_milli;
  GpuLevels(b);
}

void Engine::ChargeRegion(RegionId r, int64_t cost, int64_t co2) {
  if (!r.valid()) return;
  if (out_.cost_by_region.size() <= r.index()) {
    out_.cost_by_region.resize(r.index() + 1, 0);
    out_.co2_by_region.resize(r.index() + 1, 0);
  }
  out_.cost_by_region[r.index()] += cost;
  out_.co2_by_region[r.index()] += co2;
}

// A real-time service's stretch of serving, from its run's start past the
// restart overhead to `b` (sim/service_slo.h).
void Engine::Served(uint32_t j, const LiveJob& l, UnixSeconds b) {
  if (l.q.kind != WorkloadKind::kRealtimeInference || l.replica_set) return;  // replicas: StopReplica
  const UnixSeconds a = std::min(b, l.run_start + l.overhead_s);
  if (b <= a) return;
  out_.service_spans.push_back({j, a - t0_, b - t0_, l.region, l.demand, l.replicas});
}

void Engine::Drop(uint32_t j) {
  free_.push_back(slot_[j]);
  live_[slot_[j]]->q = sched::QueuedJob{};  // free its vectors now
  sched_->Forget(JobId(j));
  slot_[j] = kNone;
  ++ended_;
  if (options_.on_job_end) options_.on_job_end(j, Out(j).state);
}

void Engine::Requeue(uint32_t j) {
  LiveJob& l = Live(j);
  ++l.attempt;  // events of the stopped attempt are stale
  l.retry = 0;
  l.running = false;
  l.moved_in = false;
  SetWork(l, trace_.jobs[j]);
  Out(j).state = JobState::kWaiting;
  sched_->Enqueue(l.q);
  dirty_ = true;
}

// A spot lease starts only while the offering's count has its instances
// left beside the leases already there (sim/spot_leases.h); otherwise the
// job goes back to the queue unstarted (two leases placed in one cycle on
// the last instances, or a deferred start the count no longer allows).
bool Engine::StartLease(uint32_t j, UnixSeconds t, UnixSeconds end) {
  const Allocation* a = ledger_.Find(JobId(j));
  const int instances = a && a->elastic ? a->elastic->instances : 1;
  if (spot_.Start(j, Live(j).offering, instances, t, end)) return true;
  Note("spot lease not started: fewer spot instances left than it needs");
  sched_->Release(JobId(j), Snap(t), &ledger_);
  Requeue(j);
  // Decided again at once (another cycle at t), not at the next event: it may
  // have no slack to lose.
  Live(j).retry = t;
  Push(t, EventKind::kRetry, j);
  return false;
}

// Ends j's spot lease, if it holds one; the leases started after it on the
// offering are reclaimed later, if at all, and get their new reclaim events
// (the old ones find them not due and pass).
void Engine::EndLease(uint32_t j, UnixSeconds t) {
  if (Live(j).spot) PushReclaims(spot_.End(j), t);
}

// `leases` are SpotLeases keys: a job's own lease (its index) or a replica's.
void Engine::PushReclaims(const std::vector<uint32_t>& leases, UnixSeconds t) {
  for (uint32_t k : leases) {
    std::optional<UnixSeconds> r = spot_.ReclaimAt(k, t);
    if (!r) continue;
    if (k < trace_.jobs.size()) {
      Push(*r, EventKind::kReclaim, k);
    } else if (auto it = lease_job_.find(k); it != lease_job_.end()) {
      events_.push({*r, EventKind::kReplicaReclaim, it->second, Live(it->second).attempt, seq_++, k});
    }
  }
}

void Engine::StartRun(uint32_t j, UnixSeconds t) {
  last_activity_ = std::max(last_activity_, t);
  LiveJob& l = Live(j);
  JobOutcome& o = Out(j);
  const double left_s = (1.0 - l.done) * l.full_s;
  const UnixSeconds end = t + l.overhead_s + static_cast<int64_t>(std::ceil(left_s - 1e-6));
  if (l.spot && !StartLease(j, t, end)) return;
  l.run_start = t;
  l.run_end = end;
  l.running = true;
  o.state = JobState::kRunning;
  if (o.start_s < 0) o.start_s = t - t0_;
  Push(end, EventKind::kEnd, j);
  if (l.spot) PushReclaims({j}, t);
  PushCheckpoint(j, t + l.overhead_s + l.interval_s);
  PushCarbonHour(j, t);
  WatchForGpus(j);
  WatchSpotForRun(j, t);
  if (l.flex && t + flex_max_s_ < end) Push(t + flex_max_s_, EventKind::kFlexLimit, j);
  if (l.on_fleet && options_.node_mtbf_h > 0 && l.nodes > 0) {
    sched::Rng rng(sched::Rng::Mix(options_.seed ^ 0xfa11ed, j, l.attempt));
    const double mean_s = options_.node_mtbf_h * 3600.0 / static_cast<double>(l.nodes);
    const double fail = -mean_s * std::log1p(-rng.Unit());
    if (fail < static_cast<double>(end - t)) Push(t + static_cast<int64_t>(fail), EventKind::kNodeFailure, j);
  }
  (l.on_fleet ? fleet_milli_ : cloud_milli_) += l.gpu_milli;
  GpuLevels(t);
  if (l.replica_set) StartReplicas(j, t, end);
}

void Engine::Interrupt(uint32_t j, UnixSeconds t, Stop why, bool released) {
  last_activity_ = std::max(last_activity_, t);
  LiveJob& l = Live(j);
  JobOutcome& o = Out(j);
  if (l.running) {
    const int64_t elapsed = t - l.run_start;
    const int64_t progress = std::max<int64_t>(0, elapsed - l.overhead_s);
    const double left_s = (1.0 - l.done) * l.full_s;
    double saved = l.interval_s > 0 ? static_cast<double>(progress / l.interval_s * l.interval_s) : 0;
    saved = std::min(saved, left_s);
    l.done = std::min(1.0, l.done + saved / l.full_s);
    if (l.interval_s > 0) l.checkpoints += static_cast<int>(progress / l.interval_s);
    o.lost_gpu_ms += l.gpu_milli * (elapsed - static_cast<int64_t>(saved));
    ChargeMoveOverhead(l, o, t);
    Account(l, o, l.run_start, t);
    Served(j, l, t);
    StopReplicas(j, t);
  }
  if (why == Stop::kFlexCancel) {
    ++o.flex_cancels;
  } else {
    ++o.preemptions;
  }
  Freed(l);
  EndLease(j, t);
  if (!released) sched_->Release(JobId(j), Snap(t), &ledger_);
  Requeue(j);
}

void Engine::Finish(uint32_t j, UnixSeconds t) {
  last_activity_ = std::max(last_activity_, t);
  LiveJob& l = Live(j);
  JobOutcome& o = Out(j);
  ChargeMoveOverhead(l, o, t);
  Account(l, o, l.run_start, t);
  Served(j, l, t);
  StopReplicas(j, t);
  o.end_s = t - t0_;
  o.state = JobState::kDone;
  Freed(l);
  EndLease(j, t);
  sched_->Release(JobId(j), Snap(t), &ledger_);
  Drop(j);
  dirty_ = true;
}

void Engine::Handle(const Event& e) {
  if (slot_[e.job] == kNone || Live(e.job).attempt != e.attempt) return;  // stale
  switch (e.kind) {
    case EventKind::kEnd: Finish(e.job, e.t); break;
    case EventKind::kReclaim:  // LIFO: only when the count is below what it and older leases hold
      if (spot_.Due(e.job, e.t)) Interrupt(e.job, e.t, Stop::kReclaim, false);
      break;
    case EventKind::kReplicaReclaim:  // the same rule for one replica's lease
      if (spot_.Due(e.lease, e.t)) ReclaimReplica(e.job, e.lease, e.t);
      break;
    case EventKind::kReplicaCheck: Rebalance(e.job, e.t); break;
    case EventKind::kReplicaRetire: Retire(e.job, e.t); break;
    case EventKind::kReplicaSpot: BackToSpot(e.job, e.t); break;
    case EventKind::kNodeFailure: Interrupt(e.job, e.t, Stop::kNodeFailure, false); break;
    case EventKind::kFlexLimit: Interrupt(e.job, e.t, Stop::kFlexLimit, false); break;
    case EventKind::kFlexCancel: Interrupt(e.job, e.t, Stop::kFlexCancel, false); break;
    case EventKind::kStart: StartRun(e.job, e.t); break;
    case EventKind::kCheckpoint: Checkpoint(e.job, e.t); break;
    case EventKind::kSpotChange: SpotChanged(e.job, e.attempt, e.t); break;
    case EventKind::kCarbonHour:
      if (Live(e.job).running) at_hour_.emplace_back(e.job, e.attempt);
      PushCarbonHour(e.job, e.t);
      break;
    case EventKind::kRetry:
      Live(e.job).retry = 0;
      if (Out(e.job).state == JobState::kWaiting) dirty_ = true;
      break;
  }
}

void Engine::Apply(const sched::Decision& d, UnixSeconds t) {
  const uint32_t j = d.job.value();
  ++out_.decisions;  // kept verdicts are counted by the scheduler (Cycle), never handed over
  switch (d.kind) {
    case sched::DecisionKind::kPlace:
    case sched::DecisionKind::kPreempt:
    case sched::DecisionKind::kDefer:
      sched_->Dequeue(d.job);
      for (JobId v : d.victims) {
        if (slot_[v.value()] != kNone) Interrupt(v.value(), t, Stop::kPreempted, true);
      }
      Place(j, d, t);
      break;
    case sched::DecisionKind::kReject:
      sched_->Dequeue(d.job);
      Out(j).state = JobState::kRejected;
      Note("rejected: " + d.status.message());
      Drop(j);
      break;
    case sched::DecisionKind::kError:
      Note("scheduler error (the job stays queued): " + d.status.message());
      break;
    case sched::DecisionKind::kWait: Retry(j, d.retry_at, t); break;
  }
}

// A waiting job is decided again at its retry_at; one pending event per job
// (an earlier one decides it again anyway, and finds the next time then).
void Engine::Retry(uint32_t j, std::optional<UnixSeconds> retry_at, UnixSeconds t) {
  LiveJob& l = Live(j);
  if (!retry_at || *retry_at <= t) return;
  if (l.retry > t && l.retry <= *retry_at) return;
  l.retry = *retry_at;
  Push(l.retry, EventKind::kRetry, j);
}

void Engine::Cycle(UnixSeconds t) {
  dirty_ = false;
  if (sched_->queued() == 0) return;
  ++out_.cycles;
  // Applied once the cycle is over, in decision order (placements start
  // leases and events only then). A kept wait changes nothing here: its
  // retry event is the one its full decision set.
  decided_.clear();
  const int64_t kept_before = sched_->kept_verdicts();
  sched_->RunQueue(Snap(t), &ledger_, [&](sched::Decision& d) { decided_.push_back(std::move(d)); });
  out_.kept_verdicts += sched_->kept_verdicts() - kept_before;
  for (const sched::Decision& d : decided_) Apply(d, t);
  if (options_.on_cycle) options_.on_cycle(t, ledger_);
  out_.timeline.Level(Timeline::kQueued, t - t0_, static_cast<double>(sched_->queued()));
}

std::vector<const sched::QueuedJob*> Engine::Queue() { return sched_->Queued(); }

// Between cycles: the MIG repartition proposals, applied (sim/mig_cycle.h),
// and one more cycle when any job was drained.
void Engine::Repartition(UnixSeconds t) {
  if (!mig_.measures()) return;
  auto profile_of = [this](JobId job, const sched::Node& n) {
    if (job.value() >= slot_.size() || slot_[job.value()] == kNone) return -1;
    for (const sched::ModelDemand& d : Live(job.value()).q.demands) {
      if (d.model == n.gpu_model) return static_cast<int>(d.mig_profile);
    }
    return -1;
  };
  std::vector<const sched::QueuedJob*> queue = Queue();
  bool drained = false;
  std::vector<sched::MigDrain> drains;
  if (options_.mig_repartition) drains = mig_.Drains(ledger_, queue, t, profile_of);
  for (const sched::MigDrain& d : drains) {
    if (d.job.value() >= slot_.size() || slot_[d.job.value()] == kNone) continue;
    Interrupt(d.job.value(), t, Stop::kPreempted, false);
    drained = true;
  }
  if (drained) Cycle(t);
  queue = Queue();
  mig_.Sample(ledger_, queue, t, profile_of);
}

void Engine::Run() {
  const size_t n = trace_.jobs.size();
  size_t next = 0;
  int64_t last_report = 0;
  UnixSeconds now = t0_;
  while (next < n || !events_.empty()) {
    now = events_.empty() ? t0_ + trace_.jobs[next].submit_s
          : next < n      ? std::min(events_.top().t, t0_ + trace_.jobs[next].submit_s)
                          : events_.top().t;
    while (!events_.empty() && events_.top().t == now) {
      Event e = events_.top();
      events_.pop();
      ++out_.events;
      Handle(e);
    }
    while (next < n && t0_ + trace_.jobs[next].submit_s == now) {
      ++out_.events;
      Arrive(static_cast<uint32_t>(next++));
    }
    if (dirty_) {
      Cycle(now);
      Repartition(now);
    }
    // Moves (engine_migrate.cc), once the queue has had what freed: the
    // jobs at a checkpoint, then, if fleet GPUs freed, the jobs on CPU
    // nodes, then those at a new carbon hour, then those on on-demand cloud
    // capacity for which cheaper spot returned; a move frees its old place
    // for another cycle.
    bool moved = !at_checkpoint_.empty() && AskAtCheckpoints(now);
    if (gpus_freed_) moved = AskOnFreedGpus(now) || moved;
    if (!at_hour_.empty()) moved = AskAtCarbonHour(now) || moved;
    if (!spot_back_.empty()) moved = AskWhenSpotReturns(now) || moved;
    if (moved) {
      Cycle(now);
      Repartition(now);
    }
    if (options_.on_progress && out_.events - last_report >= options_.progress_every) {
      last_report = out_.events;
      options_.on_progress({out_.events, ended_, static_cast<int64_t>(n), now - t0_});
    }
  }
  for (const sched::QueuedJob* q : sched_->Queued()) Out(q->id.value()).state = JobState::kUnfinished;
  out_.end_s = std::max(last_activity_, t0_) - t0_;
  out_.timeline.Finish(out_.end_s);
  for (const auto& [what, count] : notes_) {
    out_.notes.push_back(std::to_string(count) + " x " + what);
  }
  mig_.Close(now);
  out_.mig = mig_.stats();
  if (options_.on_progress) options_.on_progress({out_.events, ended_, static_cast<int64_t>(n), out_.end_s});
}

}  // namespace engine_internal

Result<PolicyRun> Simulate(const Trace& trace, const JobShapes& shapes, const World& world,
                           const sched::Profile& profile, const std::string& policy,
                           const EngineOptions& options) {
  sched::SchedulerOptions so;
  so.seed = options.seed;
  so.explain = sched::ExplainLevel::kCounts;
  so.keep_waits = options.keep_waits;
  auto scheduler = sched::Scheduler::Create(profile, world.fleet, so);
  if (!scheduler.ok()) return scheduler.status();
  auto ledger = world.fleet->NewLedger();
  if (!ledger.ok()) return ledger.status();
  PolicyRun run;
  run.policy = policy;
  run.jobs.resize(trace.jobs.size());
  run.cost_by_cluster.resize(world.fleet->clusters().size(), 0);
  const int64_t span = trace.jobs.empty() ? 0 : trace.jobs.back().submit_s;
  run.timeline = Timeline(std::max<int64_t>(60, (span + 86400) / 400));
  engine_internal::Engine engine(trace, shapes, world, std::move(scheduler).value(), std::move(ledger).value(),
                options, &run);
  engine.set_cpu_allocation(profile.options.cpu_allocation);
  engine.set_replica_terms(ReplicaTermsOf(profile));
  engine.set_migrations(options.migrations && engine_internal::HasMovePlugin(profile));
  engine.Run();
  std::vector<const sched::QueuedJob*> by_spec(trace.specs.size());
  for (size_t i = 0; i < by_spec.size(); ++i) by_spec[i] = shapes.Of(static_cast<uint32_t>(i));
  run.services = ServiceSlos(trace, by_spec, run.jobs, run.service_spans, *world.catalog,
                             world.market->options().start);
  return run;
}

}  // namespace meridian::sim
