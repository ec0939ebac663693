// The service level of a real-time service as its users see it, minute by
// minute: the one rule `simulate` (sim/service_slo.h) and `meridian serve`
// (control/service_slo.h) count a service's minutes met by.
//
// A minute of a service's window meets its SLO when, for the whole minute,
//   - enough replicas are up for that hour's load, counting only replicas
//     serving in a region that meets the latency rule below: replicas >=
//     ceil(latency.rps_by_hour[UTC hour] (or latency.rps) / one replica's
//     requests per second on the GPU model serving it) (ReplicasForLoad; no
//     load or an unknown capacity: one replica is enough), and
//   - for each of its users' regions, the round trip to the region serving
//     them (EstimateRttMs, the table the `latency` plugin uses) plus one
//     request's time on that GPU is within latency.slo_ms
//     (kDefaultLatencySloMs when unstated); without users, the request's
//     time alone.
// A partial last minute of the window counts as a minute.
#pragma once

#include <cstdint>
#include <vector>

#include "catalog/catalog.h"
#include "core/ids.h"
#include "core/job.h"

namespace meridian::estimate {

// `replicas` replicas serving from `region` over [from_s, to_s), seconds
// from a start the caller picks; one request takes `request_ms` on their GPU
// model, and each replica serves `replica_rps` requests per second (0:
// unknown).
struct ServingSpan {
  int64_t from_s = 0;
  int64_t to_s = 0;
  RegionId region;
  double request_ms = 0;
  double replica_rps = 0;
  int replicas = 1;
};

struct SloMinutes {
  int64_t minutes = 0;  // due
  int64_t met = 0;
};

// Whether every one of spec's user regions' round trip to `region` plus one
// request's time (`request_ms`) is within its latency SLO; without users,
// the request's time alone.
bool LatencyMet(const JobSpec& spec, RegionId region, double request_ms, const catalog::Catalog& catalog);

// The minutes of the window [w0_s, w1_s) due and met by the rule above.
// Spans may overlap (each replica of a set a span of its own): the replicas
// up at a moment are their sum, and a stretch serves on the GPU model of
// its latest span to start. `start` is the Unix time of second 0 (the load
// changes on UTC hours).
SloMinutes SloMinutesOf(const JobSpec& spec, const std::vector<ServingSpan>& spans, int64_t w0_s,
                        int64_t w1_s, UnixSeconds start, const catalog::Catalog& catalog);

}  // namespace meridian::estimate
