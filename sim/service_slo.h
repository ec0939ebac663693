// The service level of real-time services as their users see it, minute by
// minute, by the rule estimate/service_slo.h states (the one `serve` counts
// by too).
//
// A service (kind realtime-inference) is due from its submission for its
// planned run: the trace's recorded duration, else work.duration, else its
// run on its last placement (JobOutcome::run_s). Each of its spans (one per
// placement, or one per replica of a replica set) serves from the span's
// region on the GPU model of its demand: one request's time
// (ModelDemand::request_ms) and one replica's requests per second
// (ModelDemand::replica_rps) are that demand's. A replica counts from the
// end of its restart overhead. A service that is never placed, or is down
// (reclaimed, waiting, restarting), misses those minutes.
#pragma once

#include <cstdint>
#include <vector>

#include "catalog/catalog.h"
#include "core/ids.h"
#include "core/job.h"
#include "estimate/service_slo.h"
#include "sched/queued_job.h"
#include "sim/metrics.h"
#include "sim/trace.h"

namespace meridian::sim {

// One stretch in which a service served from one placement. Times are
// seconds from the trace's start.
struct ServiceSpan {
  uint32_t job = 0;       // trace job index
  int64_t from_s = 0;     // serving from (after any restart overhead)
  int64_t to_s = 0;       // until (exclusive)
  RegionId region;
  uint8_t demand = 0;     // index into the shape's demands (its GPU model)
  uint16_t replicas = 1;  // replicas up (1 for each replica of a replica set)
};

// One service's minutes due and met.
struct ServiceMinutes {
  uint32_t job = 0;
  int64_t minutes = 0;
  int64_t met = 0;
  double Fraction() const { return minutes > 0 ? static_cast<double>(met) / static_cast<double>(minutes) : 0; }
};

// What the rules above read about one service.
struct ServiceCase {
  const TraceJob* job = nullptr;
  const JobSpec* spec = nullptr;
  const sched::QueuedJob* shape = nullptr;  // nullptr: the spec could not be queued
  const JobOutcome* outcome = nullptr;
};

using estimate::LatencyMet;

// The service's due window in seconds (see above).
int64_t ServiceWindowS(const ServiceCase& c);

// Minutes due and met for one service; `spans` are its own, in time order.
ServiceMinutes ServiceSloOf(const ServiceCase& c, const std::vector<ServiceSpan>& spans,
                            const catalog::Catalog& catalog, UnixSeconds start);

// Every real-time service of the trace, in trace order, from the run's spans.
std::vector<ServiceMinutes> ServiceSlos(const Trace& trace, const std::vector<const sched::QueuedJob*>& shapes,
                                        const std::vector<JobOutcome>& outcomes,
                                        const std::vector<ServiceSpan>& spans,
                                        const catalog::Catalog& catalog, UnixSeconds start);

}  // namespace meridian::sim
