// A service's replica set (sim/service_replicas.h): its replicas placed one
// by one, each with its own bill and stretch of serving, the set sized hour
// by hour for its load; a preemptible service's on spot with on-demand
// fallback, a reclaimed replica replaced at once, on-demand replicas moved
// back to spot as it comes back.
#include <algorithm>
#include <numeric>

#include "estimate/defaults.h"
#include "estimate/serving.h"
#include "sched/plugins/realtime_replicas.h"
#include "sim/charge.h"
#include "sim/engine_impl.h"

namespace meridian::sim::engine_internal {

namespace {

bool SameZone(const catalog::Catalog& cat, OfferingId a, OfferingId b) {
  const catalog::Offering& x = cat.offerings()[a.index()];
  const catalog::Offering& y = cat.offerings()[b.index()];
  return x.region == y.region && x.zone == y.zone;
}

// The replicas held and not retiring, on-demand and spot.
ReplicaMix Held(const LiveJob& l) {
  ReplicaMix h;
  for (const Replica& r : l.set) {
    if (r.retire_at == 0) ++(r.lease ? h.spot : h.on_demand);
  }
  return h;
}

}  // namespace

bool Engine::TakesSpot(const LiveJob& l) const { return replica_terms_.spot && l.q.spec->preemptible; }

// An on-demand replica set of a service that may take spot, or whose load
// changes by the hour: one by one.
bool Engine::RunsAsReplicas(const LiveJob& l, const Allocation& a) const {
  return replica_terms_.sized && l.q.kind == WorkloadKind::kRealtimeInference && l.q.spec && a.elastic &&
         a.elastic->pricing == PricingModel::kOnDemand && l.demand < l.shape->demands.size() &&
         (TakesSpot(l) || !l.q.spec->latency.rps_by_hour.empty());
}

// Replicas up the load of t's UTC hour needs on the set's GPU model
// (estimate::ReplicasForLoad, as realtime_replicas and the SLO count it);
// 1 without a load.
int Engine::LoadAt(const LiveJob& l, UnixSeconds t) const {
  const Latency& lat = l.q.spec->latency;
  if (!lat.has_load()) return 1;
  const int hour = static_cast<int>((t / 3600) % 24);
  return std::max(1, estimate::ReplicasForLoad(lat.RpsAt(hour), l.shape->demands[l.demand].replica_rps));
}

// How long before an hour the set is sized for it: a replica's start (the
// restart overhead), so that the replicas it adds serve from the hour.
int64_t Engine::Lead(const LiveJob& l) const { return std::clamp<int64_t>(l.restart_s, 0, 3599); }

// The first check after t: Lead before an hour boundary.
UnixSeconds Engine::NextCheck(const LiveJob& l, UnixSeconds t) const {
  UnixSeconds hour = (t / 3600 + 1) * 3600;
  if (hour - Lead(l) <= t) hour += 3600;
  return hour - Lead(l);
}

void Engine::SizeFor(LiveJob& l, int load) {
  l.load = load;
  l.size = sched::RealtimeReplicas::SetSize(replica_terms_.options, load);
}

// Whether `held` meets the target, its spot replicas taken as the least
// available of the set's spot replicas not retiring (any `held.spot` of them
// is at least as available: the lower bound).
bool Engine::Meets(const LiveJob& l, const ReplicaMix& held, UnixSeconds t) const {
  std::vector<double> ups;
  for (const Replica& r : l.set) {
    if (r.lease && r.retire_at == 0) ups.push_back(SpotUp(l, r.offering, t));
  }
  std::sort(ups.begin(), ups.end());
  ups.resize(static_cast<size_t>(held.spot), SpotUp(l, OfferingId(), t));
  return estimate::AtLeastUp(l.load, held.on_demand, replica_terms_.zone(), ups) >=
         replica_terms_.target() - 1e-12;
}

// Sized for the most any hour until the first check prepares needs.
void Engine::PlanReplicas(LiveJob& l, const Allocation& a, UnixSeconds t) {
  l.on_demand = a.elastic->offering;
  l.od_instances = std::max(1, a.elastic->instances / std::max<int>(1, l.replicas));
  const UnixSeconds until = NextCheck(l, t) + Lead(l);
  int load = 1;
  for (UnixSeconds u = t; u < until; u = (u / 3600 + 1) * 3600) load = std::max(load, LoadAt(l, u));
  SizeFor(l, load);
  l.mix = MixFor(l, t);
  l.replica_set = true;
  l.rate = Money();
  l.gpu_milli = 0;
  l.watts = 0;
}

// The cheapest mix (sim/service_replicas.h) for the set's load with the
// spot replicas it holds (at their prices and availability) and those it
// could start now; without spot, the on-demand set of its size.
ReplicaMix Engine::MixFor(const LiveJob& l, UnixSeconds t) const {
  if (!TakesSpot(l)) return {l.size, 0};
  std::vector<SpotCandidate> spot = SpotCandidates(l, t);
  for (const Replica& r : l.set) {
    if (r.lease && r.retire_at == 0) spot.push_back({r.rate.micros(), SpotUp(l, r.offering, t)});
  }
  std::stable_sort(spot.begin(), spot.end(),
                   [](const SpotCandidate& a, const SpotCandidate& b) { return a.price < b.price; });
  if (spot.size() > static_cast<size_t>(sched::RealtimeReplicas::kMaxLoadReplicas)) {
    spot.resize(sched::RealtimeReplicas::kMaxLoadReplicas);
  }
  if (spot.empty()) return {l.size, 0};
  return estimate::CheapestMix(l.load, replica_terms_.target(), replica_terms_.zone(),
                               OnDemandReplicaRate(l, t).micros(), spot, l.size);
}

// A spot replica of `l` on `o`: up with the zone less a replacement's start
// after each of o's reclaims (the rate its trace showed in the window before
// t; the market's default for OfferingId()).
double Engine::SpotUp(const LiveJob& l, OfferingId o, UnixSeconds t) const {
  const double rate = o.valid() ? spot_.SpotReclaimsPerHour(o, t) : estimate::kSpotReclaimsPerHour;
  return SpotReplicaUp(replica_terms_.zone(), rate, l.restart_s);
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

// The price and availability (SpotUp) of each spot replica that could start
// now: over the offerings that fit, one per replica's instances left.
std::vector<SpotCandidate> Engine::SpotCandidates(const LiveJob& l, UnixSeconds t) const {
  std::vector<SpotCandidate> spot;
  for (const sched::ElasticChoice& e : SpotChoices(l)) {
    if (!SpotFits(l, e, t)) continue;
    const int n = spot_.SpotInstances(e.offering, t) / std::max<int>(1, e.instances);
    const Money price = world_.market->PricePerHour(e.offering, PricingModel::kSpot, t)->Times(e.instances);
    spot.insert(spot.end(), static_cast<size_t>(std::max(0, n)), {price.micros(), SpotUp(l, e.offering, t)});
    if (spot.size() >= static_cast<size_t>(sched::RealtimeReplicas::kMaxLoadReplicas)) break;
  }
  return spot;
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
  if (NextCheck(l, t) < end) Push(NextCheck(l, t), EventKind::kReplicaCheck, j);
  l.spot_watch = 0;
  WatchSpot(j, t);
}

// Billed from its launch; served from up_from (sim/service_slo.h counts the
// replicas up minute by minute).
void Engine::StopReplica(uint32_t j, Replica& r, UnixSeconds t) {
  if (t > r.launched) {
    Account(r, Out(j), r.launched, t);
    Out(j).replica_pays |= static_cast<uint8_t>(1u << static_cast<int>(r.pay));
    (r.pay == PayKind::kSpot ? Out(j).replica_spot_s : Out(j).replica_on_demand_s) += t - r.launched;
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
// overhead. One the set is retiring just stops early.
void Engine::ReclaimReplica(uint32_t j, uint32_t lease, UnixSeconds t) {
  LiveJob& l = Live(j);
  auto it = std::find_if(l.set.begin(), l.set.end(), [&](const Replica& r) { return r.lease == lease; });
  if (it == l.set.end()) return;
  last_activity_ = std::max(last_activity_, t);
  const OfferingId lost = it->offering;
  StopReplica(j, *it, t);
  if (it->retire_at != 0) {
    l.set.erase(it);
    return;
  }
  ++out_.replica_reclaims;
  Launch(j, *it, t, t + l.restart_s, true, true, lost);
  ++(it->lease ? out_.replaced_on_spot : out_.replaced_on_demand);
  WatchSpot(j, t);
}

// Lead before each UTC hour: the set sized for that hour's load. Short of
// the target, it starts replicas that serve from the hour: the spot ones of
// the cheapest mix, then on-demand ones until the target is met. With spot
// left for a cheaper mix than the set holds, it starts those spot replicas
// too. Either way, the replicas the target no longer needs stop at the hour
// (kReplicaRetire).
void Engine::Rebalance(uint32_t j, UnixSeconds t) {
  LiveJob& l = Live(j);
  if (NextCheck(l, t) < l.set_end) Push(NextCheck(l, t), EventKind::kReplicaCheck, j);
  const UnixSeconds hour = t + Lead(l);
  if (hour >= l.set_end) return;
  SizeFor(l, LoadAt(l, hour));
  ReplicaMix held = Held(l);
  const ReplicaMix want = MixFor(l, t);
  if (!Meets(l, held, t) || want.on_demand < held.on_demand) Grow(j, t, hour, want, held);
  Shrink(j, t, hour, held);
  WatchSpot(j, t);
}

// A set holding on-demand replicas watches the spot offerings it could use:
// the next change of one's count is the next chance to move them back to
// spot (kReplicaSpot). Spot freed by another lease ending is seen at the
// hourly check.
void Engine::WatchSpot(uint32_t j, UnixSeconds t) {
  LiveJob& l = Live(j);
  if (!TakesSpot(l) || Held(l).on_demand == 0) return;
  std::optional<UnixSeconds> next;
  for (const sched::ElasticChoice& e : SpotChoices(l)) {
    if (!SpotFits(l, e, t)) continue;
    const std::optional<UnixSeconds> change = spot_.NextSpotChange(e.offering, t);
    if (change && *change > t && (!next || *change < *next)) next = change;
  }
  if (!next || *next + l.restart_s >= l.set_end) return;
  if (l.spot_watch > t && l.spot_watch <= *next) return;  // an earlier look is due
  l.spot_watch = *next;
  Push(*next, EventKind::kReplicaSpot, j);
}

// On-demand replicas back to spot as soon as spot is to be had: when the
// cheapest mix now needs fewer on-demand replicas than the set holds, it
// starts that mix's spot replicas, and the on-demand ones the target no
// longer needs stop once those serve.
void Engine::BackToSpot(uint32_t j, UnixSeconds t) {
  LiveJob& l = Live(j);
  if (l.spot_watch != t) return;  // superseded by an earlier look
  l.spot_watch = 0;
  ReplicaMix held = Held(l);
  const UnixSeconds up = t + l.restart_s;
  const ReplicaMix want = MixFor(l, t);
  if (held.on_demand > 0 && want.on_demand < held.on_demand && up < l.set_end) {
    Grow(j, t, up, want, held);
    Shrink(j, t, up, held);
  }
  WatchSpot(j, t);
}

// Starts `want`'s spot replicas beyond those held, then on-demand ones until
// the set meets the target; `held` counts them.
void Engine::Grow(uint32_t j, UnixSeconds t, UnixSeconds hour, const ReplicaMix& want, ReplicaMix& held) {
  for (; held.spot < want.spot; ++held.spot) {
    Replica r;
    if (!Launch(j, r, t, hour, true, false, OfferingId())) break;
    Live(j).set.push_back(r);
  }
  for (; !Meets(Live(j), held, t) && held.on_demand < sched::RealtimeReplicas::kMaxLoadReplicas; ++held.on_demand) {
    Replica r;
    Launch(j, r, t, hour, false, true, OfferingId());
    Live(j).set.push_back(r);
  }
}

// Marks the replicas the target does not need to stop at `hour`: on-demand
// ones first (the newest first), then the dearest spot ones.
void Engine::Shrink(uint32_t j, UnixSeconds t, UnixSeconds hour, const ReplicaMix& held) {
  LiveJob& l = Live(j);
  ReplicaMix keep = held;
  while (keep.on_demand > 0 && Meets(l, {keep.on_demand - 1, keep.spot}, t)) --keep.on_demand;
  while (keep.spot > 0 && Meets(l, {keep.on_demand, keep.spot - 1}, t)) --keep.spot;
  if (keep == held) return;
  std::vector<size_t> order(l.set.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return l.set[a].lease == 0 && l.set[b].lease != 0 ? true
           : l.set[a].lease != 0 && l.set[b].lease == 0 ? false
           : l.set[a].lease == 0 ? a > b
                                 : l.set[b].rate < l.set[a].rate;
  });
  int od = held.on_demand - keep.on_demand, spot = held.spot - keep.spot;
  for (size_t i : order) {
    Replica& r = l.set[i];
    if (r.retire_at != 0) continue;
    int& left = r.lease ? spot : od;
    if (left == 0) continue;
    r.retire_at = hour;
    --left;
  }
  Push(hour, EventKind::kReplicaRetire, j);
}

void Engine::Retire(uint32_t j, UnixSeconds t) {
  LiveJob& l = Live(j);
  for (Replica& r : l.set) {
    if (r.retire_at != 0 && r.retire_at <= t) StopReplica(j, r, t);
  }
  std::erase_if(l.set, [&](const Replica& r) { return r.retire_at != 0 && r.retire_at <= t; });
}

}  // namespace meridian::sim::engine_internal
