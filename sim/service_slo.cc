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

}  // namespace

bool LatencyMet(const JobSpec& spec, RegionId region, double request_ms, const catalog::Catalog& catalog) {
  const double slo = spec.latency.slo_ms.value_or(estimate::kDefaultLatencySloMs);
  if (request_ms > slo) return false;
  if (!region.valid() || region.index() >= catalog.regions().size()) return false;
  const catalog::Region& serving = catalog.regions()[region.index()];
  for (const std::string& u : spec.latency.users) {
    const catalog::Region* user = catalog.FindRegion(u);
    if (user && estimate::EstimateRttMs(*user, serving) + request_ms > slo) return false;
  }
  return true;
}

namespace {

// A stretch with the same replicas up, in regions that meet the latency
// rule, serving on one GPU model.
struct Up {
  int64_t from = 0, to = 0;
  int replicas = 0;
  uint8_t demand = 0;
};

const sched::ModelDemand* DemandOf(const ServiceCase& c, uint8_t demand) {
  return c.shape && demand < c.shape->demands.size() ? &c.shape->demands[demand] : nullptr;
}

// The replicas up over time, summed over the spans (one per replica of a
// replica set, one per placement otherwise) whose region meets the latency
// rule. Spans that overlap serve one GPU model (a run places one); the
// stretch takes the model of the latest span to start.
std::vector<Up> ReplicasUp(const ServiceCase& c, const std::vector<ServiceSpan>& spans,
                           const catalog::Catalog& catalog) {
  struct Edge {
    int64_t t;
    int delta;
    uint8_t demand;
  };
  std::vector<Edge> edges;
  for (const ServiceSpan& s : spans) {
    const sched::ModelDemand* d = DemandOf(c, s.demand);
    if (s.to_s <= s.from_s || !LatencyMet(*c.spec, s.region, d ? d->request_ms : 0, catalog)) continue;
    edges.push_back({s.from_s, s.replicas, s.demand});
    edges.push_back({s.to_s, -s.replicas, s.demand});
  }
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::vector<Up> out;
  int up = 0;
  uint8_t demand = 0;
  for (size_t i = 0; i < edges.size();) {
    const int64_t t = edges[i].t;
    for (; i < edges.size() && edges[i].t == t; ++i) {
      up += edges[i].delta;
      if (edges[i].delta > 0) demand = edges[i].demand;
    }
    if (up > 0 && i < edges.size()) out.push_back({t, edges[i].t, up, demand});
  }
  return out;
}

// The parts of `u` with enough replicas up for the load, hour by hour (the
// load changes on UTC hours), appended to `met`.
void MetParts(const ServiceCase& c, const Up& u, UnixSeconds start, std::vector<Interval>& met) {
  const sched::ModelDemand* d = DemandOf(c, u.demand);
  const double replica_rps = d ? d->replica_rps : 0;
  for (int64_t t = u.from; t < u.to;) {
    const int64_t unix = start + t;
    const int hour = static_cast<int>((unix / 3600) % 24);
    const int64_t b = std::min(u.to, t + (3600 - unix % 3600));
    const int need = std::max(1, estimate::ReplicasForLoad(c.spec->latency.RpsAt(hour), replica_rps));
    if (u.replicas >= need) Append(met, t, b);
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
  for (const Up& u : ReplicasUp(c, spans, catalog)) MetParts(c, u, start, met);
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
