#include "sim/service_slo.h"

#include <algorithm>

#include "estimate/defaults.h"
#include "estimate/service_slo.h"

namespace meridian::sim {

int64_t ServiceWindowS(const ServiceCase& c) {
  if (c.job->duration_s >= 0) return c.job->duration_s;
  if (c.spec->work.duration_s) return *c.spec->work.duration_s;
  if (c.outcome->run_s > 0) return c.outcome->run_s;
  return static_cast<int64_t>(estimate::kDefaultServiceHours * 3600);
}

ServiceMinutes ServiceSloOf(const ServiceCase& c, const std::vector<ServiceSpan>& spans,
                            const catalog::Catalog& catalog, UnixSeconds start) {
  std::vector<estimate::ServingSpan> serving;
  serving.reserve(spans.size());
  for (const ServiceSpan& s : spans) {
    const sched::ModelDemand* d =
        c.shape && s.demand < c.shape->demands.size() ? &c.shape->demands[s.demand] : nullptr;
    serving.push_back({s.from_s, s.to_s, s.region, d ? d->request_ms : 0, d ? d->replica_rps : 0,
                       s.replicas});
  }
  const int64_t w0 = c.job->submit_s;
  const estimate::SloMinutes m =
      estimate::SloMinutesOf(*c.spec, serving, w0, w0 + ServiceWindowS(c), start, catalog);
  ServiceMinutes out;
  out.minutes = m.minutes;
  out.met = m.met;
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
