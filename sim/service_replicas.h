// A real-time service's replicas in `simulate` (docs/simulate.md,
// "Real-time services"): the profile's terms and the replica mix.
//
// A set is sized hour by hour: n = RealtimeReplicas::SetSize for the
// replicas that hour's load needs up, the scheduler's own count. A service
// whose load changes by the hour runs as such a set even when not
// preemptible (then every replica on-demand; sim/engine_replicas.cc).
//
// Under a profile that sizes replica sets (realtime_replicas) and may buy
// spot, a service marked `preemptible: true` that the scheduler places as an
// on-demand replica set of n replicas runs its replicas one by one instead:
// `spot` of them on spot offerings of the same GPU model in the regions its
// latency SLO allows, spread over distinct zones, and `on_demand` of them on
// the set's own offering. The mix is the cheapest whose expected
// availability meets the target: with k replicas needed for the hour's
// load, P(at least k of the on_demand + spot replicas up) >= target, an
// on-demand replica up with the zone availability a and a spot replica with
//   a x (1 - reclaims per hour x the hours a replacement takes to start)
// (the reclaims per hour of the spot trace its offering replays,
// MarketView::SpotReclaimsPerHour; the replacement starts after the
// checkpoint restart overhead, 5 min unless stated), each spot replica at
// the price and availability of the spot offering it would get
// (the cheapest left first). The on-demand set alone (on_demand = n, spot = 0) meets the target
// by construction and is the fallback. A reclaimed replica is replaced at
// once, on spot in another zone where one is left, else on the on-demand
// offering; on-demand replicas go back to spot as soon as the mix can have
// it, looked for whenever a spot offering the set could use changes its
// count (sim/engine_replicas.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "estimate/serving.h"
#include "sched/plugins/realtime_replicas.h"
#include "sched/profile.h"

namespace meridian::sim {

struct ReplicaTerms {
  bool sized = false;  // realtime_replicas in the profile: sets sized hour by hour
  bool spot = false;   // and spot among its pricing models: preemptible sets may take spot
  sched::RealtimeReplicas::Options options;  // realtime_replicas' arguments
  double target() const { return options.availability_target; }
  double zone() const { return options.zone_availability; }  // one on-demand replica up
};

// The terms of `profile` (realtime_replicas' arguments, or their defaults).
ReplicaTerms ReplicaTermsOf(const sched::Profile& profile);

// The mix's arithmetic is the core's (estimate/serving.h): SpotReplicaUp,
// AtLeastUp over on-demand and spot replicas, CheapestMix.
using estimate::ReplicaMix;
using estimate::SpotCandidate;
using estimate::SpotReplicaUp;

// P(at least k up) of `on_demand` replicas each up with od_up and `spot`
// replicas each up with spot_up (estimate::AtLeastUp, every spot replica
// alike).
double AtLeastUp(int k, int on_demand, double od_up, int spot, double spot_up);

// estimate::CheapestMix with every spot replica up with spot_up, one for
// each of `spot_prices` (ascending).
ReplicaMix CheapestMix(int k, double target, double od_up, double spot_up, int64_t od_price,
                       const std::vector<int64_t>& spot_prices, int max_on_demand);

}  // namespace meridian::sim
