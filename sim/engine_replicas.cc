// A preemptible service's replica set (sim/service_replicas.h): its
// replicas placed one by one on spot with on-demand fallback, each with its
// own lease, bill and stretch of serving; a reclaimed replica replaced at
// once; on-demand replicas moved back to spot as it comes back.
#include <algorithm>

#include "estimate/defaults.h"
#include "estimate/serving.h"
#include "sched/plugins/realtime_replicas.h"
#include "sim/charge.h"
#include "sim/engine_impl.h"

namespace meridian::sim::engine_internal {

namespace {

constexpr int64_t kRebalanceS = 3600;  // how often a set looks for spot to replace on-demand replicas

bool SameZone(const catalog::Catalog& cat, OfferingId a, OfferingId b) {
  const catalog::Offering& x = cat.offerings()[a.index()];
  const catalog::Offering& y = cat.offerings()[b.index()];
  return x.region == y.region && x.zone == y.zone;
}

int SpotHeld(const LiveJob& l) {
  return static_cast<int>(std::count_if(l.set.begin(), l.set.end(), [](const Replica& r) { return r.lease != 0; }));
}

}  // namespace

bool Engine::RunsAsReplicas(const LiveJob& l, const Allocation& a) const {
  return replica_terms_.enabled && l.q.kind == WorkloadKind::kRealtimeInference && l.q.spec &&
         l.q.spec->preemptible && a.elastic && a.elastic->pricing == PricingModel::kOnDemand &&
         l.demand < l.shape->demands.size();
}

void Engine::PlanReplicas(LiveJob& l, const Allocation& a, UnixSeconds t) {
  const sched::ModelDemand& d = l.shape->demands[l.demand];
  const JobSpec& spec = *l.q.spec;
  l.on_demand = a.elastic->offering;
  l.od_instances = std::max(1, a.elastic->instances / std::max<int>(1, l.replicas));
  l.load = spec.latency.has_load()
               ? std::max(1, estimate::ReplicasForLoad(spec.latency.PeakRps(), d.replica_rps))
               : 1;
  l.mix = MixFor(l, t);
  l.replica_set = true;
  l.rate = Money();
  l.gpu_milli = 0;
  l.watts = 0;
}

// The cheapest mix (sim/service_replicas.h) with the spot replicas it
// holds (at their prices) and those it could start now; without spot, the
// on-demand set.
ReplicaMix Engine::MixFor(const LiveJob& l, UnixSeconds t) const {
  std::vector<int64_t> prices = SpotPrices(l, t);
  for (const Replica& r : l.set) {
    if (r.lease) prices.push_back(r.rate.micros());
  }
  std::sort(prices.begin(), prices.end());
  if (prices.size() > static_cast<size_t>(sched::RealtimeReplicas::kMaxLoadReplicas)) {
    prices.resize(sched::RealtimeReplicas::kMaxLoadReplicas);
  }
  if (prices.empty()) return {l.replicas, 0};
  return CheapestMix(l.load, replica_terms_.target, replica_terms_.zone, SpotUp(l),
                     OnDemandReplicaRate(l, t).micros(), prices, l.replicas);
}

double Engine::SpotUp(const LiveJob& l) const {
  return SpotReplicaUp(replica_terms_.zone, estimate::kSpotReclaimsPerHour, l.restart_s);
}

// One replica's price per hour on the set's on-demand offering.
Money Engine::OnDemandReplicaRate(const LiveJob& l, UnixSeconds t) const {
  return world_.market->PricePerHour(l.on_demand, PricingModel::kOnDemand, t)
      .value_or(Money())
      .Times(l.od_instances);
}

// Whether a spot replica on `e` is worth having: in a region the service's
// residency and latency SLO allow, and cheaper than an on-demand replica
// (an 8-GPU instance's spot price can be several on-demand GPUs').
bool Engine::SpotFits(const LiveJob& l, const sched::ElasticChoice& e, UnixSeconds t) const {
  const sched::ModelDemand& d = l.shape->demands[l.demand];
  if (!l.q.allowed_regions.test(e.region.index())) return false;
  if (!LatencyMet(*l.q.spec, e.region, d.request_ms, *world_.catalog)) return false;
  const std::optional<Money> price = world_.market->PricePerHour(e.offering, PricingModel::kSpot, t);
  return price && price->Times(e.instances) < OnDemandReplicaRate(l, t);
}

std::span<const sched::ElasticChoice> Engine::SpotChoices(const LiveJob& l) const {
  if (!world_.elastic) return {};
  const sched::ModelDemand& d = l.shape->demands[l.demand];
  return world_.elastic->Choices(d.model, d.gpus, PricingModel::kSpot);
}

// The price of each spot replica that could start now: over the offerings
// that fit, one per replica's instances left.
std::vector<int64_t> Engine::SpotPrices(const LiveJob& l, UnixSeconds t) const {
  std::vector<int64_t> prices;
  for (const sched::ElasticChoice& e : SpotChoices(l)) {
    if (!SpotFits(l, e, t)) continue;
    const int n = spot_.SpotInstances(e.offering, t) / std::max<int>(1, e.instances);
    const Money price = world_.market->PricePerHour(e.offering, PricingModel::kSpot, t)->Times(e.instances);
    prices.insert(prices.end(), static_cast<size_t>(std::max(0, n)), price.micros());
    if (prices.size() >= static_cast<size_t>(sched::RealtimeReplicas::kMaxLoadReplicas)) break;
  }
  return prices;
}

// The cheapest spot offering that fits with a replica's instances left,
// other than `avoid`: in a zone none of its replicas is in when there is one.
std::optional<sched::ElasticChoice> Engine::SpotFor(const LiveJob& l, UnixSeconds t,
                                                    OfferingId avoid) const {
  const catalog::Catalog& cat = *world_.catalog;
  std::optional<sched::ElasticChoice> any;
  for (const sched::ElasticChoice& e : SpotChoices(l)) {
    if (e.offering == avoid || spot_.SpotInstances(e.offering, t) < e.instances) continue;
    if (!SpotFits(l, e, t)) continue;
    const bool shared = std::any_of(l.set.begin(), l.set.end(), [&](const Replica& r) {
      return r.offering.valid() && SameZone(cat, r.offering, e.offering);
    });
    if (!shared) return e;
    if (!any) any = e;
  }
  return any;
}

// `r` launched at `t`, serving from `up_from`: on spot when asked and one is
// left (a lease of its own), else, when `fallback`, on the set's on-demand
// offering. False: nothing launched.
bool Engine::Launch(uint32_t j, Replica& r, UnixSeconds t, UnixSeconds up_from, bool spot,
                    bool fallback, OfferingId avoid) {
  LiveJob& l = Live(j);
  const catalog::Catalog& cat = *world_.catalog;
  std::optional<sched::ElasticChoice> e = spot ? SpotFor(l, t, avoid) : std::nullopt;
  r = Replica{};
  if (e && spot_.Start(next_lease_, e->offering, e->instances, t, l.set_end)) {
    r.lease = next_lease_++;
    lease_job_[r.lease] = j;
  } else if (!fallback) {
    return false;
  } else if (spot) {
    Note("service replica on on-demand: no spot instance left in the regions its SLO allows");
  }
  const PricingModel pricing = r.lease ? PricingModel::kSpot : PricingModel::kOnDemand;
  const sched::ElasticChoice where =
      r.lease ? *e : sched::ElasticChoice{l.on_demand, l.region, static_cast<uint16_t>(l.od_instances)};
  r.offering = where.offering;
  r.region = where.region;
  const int instances = where.instances;
  const catalog::Offering& off = cat.offerings()[r.offering.index()];
  const int64_t milli = int64_t{instances} * off.gpu_count * 1000;
  r.gpu_milli = milli;
  r.watts = GpuWatts(cat.FindGpu(off.gpu_model), milli);
  r.rate = world_.market->PricePerHour(r.offering, pricing, t).value_or(Money()).Times(instances);
  r.pay = r.lease ? PayKind::kSpot : PayKind::kOnDemand;
  r.launched = t;
  r.up_from = up_from;
  cloud_milli_ += milli;
  GpuLevels(t);
  if (r.lease) PushReclaims({r.lease}, t);
  return true;
}

void Engine::StartReplicas(uint32_t j, UnixSeconds t, UnixSeconds end) {
  LiveJob& l = Live(j);
  l.set_end = end;
  l.set.assign(static_cast<size_t>(l.mix.on_demand + l.mix.spot), Replica{});
  for (size_t i = 0; i < l.set.size(); ++i) {
    Launch(j, l.set[i], t, t + l.overhead_s, i < static_cast<size_t>(l.mix.spot), true, OfferingId());
  }
  if (t + kRebalanceS < end) Push(t + kRebalanceS, EventKind::kReplicaCheck, j);
}

// Billed from its launch; served from up_from (sim/service_slo.h counts the
// replicas up minute by minute).
void Engine::StopReplica(uint32_t j, Replica& r, UnixSeconds t) {
  if (t > r.launched) {
    Account(r, Out(j), r.launched, t);
    Out(j).replica_pays |= static_cast<uint8_t>(1u << static_cast<int>(r.pay));
  } else {
    cloud_milli_ -= r.gpu_milli;
  }
  if (t > r.up_from) {
    out_.service_spans.push_back({j, r.up_from - t0_, t - t0_, r.region, Live(j).demand, 1});
  }
  if (r.lease) {
    const uint32_t key = r.lease;
    r.lease = 0;
    lease_job_.erase(key);
    PushReclaims(spot_.End(key), t);
  }
}

void Engine::StopReplicas(uint32_t j, UnixSeconds t) {
  LiveJob& l = Live(j);
  for (Replica& r : l.set) StopReplica(j, r, t);
  l.set.clear();
}

// A reclaimed replica is replaced at once: on spot in another offering
// where one is left, else on-demand; the new one serves after the restart
// overhead.
void Engine::ReclaimReplica(uint32_t j, uint32_t lease, UnixSeconds t) {
  LiveJob& l = Live(j);
  auto it = std::find_if(l.set.begin(), l.set.end(), [&](const Replica& r) { return r.lease == lease; });
  if (it == l.set.end()) return;
  last_activity_ = std::max(last_activity_, t);
  const OfferingId lost = it->offering;
  StopReplica(j, *it, t);
  ++out_.replica_reclaims;
  Launch(j, *it, t, t + l.restart_s, true, true, lost);
  ++(it->lease ? out_.replaced_on_spot : out_.replaced_on_demand);
}

// Every kRebalanceS: when spot is left for a cheaper mix than the set holds,
// new spot replicas start, and the on-demand replicas the mix no longer
// needs stop once those serve (kReplicaRetire), never below the target.
void Engine::Rebalance(uint32_t j, UnixSeconds t) {
  LiveJob& l = Live(j);
  if (t + kRebalanceS < l.set_end) Push(t + kRebalanceS, EventKind::kReplicaCheck, j);
  int spot = SpotHeld(l);
  int on_demand = 0;
  for (const Replica& r : l.set) on_demand += r.lease == 0 && r.retire_at == 0;
  const ReplicaMix want = MixFor(l, t);
  if (want.on_demand >= on_demand) return;
  for (int i = spot; i < want.spot; ++i) {
    Replica r;
    if (!Launch(j, r, t, t + l.restart_s, true, false, OfferingId())) break;
    l.set.push_back(r);
    ++spot;
  }
  int retire = 0;
  while (on_demand - retire > want.on_demand &&
         AtLeastUp(l.load, on_demand - retire - 1, replica_terms_.zone, spot, SpotUp(l)) >=
             replica_terms_.target - 1e-12) {
    ++retire;
  }
  for (Replica& r : l.set) {
    if (retire == 0) break;
    if (r.lease != 0 || r.retire_at != 0) continue;
    r.retire_at = t + l.restart_s;
    --retire;
  }
  Push(t + l.restart_s, EventKind::kReplicaRetire, j);
}

void Engine::Retire(uint32_t j, UnixSeconds t) {
  LiveJob& l = Live(j);
  for (Replica& r : l.set) {
    if (r.retire_at != 0 && r.retire_at <= t) StopReplica(j, r, t);
  }
  std::erase_if(l.set, [&](const Replica& r) { return r.retire_at != 0 && r.retire_at <= t; });
}

}  // namespace meridian::sim::engine_internal
