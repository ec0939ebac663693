// GET /metrics.
#include "control/api_internal.h"

#include <map>

namespace meridian::control {

using nlohmann::json;

// Aggregate series are public; per-job series (a `job` label: one tenant's
// CPU, I/O, GPU use) need an admin token, unless the daemon was started with
// http.public_job_metrics (docs/api.md, "/metrics").
void ApiServer::Impl::ServeMetrics(const httplib::Request& req, httplib::Response& res) {
  bool per_job = options.public_job_metrics;
  if (req.has_header("Authorization")) {
    auto c = Authenticate(req, res);
    if (!c) return;
    per_job = per_job || c->admin;
  }
  std::vector<GaugeFamily> g;
  GaugeFamily states{"meridian_jobs", "Jobs by state.", {}};
  std::map<std::string, int64_t> counts;  // by name: the lines stay in alphabetical order
  for (JobState s : kJobStates) counts[std::string(JobStateName(s))] = 0;
  if (auto c = store->CountByState(); c.ok()) {
    for (const auto& [s, n] : *c) counts[std::string(JobStateName(s))] = n;
  }
  for (const auto& [s, n] : counts) states.lines.push_back({"state=\"" + s + "\"", static_cast<double>(n)});
  g.push_back(states);
  GaugeFamily queue{"meridian_queue_depth", "Queued jobs by priority tier.", {}};
  std::map<std::string, int64_t> tiers;
  for (Priority p : {Priority::kCritical, Priority::kHigh, Priority::kNormal, Priority::kLow}) {
    tiers[std::string(ToString(p))] = 0;
  }
  if (auto q = store->QueueDepth(); q.ok()) {
    for (const auto& c : *q) tiers[c.tier] += c.queued;
  }
  for (const auto& [t, n] : tiers) queue.lines.push_back({"tier=\"" + t + "\"", static_cast<double>(n)});
  g.push_back(queue);
  if (options.telemetry) {
    for (GaugeFamily& f : options.telemetry->Gauges()) {
      if (!per_job) std::erase_if(f.lines, IsPerJobLine);
      g.push_back(std::move(f));
    }
  }
  res.status = 200;
  res.set_content(RenderMetrics(*metrics, g), "text/plain; version=0.0.4");
}

}  // namespace meridian::control
