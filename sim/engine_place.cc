#include "sim/engine_impl.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "estimate/pricing.h"
#include "sched/cost.h"
#include "sched/work_left.h"
#include "sim/charge.h"
#include "sim/cpu_model.h"

namespace meridian::sim::engine_internal {

namespace {

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
// were recorded on to the candidate's (ModelDemand::recorded_ratio). A
// CPU-only job runs the recorded time on a CPU node; a GPU job there (its
// cpu_fallback) runs what the core plans for it, CycleContext::CpuRunHours of
// the recorded GPU run (its GPU-hours x slowdown), as the scheduler's queue
// reads it (Engine::SetWork).
double RecordedRunHours(const sched::QueuedJob& shape, const sched::Candidate& c,
                        int64_t duration_s) {
  const double recorded_h = static_cast<double>(duration_s) / 3600.0;
  if (c.kind == sched::CandidateKind::kCpuNode && !shape.cpu_only && !shape.demands.empty()) {
    sched::QueuedJob recorded = shape;
    for (sched::ModelDemand& d : recorded.demands) {
      d.run_hours = d.mig_run_hours = static_cast<float>(recorded_h * d.recorded_ratio);
    }
    return FullRunHours(recorded, c);
  }
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

}  // namespace

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
      sched::ScaleToWorkLeft(full, left, &d);
    }
    d.run_hours = static_cast<float>(d.run_hours * l.cpu_factor);
    d.mig_run_hours = static_cast<float>(d.mig_run_hours * l.cpu_factor);
    longest = std::max<double>(longest, d.run_hours);
  }
  l.q.flex_refusal = estimate::FlexStartRefusal(*l.q.spec, world_.catalog->market(),
                                                {longest, l.q.submitted, {}});
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
    l.rate = sched::FleetHourRate(cluster, gpu ? milli : 0, l.q.vcpus, l.q.ram_mib);
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
  l.placement = c;
  l.where = d.chosen->where;
  l.replicas = ReplicasOf(*l.shape, c, a, cat, l.gpu_milli);
  l.replica_set = false;
  l.set.clear();
  if (RunsAsReplicas(l, a)) PlanReplicas(l, a, t);
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
  // A restart follows a stop (a preemption, a reclaim) or a move; a move's
  // checkpoint transfer comes before it.
  l.overhead_s = (o.preemptions > 0 || l.moved_in ? l.restart_s : 0) + (l.moved_in ? l.transfer_s : 0);
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

}  // namespace meridian::sim::engine_internal
