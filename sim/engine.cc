#include "sim/engine.h"
#include "sim/cpu_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <queue>

#include "estimate/defaults.h"
#include "estimate/pricing.h"
#include "sched/plugin.h"
#include "sched/rng.h"
#include "sched/scheduler.h"
#include "sim/charge.h"
#include "sim/hourly_carbon.h"
#include "sim/spot_leases.h"

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

namespace {

// kRetry: a waiting job's Decision::retry_at (spot back, a plugin's time
// rule): a cycle then, though nothing arrived or ended.
enum class EventKind : uint8_t { kEnd, kReclaim, kNodeFailure, kFlexLimit, kFlexCancel, kStart, kRetry };

struct Event {
  UnixSeconds t;
  EventKind kind;
  uint32_t job;
  uint32_t attempt;
  uint64_t seq;
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (kind != o.kind) return kind > o.kind;
    return seq > o.seq;
  }
};

// A job between its submission and its end.
struct LiveJob {
  sched::QueuedJob q;                   // as queued now: run hours scaled to the work left
  const sched::QueuedJob* shape = nullptr;
  double done = 0;                      // fraction of the work saved at checkpoints
  uint32_t attempt = 0;
  int64_t interval_s = 0, restart_s = 0;
  // The placement of the current attempt.
  UnixSeconds run_start = 0;
  int64_t overhead_s = 0;               // restart overhead at the start of this run
  double full_s = 0;                    // the whole job's run seconds on this placement
  int64_t gpu_milli = 0;                // GPUs held, thousandths
  uint32_t nodes = 0;                   // fleet nodes held
  double watts = 0;
  Money rate;                           // per hour running
  PayKind pay = PayKind::kOnDemand;
  bool on_fleet = false, spot = false, flex = false, running = false;
  RegionId region;
  ClusterId cluster;                    // on the fleet
  OfferingId offering;
  // A job with a CPU profile: the vCPUs its recorded speed holds at (the GPU
  // share) and the run-time factor of the vCPUs it was given.
  double cpu_share = 0;
  double cpu_factor = 1;
  UnixSeconds retry = 0;                // the pending kRetry event's time; 0: none
  // A real-time service's placement: its GPU model (index into the shape's
  // demands) and its replicas (sim/service_slo.h).
  uint8_t demand = 0;
  uint16_t replicas = 1;
};

// Replicas a placement holds: instances over one replica's instances on an
// offering; GPUs over one replica's GPUs on the fleet (a realtime_replicas
// gang holds the whole demand on each member).
uint16_t ReplicasOf(const sched::QueuedJob& shape, const sched::Candidate& c, const Allocation& a,
                    const catalog::Catalog& cat, int64_t gpu_milli) {
  if (c.kind == sched::CandidateKind::kCpuNode || c.demand >= shape.demands.size()) return 1;
  const int need = std::max<int>(1, shape.demands[c.demand].gpus);
  if (a.elastic) {
    const int per_instance = std::max(1, cat.offerings()[a.elastic->offering.index()].gpu_count);
    const int per_replica = (need + per_instance - 1) / per_instance;
    return static_cast<uint16_t>(std::max(1, a.elastic->instances / per_replica));
  }
  return static_cast<uint16_t>(std::max<int64_t>(1, gpu_milli / 1000 / need));
}

// CycleContext::RunHours of the whole job on `c`, without spot's expected
// rework. RunHours reads only the job, so the context holds nothing else.
double FullRunHours(const sched::QueuedJob& shape, sched::Candidate c) {
  c.pricing = PricingModel::kOnDemand;
  sched::CycleContext ctx({&shape, nullptr, nullptr, nullptr, nullptr, nullptr,
                           sched::ExplainLevel::kCounts, false});
  return ctx.RunHours(c);
}

// A recorded run on `c`: the recorded seconds scaled from the model they
// were recorded on to the candidate's (ModelDemand::recorded_ratio; a CPU
// node runs the recorded time).
double RecordedRunHours(const sched::QueuedJob& shape, const sched::Candidate& c,
                        int64_t duration_s) {
  const double recorded_h = static_cast<double>(duration_s) / 3600.0;
  if (c.kind == sched::CandidateKind::kCpuNode || c.demand >= shape.demands.size()) {
    return recorded_h;
  }
  return recorded_h * shape.demands[c.demand].recorded_ratio;
}

