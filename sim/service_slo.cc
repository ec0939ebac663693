#include "sim/service_slo.h"

#include <algorithm>

#include "estimate/defaults.h"
#include "estimate/regions.h"
#include "estimate/serving.h"

namespace meridian::sim {

namespace {

using Interval = std::pair<int64_t, int64_t>;  // [first, second) seconds from the trace's start

// Adds [a, b) to `met`, merged with the last interval when they touch.
void Append(std::vector<Interval>& met, int64_t a, int64_t b) {
  if (b <= a) return;
  if (!met.empty() && met.back().second >= a) {
    met.back().second = std::max(met.back().second, b);
    return;
  }
  met.emplace_back(a, b);
}

// Whether every user region's round trip to `region` plus one request's
// time is within the SLO (the request's time alone without users).
bool LatencyMet(const ServiceCase& c, RegionId region, double request_ms,
                const catalog::Catalog& catalog) {
  const double slo = c.spec->latency.slo_ms.value_or(estimate::kDefaultLatencySloMs);
  if (request_ms > slo) return false;
  if (!region.valid() || region.index() >= catalog.regions().size()) return false;
  const catalog::Region& serving = catalog.regions()[region.index()];
  for (const std::string& u : c.spec->latency.users) {
    const catalog::Region* user = catalog.FindRegion(u);
    if (user && estimate::EstimateRttMs(*user, serving) + request_ms > slo) return false;
  }
  return true;
}

// The parts of `s` that meet the SLO, hour by hour (the load changes on UTC
// hours), appended to `met`.
void MetParts(const ServiceCase& c, const ServiceSpan& s, const catalog::Catalog& catalog,
              UnixSeconds start, std::vector<Interval>& met) {
  const sched::ModelDemand* d =
      c.shape && s.demand < c.shape->demands.size() ? &c.shape->demands[s.demand] : nullptr;
  const double request_ms = d ? d->request_ms : 0;
  const double replica_rps = d ? d->replica_rps : 0;
  if (!LatencyMet(c, s.region, request_ms, catalog)) return;
  for (int64_t t = s.from_s; t < s.to_s;) {
    const int64_t unix = start + t;
    const int hour = static_cast<int>((unix / 3600) % 24);
    const int64_t b = std::min(s.to_s, t + (3600 - unix % 3600));
    const int need = std::max(1, estimate::ReplicasForLoad(c.spec->latency.RpsAt(hour), replica_rps));
    if (s.replicas >= need) Append(met, t, b);
    t = b;
  }
}

// Whole minutes of the window [w0, w1) (a partial last minute counts) that
// lie inside one of the merged intervals.
int64_t MinutesInside(const std::vector<Interval>& met, int64_t w0, int64_t w1, int64_t minutes) {
  int64_t n = 0;
  for (const auto& [a0, b0] : met) {
    const int64_t a = std::max(a0, w0), b = std::min(b0, w1);
    if (b <= a) continue;
    const int64_t first = (a - w0 + 59) / 60;
    const int64_t last = b >= w1 ? minutes - 1 : (b - w0) / 60 - 1;
    n += std::max<int64_t>(0, last - first + 1);
  }
  return n;
}

}  // namespace

int64_t ServiceWindowS(const ServiceCase& c) {
  if (c.job->duration_s >= 0) return c.job->duration_s;
  if (c.spec->work.duration_s) return *c.spec->work.duration_s;
  if (c.outcome->run_s > 0) return c.outcome->run_s;
  return static_cast<int64_t>(estimate::kDefaultServiceHours * 3600);
}

ServiceMinutes ServiceSloOf(const ServiceCase& c, const std::vector<ServiceSpan>& spans,
                            const catalog::Catalog& catalog, UnixSeconds start) {
  ServiceMinutes out;
  const int64_t w0 = c.job->submit_s;
  const int64_t w1 = w0 + ServiceWindowS(c);
  out.minutes = (w1 - w0 + 59) / 60;
  std::vector<Interval> met;
  for (const ServiceSpan& s : spans) MetParts(c, s, catalog, start, met);
  out.met = MinutesInside(met, w0, w1, out.minutes);
  return out;
}

std::vector<ServiceMinutes> ServiceSlos(const Trace& trace, const std::vector<const sched::QueuedJob*>& shapes,
                                        const std::vector<JobOutcome>& outcomes,
                                        const std::vector<ServiceSpan>& spans,
                                        const catalog::Catalog& catalog, UnixSeconds start) {
  std::vector<std::vector<ServiceSpan>> by_job(trace.jobs.size());
  for (const ServiceSpan& s : spans) {
    if (s.job < by_job.size()) by_job[s.job].push_back(s);
  }
  std::vector<ServiceMinutes> out;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& tj = trace.jobs[i];
    const JobSpec& spec = *trace.specs[tj.spec];
    if (spec.kind != WorkloadKind::kRealtimeInference) continue;
    std::vector<ServiceSpan>& own = by_job[i];
    std::sort(own.begin(), own.end(),
              [](const ServiceSpan& a, const ServiceSpan& b) { return a.from_s < b.from_s; });
    const ServiceCase c{&tj, &spec, tj.spec < shapes.size() ? shapes[tj.spec] : nullptr, &outcomes[i]};
    ServiceMinutes m = ServiceSloOf(c, own, catalog, start);
    m.job = static_cast<uint32_t>(i);
    out.push_back(m);
  }
  return out;
}

}  // namespace meridian::sim
