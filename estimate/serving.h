// One replica of a real-time service on a GPU model: how long one request
// takes and how many requests per second it serves, from the same roofline
// as `plan` (EstimateThroughput's inference time: prefill at compute, decode
// at max(compute, memory bandwidth), plus tensor-parallel all-reduces).
//
// A request is tokens_in prompt tokens and tokens_out generated tokens
// (latency.tokens_in / tokens_out; else model.seq_len - output_tokens and
// model.output_tokens; a model that generates nothing, output_tokens 0,
// answers in one forward step: tokens_out 1).
//
//   request time   one request alone: the prefill of its tokens_in and one
//                  decode step (its first token; later tokens stream). This
//                  is what the latency SLO adds to the network round trip.
//   capacity       model.batch requests at once: batch / (the time of one
//                  batch's prefill and its tokens_out decode steps),
//                  requests per second.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/status.h"
#include "estimate/defaults.h"
#include "estimate/throughput.h"

namespace meridian::estimate {

struct RequestShape {
  int tokens_in = 1;
  int tokens_out = 1;
};
// The request shape of `job` (its dims must be set): see above.
RequestShape RequestShapeOf(const ResolvedJob& job);

struct ReplicaServing {
  double request_s = 0;       // one request alone, to its first token
  double requests_per_s = 0;  // a full batch's rate
  std::string arithmetic;     // "batch 16 / 2.31 s = 6.93 req/s; first token 0.0172 s"
};

// One replica of `job` (at its run precision on `gpu`) on q.gpus GPUs.
// InvalidArgument when the job has no model shape (model.params_b), as
// EstimateThroughput; Unresolvable when the GPU lacks its precision.
Result<ReplicaServing> EstimateReplicaServing(const ResolvedJob& job, const catalog::GpuModel& gpu,
                                              const catalog::Catalog& catalog,
                                              const ThroughputQuery& q);

// Replicas a load of `rps` requests per second needs at `replica_rps` each:
// ceil(rps / replica_rps); 0 for no load, and 0 when the capacity is unknown
// (replica_rps <= 0).
int ReplicasForLoad(double rps, double replica_rps);

// A replica set's availability terms (the realtime_replicas plugin's
// arguments; docs/scheduler.md): each replica up with `zone`, the set
// meeting `target`, at most max_replicas - 1 spares.
struct AvailabilityTerms {
  double target = 0.999;
  double zone = 0.995;
  int max_replicas = 3;
};
inline constexpr int kMaxServiceReplicas = 32;

// P(at least k of n replicas up), each up with `up` on its own: the sum over
// i = k..n of C(n, i) up^i (1 - up)^(n - i).
double AtLeastUp(int k, int n, double up);
// The fewest n (load..max) with P(at least `load` of n up) >= target;
// max(load, max) when none.
int ReplicasForTarget(double target, double zone, int load, int max);
// The replicas a set needs for `load` replicas up (ReplicasForLoad of an
// hour's rps; 0 or 1: no load beyond one replica): without a load, the
// fewest n <= max_replicas with 1 - (1 - zone)^n >= target; else the fewest
// n with P(at least load of n up) >= target, at most load + max_replicas - 1
// and kMaxServiceReplicas. The scheduler places it for the peak hour;
// `simulate` and `plan` take it hour by hour.
int ReplicaSetSize(const AvailabilityTerms& terms, int load);

// Spot replicas beside on-demand ones (docs/simulate.md, "Preemptible
// services"). One spot replica's expected availability is
//   zone x (1 - reclaims_per_hour x replace_s / 3600), at least 0:
// up with the zone, less the start of a replacement after each reclaim.
// reclaims_per_hour is its offering's own (MarketView::SpotReclaimsPerHour:
// the measured rate of the spot trace it replays; kSpotReclaimsPerHour
// where none is measured).
double SpotReplicaUp(double zone, double reclaims_per_hour, int64_t replace_s);

// P(at least k up) of `on_demand` replicas each up with od_up and one spot
// replica for each of spot_up (each up with its own figure), all
// independent: the distribution of the count up is built one replica at a
// time (P_{i+1}(c) = P_i(c) (1 - p) + P_i(c - 1) p).
double AtLeastUp(int k, int on_demand, double od_up, const std::vector<double>& spot_up);

struct ReplicaMix {
  int on_demand = 0;
  int spot = 0;
  bool operator==(const ReplicaMix&) const = default;
};

// A spot replica a mix may take: its price per hour and its availability.
struct SpotCandidate {
  int64_t price = 0;  // micro-dollars per hour
  double up = 0;      // SpotReplicaUp of its offering
};

// The mix of at most max_on_demand on-demand replicas (od_price each per
// hour, each up with od_up) and the first s of `spot` (in the order given,
// cheapest first), with P(at least k up) >= target at the least price;
// equal prices: fewer replicas. None meets it: {max_on_demand, 0}.
ReplicaMix CheapestMix(int k, double target, double od_up, int64_t od_price,
                       const std::vector<SpotCandidate>& spot, int max_on_demand);

}  // namespace meridian::estimate