PayKind PayOf(PricingModel m) {
  switch (m) {
    case PricingModel::kSpot: return PayKind::kSpot;
    case PricingModel::kFlexStart: return PayKind::kFlexStart;
    case PricingModel::kReserved: return PayKind::kReserved;
    case PricingModel::kOnDemand: break;
  }
  return PayKind::kOnDemand;
}

// The fleet's vCPUs per GPU over its GPU nodes; with no GPU nodes, the
// catalog offerings' mean (an elastic-only replay).
double VcpusPerGpu(const World& w) {
  double vcpus = 0, gpus = 0;
  for (const sched::Node& n : w.fleet->nodes()) {
    if (!n.gpu_model.valid() || n.gpus <= 0) continue;
    vcpus += n.vcpus;
    gpus += n.gpus;
  }
  if (gpus > 0 && vcpus > 0) return vcpus / gpus;
  for (const catalog::Offering& o : w.catalog->offerings()) {
    if (o.gpu_count <= 0 || o.vcpus <= 0) continue;
    vcpus += o.vcpus;
    gpus += o.gpu_count;
  }
  return gpus > 0 ? vcpus / gpus : 1;
}

sched::Node LargestGpuNode(const World& w) {
  sched::Node best;
  for (const sched::Node& n : w.fleet->nodes()) {
    if (n.gpu_model.valid() && n.gpus > 0 && n.vcpus > best.vcpus) best = n;
  }
  return best;
}

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
        spot_(*world.market) {}

  void Run();
  // The profile's vCPU policy for jobs with a CPU profile.
  void set_cpu_allocation(sched::CpuAllocation a) { cpu_allocation_ = a; }

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
  void Account(LiveJob& l, JobOutcome& o, UnixSeconds a, UnixSeconds b);
  void Served(uint32_t j, const LiveJob& l, UnixSeconds b);
  void SetWork(LiveJob& l, const TraceJob& tj);
  void Requeue(uint32_t j);
  void Drop(uint32_t j);
  void GpuLevels(UnixSeconds t);
  void Note(const std::string& key);

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
};

void Engine::Note(const std::string& key) { ++notes_[key]; }

void Engine::SetWork(LiveJob& l, const TraceJob& tj) {
  const double left = 1.0 - l.done;
  l.q.done = l.done;
  double longest = 0;
  for (size_t i = 0; i < l.q.demands.size(); ++i) {
    sched::ModelDemand& d = l.q.demands[i];
    const sched::ModelDemand& full = l.shape->demands[i];
    if (tj.duration_s >= 0) {
      // A recorded run, scaled from the model it was recorded on. The
      // scheduler plans with what the history's scheduler was told: the
      // job's time limit where it had one (its expected end, backfill's
      // estimate); the run itself lasts the recorded time (StartRun).
      const int64_t planned_s = tj.time_limit_s > 0 ? tj.time_limit_s : tj.duration_s;
      d.run_hours = d.mig_run_hours = static_cast<float>(
          left * static_cast<double>(planned_s) / 3600.0 * full.recorded_ratio);
    } else {
      d.run_hours = static_cast<float>(left * full.run_hours);
      d.mig_run_hours = static_cast<float>(left * full.mig_run_hours);
    }
    d.run_hours = static_cast<float>(d.run_hours * l.cpu_factor);
    d.mig_run_hours = static_cast<float>(d.mig_run_hours * l.cpu_factor);
    longest = std::max<double>(longest, d.run_hours);
  }
  l.q.flex_refusal = estimate::FlexStartRefusal(*l.q.spec, world_.catalog->market(),
                                                {longest, l.q.submitted, {}});
}

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

