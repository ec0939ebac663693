#include "sched/plugins/realtime_replicas.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "estimate/defaults.h"
#include "estimate/regions.h"
#include "estimate/serving.h"
#include "sched/registry.h"

namespace meridian::sched {

static_assert(RealtimeReplicas::kMaxLoadReplicas == estimate::kMaxServiceReplicas);

namespace {

constexpr int kMaxReplicas = 8;

bool Realtime(const QueuedJob& job) { return job.kind == WorkloadKind::kRealtimeInference; }

bool HasLoad(const QueuedJob& job) { return job.spec && job.spec->latency.has_load(); }

}  // namespace

int RealtimeReplicas::ReplicasFor(double target, double zone, int max) {
  return ReplicasFor(target, zone, 1, max);
}

int RealtimeReplicas::ReplicasFor(double target, double zone, int load, int max) {
  return estimate::ReplicasForTarget(target, zone, load, max);
}

int RealtimeReplicas::SetSize(const Options& o, int load) {
  return estimate::ReplicaSetSize({o.availability_target, o.zone_availability, o.max_replicas}, load);
}

int RealtimeReplicas::ReplicasOf(const QueuedJob& job, const ModelDemand& d) const {
  const int load = HasLoad(job) ? estimate::ReplicasForLoad(job.spec->latency.PeakRps(), d.replica_rps) : 0;
  return load <= 1 ? replicas_ : SetSize(options_, load);
}

int RealtimeReplicas::ZonesOf(int replicas) const { return std::min(replicas, replicas_); }

RealtimeReplicas::Options RealtimeReplicas::OptionsOf(PluginArgs& args) {
  Options o;
  o.availability_target = args.Number("availability_target", o.availability_target, 0.5, 0.999999);
  o.zone_availability = args.Number("zone_availability", o.zone_availability, 0.5, 0.99999);
  o.max_replicas = static_cast<int>(args.Integer("max_replicas", o.max_replicas, 1, kMaxReplicas));
  o.zones_per_region = static_cast<int>(args.Integer("zones_per_region", o.zones_per_region, 1, 6));
  o.max_sets = static_cast<int>(args.Integer("max_sets", o.max_sets, 1, 64));
  return o;
}

Result<std::unique_ptr<Plugin>> RealtimeReplicas::Create(PluginArgs& args) {
  const Options o = OptionsOf(args);
  return FinishPlugin<RealtimeReplicas>(args, o);
}

RealtimeReplicas::RealtimeReplicas(Options o)
    : options_(o), replicas_(ReplicasFor(o.availability_target, o.zone_availability, o.max_replicas)) {}

Status RealtimeReplicas::Prepare(const PrepareContext& p) {
  const auto& offerings = p.catalog.offerings();
  std::map<std::pair<std::string, std::string>, std::set<std::string>> zones;  // (region, type)
  for (const auto& o : offerings) zones[{o.region, o.instance_type}].insert(o.zone);
  zones_.assign(offerings.size(), 1);
  for (size_t i = 0; i < offerings.size(); ++i) {
    const std::set<std::string>& z = zones[{offerings[i].region, offerings[i].instance_type}];
    int n = static_cast<int>(z.size());
    if (z.count("")) n += options_.zones_per_region - 1;  // priced per region: sold in every zone
    zones_[i] = static_cast<uint8_t>(std::min(n, 255));
  }
  const auto& regions = p.catalog.regions();
  region_count_ = regions.size();
  rtt_ms_.resize(region_count_ * region_count_);
  for (size_t u = 0; u < region_count_; ++u) {
    for (size_t r = 0; r < region_count_; ++r) {
      rtt_ms_[u * region_count_ + r] = estimate::EstimateRttMs(regions[u], regions[r]);
    }
  }
  return Status::Ok();
}

PreFilterResult RealtimeReplicas::PreFilter(const CycleContext& ctx, CycleState&) const {
  PreFilterResult r;
  if (Realtime(ctx.job()) && (replicas_ > 1 || HasLoad(ctx.job()))) {
    r.fleet = false;
    r.elastic = false;
  }
  return r;
}

bool RealtimeReplicas::RegionAllowed(const CycleContext& ctx, RegionId r, double request_ms) const {
  const QueuedJob& job = ctx.job();
  if (!r.valid() || !job.allowed_regions.test(r.index())) return false;
  if (job.user_regions.empty()) return true;
  const double slo = job.spec && job.spec->latency.slo_ms ? *job.spec->latency.slo_ms
                                                          : estimate::kDefaultLatencySloMs;
  const auto& regions = ctx.catalog().regions();
  for (RegionId u : job.user_regions) {
    const double rtt = u.index() < region_count_ && r.index() < region_count_
                           ? rtt_ms_[u.index() * region_count_ + r.index()]
                           : estimate::EstimateRttMs(regions[u.index()], regions[r.index()]);
    if (rtt + request_ms > slo) return false;
  }
  return true;
}

void RealtimeReplicas::AddFleetSets(const CycleContext& ctx, uint8_t demand, CandidateSink& sink,
                                    int* sets) const {
  const Fleet& fleet = ctx.fleet();
  const Ledger& ledger = ctx.ledger();
  const ModelDemand& d = ctx.job().demands[demand];
  const int replicas = ReplicasOf(ctx.job(), d);
  const std::vector<PoolId>& pools = fleet.ClusterPools(d.model);
  std::array<NodeId, kMaxLoadReplicas> nodes{};
  std::array<RegionId, 16> tried{};
  size_t tried_n = 0;
  for (size_t i = 0; i < pools.size() && *sets < options_.max_sets && !sink.full(); ++i) {
    const RegionId r = fleet.pool(pools[i]).region;
    if (std::find(tried.begin(), tried.begin() + tried_n, r) != tried.begin() + tried_n) continue;
    if (tried_n == tried.size()) break;
    tried[tried_n++] = r;
    if (!RegionAllowed(ctx, r, d.request_ms)) continue;
    int k = 0;
    for (size_t j = i; j < pools.size() && k < replicas; ++j) {  // one node per cluster of r
      const Pool& pool = fleet.pool(pools[j]);
      if (pool.region != r || pool.max_gpus_per_node < d.gpus) continue;
      int64_t pos = ledger.NextWithFreeGpus(pools[j], 0, d.gpus);
      if (pos >= 0) nodes[static_cast<size_t>(k++)] = ledger.pool_members(pools[j])[static_cast<size_t>(pos)];
    }
    if (k < replicas) continue;
    Candidate c;
    c.demand = demand;
    c.region = r;
    c.gpus_per_node = d.gpus;
    c.start = ctx.now();
    if (sink.AddGang(c, std::span<const NodeId>(nodes.data(), static_cast<size_t>(k)))) ++*sets;
  }
}

void RealtimeReplicas::AddElasticSets(const CycleContext& ctx, uint8_t demand, CandidateSink& sink,
                                      int* sets) const {
  const ElasticIndex* index = ctx.snapshot().elastic;
  if (!index || !ctx.fleet().elastic()) return;
  const ModelDemand& d = ctx.job().demands[demand];
  const int replicas = ReplicasOf(ctx.job(), d);
  for (const ElasticChoice& e : index->Choices(d.model, d.gpus)) {
    if (*sets >= options_.max_sets || sink.full()) return;
    if (e.offering.index() >= zones_.size() || zones_[e.offering.index()] < ZonesOf(replicas)) continue;
    if (e.instances * replicas > 64 || !RegionAllowed(ctx, e.region, d.request_ms)) continue;
    Candidate c;
    c.kind = CandidateKind::kElastic;
    c.pricing = PricingModel::kOnDemand;
    c.demand = demand;
    c.region = e.region;
    c.offering = e.offering;
    c.instances = static_cast<uint16_t>(e.instances * replicas);
    c.start = ctx.now();
    if (sink.Add(c)) ++*sets;
  }
}

void RealtimeReplicas::AddCandidates(const CycleContext& ctx, std::span<const Candidate>,
                                     CandidateSink& sink) const {
  const QueuedJob& job = ctx.job();
  if (!Realtime(job) || (replicas_ <= 1 && !HasLoad(job))) return;
  int sets = 0;
  for (size_t i = 0; i < job.demands.size() && i < 256; ++i) {
    AddFleetSets(ctx, static_cast<uint8_t>(i), sink, &sets);
    AddElasticSets(ctx, static_cast<uint8_t>(i), sink, &sets);
  }
}

RealtimeReplicas::Spread RealtimeReplicas::SpreadOf(const CycleContext& ctx,
                                                    const Candidate& c) const {
  Spread s;
  if (c.kind == CandidateKind::kElastic) {
    const catalog::Offering& o = ctx.catalog().offerings()[c.offering.index()];
    const int need = ctx.demand(c).gpus;
    const int per = std::max(1, (need + o.gpu_count - 1) / std::max(1, o.gpu_count));
    s.replicas = std::max(1, c.instances / per);
    const int zones = c.offering.index() < zones_.size() ? zones_[c.offering.index()] : 1;
    s.zones = std::min(s.replicas, zones);
    return s;
  }
  if (c.kind != CandidateKind::kGang || c.gpus_per_node < ctx.demand(c).gpus) return s;
  std::span<const NodeId> members = ctx.members(c);
  s.replicas = static_cast<int>(members.size());
  s.zones = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    const ClusterId cl = ctx.fleet().node(members[i]).cluster;
    bool seen = false;
    for (size_t k = 0; k < i && !seen; ++k) seen = ctx.fleet().node(members[k]).cluster == cl;
    if (!seen) ++s.zones;
  }
  return s;
}

size_t RealtimeReplicas::Filter(const CycleContext& ctx, std::span<Candidate> cands,
                                Rejections& rejected) const {
  if (!Realtime(ctx.job())) return cands.size();
  return KeepIf(cands, rejected, [&](const Candidate& c) -> std::string_view {
    if (c.start > ctx.now()) return "real-time services start at once, never deferred";
    if (c.kind == CandidateKind::kCpuNode) {
      return replicas_ > 1 || HasLoad(ctx.job()) ? "a CPU placement is one replica in one zone" : "";
    }
    const int need = ReplicasOf(ctx.job(), ctx.demand(c));
    if (need <= 1) return "";
    const Spread spread = SpreadOf(ctx, c);
    if (spread.replicas < need && need > replicas_) return "too few replicas for the service's peak load";
    if (spread.replicas < need || spread.zones < ZonesOf(need)) {
      return "too few replicas in distinct zones for the availability target";
    }
    return "";
  });
}

}  // namespace meridian::sched