void Engine::Account(LiveJob& l, JobOutcome& o, UnixSeconds a, UnixSeconds b) {
  if (b <= a) return;
  const int64_t cost = RunCostMicros(l.rate, a, b);
  const int64_t co2 = RunCo2Grams(l.watts, carbon_, l.region, a, b);
  o.cost_micros += cost;
  o.co2_g += co2;
  o.gpu_ms += l.gpu_milli * (b - a);
  out_.cost_by_pricing[static_cast<size_t>(l.pay)] += cost;
  if (l.region.valid()) {
    if (out_.cost_by_region.size() <= l.region.index()) {
      out_.cost_by_region.resize(l.region.index() + 1, 0);
      out_.co2_by_region.resize(l.region.index() + 1, 0);
    }
    out_.cost_by_region[l.region.index()] += cost;
    out_.co2_by_region[l.region.index()] += co2;
  }
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

// A real-time service's stretch of serving, from its run's start past the
// restart overhead to `b` (sim/service_slo.h).
void Engine::Served(uint32_t j, const LiveJob& l, UnixSeconds b) {
  if (l.q.kind != WorkloadKind::kRealtimeInference) return;
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

void Engine::PushReclaims(const std::vector<uint32_t>& jobs, UnixSeconds t) {
  for (uint32_t k : jobs) {
    if (std::optional<UnixSeconds> r = spot_.ReclaimAt(k, t)) Push(*r, EventKind::kReclaim, k);
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
  l.running = true;
  o.state = JobState::kRunning;
  if (o.start_s < 0) o.start_s = t - t0_;
  Push(end, EventKind::kEnd, j);
  if (l.spot) PushReclaims({j}, t);
  if (l.flex && t + flex_max_s_ < end) Push(t + flex_max_s_, EventKind::kFlexLimit, j);
  if (l.on_fleet && options_.node_mtbf_h > 0 && l.nodes > 0) {
    sched::Rng rng(sched::Rng::Mix(options_.seed ^ 0xfa11ed, j, l.attempt));
    const double mean_s = options_.node_mtbf_h * 3600.0 / static_cast<double>(l.nodes);
    const double fail = -mean_s * std::log1p(-rng.Unit());
    if (fail < static_cast<double>(end - t)) Push(t + static_cast<int64_t>(fail), EventKind::kNodeFailure, j);
  }
  (l.on_fleet ? fleet_milli_ : cloud_milli_) += l.gpu_milli;
  GpuLevels(t);
}

void Engine::Place(uint32_t j, const sched::Decision& d, UnixSeconds t) {
  LiveJob& l = Live(j);
  JobOutcome& o = Out(j);
  const Allocation& a = *d.allocation;
  const sched::Candidate& c = d.chosen->candidate;
  const catalog::Catalog& cat = *world_.catalog;
  ++l.attempt;
  l.spot = l.flex = false;
  l.offering = OfferingId();
  o.mig_profile = -1;
  o.cpu = false;
  if (a.elastic) {
    const catalog::Offering& off = cat.offerings()[a.elastic->offering.index()];
    const catalog::GpuModel* gpu = cat.FindGpu(off.gpu_model);
    const int gpus = a.elastic->instances * off.gpu_count;
    l.on_fleet = false;
    l.nodes = 0;
    l.offering = a.elastic->offering;
    l.gpu_milli = gpus * 1000;
    l.watts = GpuWatts(gpu, int64_t{gpus} * 1000);
    l.rate = a.elastic->price_per_hour;
    l.pay = PayOf(a.elastic->pricing);
    l.spot = a.elastic->pricing == PricingModel::kSpot;
    l.flex = a.elastic->pricing == PricingModel::kFlexStart;
    l.region = c.region;
    o.gpu_model = sched::FindGpuModelId(cat, off.gpu_model);
    o.gpus = static_cast<uint16_t>(gpus);
  } else {
    const sched::Fleet& fleet = *world_.fleet;
    const sched::Node& node = fleet.node(a.nodes.front().node);
    const sched::Cluster& cluster = fleet.cluster(node.cluster);
    int64_t milli = 0;
    for (const NodeShare& s : a.nodes) {
      milli += 1000 * std::popcount(s.gpus);
      if (s.mig) milli += 1000 * s.mig->shape.span / kMigMemorySlices;
    }
    l.on_fleet = true;
    l.nodes = static_cast<uint32_t>(a.nodes.size());
    l.gpu_milli = milli;
    const bool gpu = node.gpu_model.valid() && milli > 0;
    l.watts = GpuWatts(gpu ? &cat.gpus()[node.gpu_model.index()] : nullptr, milli);
    l.rate = FleetRate(cluster, milli);
    l.pay = cluster.pricing == CapacityPricing::kReserved ? PayKind::kReserved : PayKind::kOwned;
    l.region = node.region;
    l.cluster = node.cluster;
    o.gpu_model = gpu ? node.gpu_model : GpuModelId();
    o.gpus = static_cast<uint16_t>(milli / 1000);
    if (c.kind == sched::CandidateKind::kMigSlice) {
      o.mig_profile = static_cast<int8_t>(c.mig_profile);
      o.gpus = 1;
    }
    o.cpu = !gpu;
  }
  o.region = l.region;
  o.pay = l.pay;
  l.demand = c.demand;
  l.replicas = ReplicasOf(*l.shape, c, a, cat, l.gpu_milli);
  // The whole job's run on this placement: the recorded duration, else the
  // core's own run time for the candidate (shape = the full work; q holds
  // what is left), at on-demand speed: spot's rework comes from reclaims.
  const TraceJob& tj = trace_.jobs[j];
  if (tj.cpu.set()) {
    // An instance's vCPUs are all the job's; on the fleet it has what it asked for.
    const double given = a.elastic ? static_cast<double>(cat.offerings()[a.elastic->offering.index()].vcpus *
                                                         a.elastic->instances)
                                   : static_cast<double>(l.q.vcpus);
    l.cpu_factor = CpuTimeFactor(tj.cpu, l.cpu_share, given > 0 ? given : l.q.vcpus);
  }
  const double hours = (tj.duration_s >= 0 ? RecordedRunHours(*l.shape, c, tj.duration_s)
                                           : FullRunHours(*l.shape, c)) *
                       l.cpu_factor;
  l.full_s = hours * 3600.0;
  o.run_s = std::llround(l.full_s);
  l.overhead_s = o.preemptions > 0 ? l.restart_s : 0;
  if (d.kind != sched::DecisionKind::kDefer) {
    StartRun(j, t);
    return;
  }
  o.state = JobState::kHeld;
  if (l.flex) {
    // The request is served after the drawn wait, or cancelled at the start
    // the scheduler planned for (its deadline guarantee assumes no later).
    const int64_t wait = world_.market->DrawFlexWait((static_cast<uint64_t>(j) << 20) ^ l.attempt);
    if (t + wait > d.start) {
      Push(d.start, EventKind::kFlexCancel, j);
      return;
    }
    if (wait == 0) {
      StartRun(j, t);
      return;
    }
    Push(t + wait, EventKind::kStart, j);
    return;
  }
  Push(d.start, EventKind::kStart, j);
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
    o.lost_gpu_ms += l.gpu_milli * (elapsed - static_cast<int64_t>(saved));
    Account(l, o, l.run_start, t);
    Served(j, l, t);
  }
  if (why == Stop::kFlexCancel) {
    ++o.flex_cancels;
  } else {
    ++o.preemptions;
  }
  EndLease(j, t);
  if (!released) sched_->Release(JobId(j), Snap(t), &ledger_);
  Requeue(j);
}

void Engine::Finish(uint32_t j, UnixSeconds t) {
  last_activity_ = std::max(last_activity_, t);
  LiveJob& l = Live(j);
  JobOutcome& o = Out(j);
  Account(l, o, l.run_start, t);
  Served(j, l, t);
  o.end_s = t - t0_;
  o.state = JobState::kDone;
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
    case EventKind::kNodeFailure: Interrupt(e.job, e.t, Stop::kNodeFailure, false); break;
    case EventKind::kFlexLimit: Interrupt(e.job, e.t, Stop::kFlexLimit, false); break;
    case EventKind::kFlexCancel: Interrupt(e.job, e.t, Stop::kFlexCancel, false); break;
    case EventKind::kStart: StartRun(e.job, e.t); break;
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

}  // namespace

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
  Engine engine(trace, shapes, world, std::move(scheduler).value(), std::move(ledger).value(),
                options, &run);
  engine.set_cpu_allocation(profile.options.cpu_allocation);
  engine.Run();
  std::vector<const sched::QueuedJob*> by_spec(trace.specs.size());
  for (size_t i = 0; i < by_spec.size(); ++i) by_spec[i] = shapes.Of(static_cast<uint32_t>(i));
  run.services = ServiceSlos(trace, by_spec, run.jobs, run.service_spans, *world.catalog,
                             world.market->options().start);
  return run;
}

}  // namespace meridian::sim
