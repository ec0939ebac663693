#include "estimate/service_slo.h"

#include <algorithm>
#include <string>
#include <utility>

#include "estimate/defaults.h"
#include "estimate/regions.h"
#include "estimate/serving.h"

namespace meridian::estimate {

namespace {

using Interval = std::pair<int64_t, int64_t>;  // [first, second) seconds

// Adds [a, b) to `met`, merged with the last interval when they touch.
void Append(std::vector<Interval>& met, int64_t a, int64_t b) {
  if (b <= a) return;
  if (!met.empty() && met.back().second >= a) {
    met.back().second = std::max(met.back().second, b);
    return;
  }
  met.emplace_back(a, b);
}

// A stretch with the same replicas up, in regions that meet the latency
// rule, serving `replica_rps` requests per second each.
struct Up {
  int64_t from = 0, to = 0;
  int replicas = 0;
  double replica_rps = 0;
};

// The replicas up over time, summed over the spans whose region meets the
// latency rule; a stretch takes the capacity of the latest span to start.
std::vector<Up> ReplicasUp(const JobSpec& spec, std::vector<ServingSpan> spans,
                           const catalog::Catalog& catalog) {
  std::stable_sort(spans.begin(), spans.end(),
                   [](const ServingSpan& a, const ServingSpan& b) { return a.from_s < b.from_s; });
  struct Edge {
    int64_t t;
    int delta;
    double replica_rps;
  };
  std::vector<Edge> edges;
  for (const ServingSpan& s : spans) {
    if (s.to_s <= s.from_s || !LatencyMet(spec, s.region, s.request_ms, catalog)) continue;
    edges.push_back({s.from_s, s.replicas, s.replica_rps});
    edges.push_back({s.to_s, -s.replicas, s.replica_rps});
  }
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.t < b.t; });
  std::vector<Up> out;
  int up = 0;
  double replica_rps = 0;
  for (size_t i = 0; i < edges.size();) {
    const int64_t t = edges[i].t;
    for (; i < edges.size() && edges[i].t == t; ++i) {
      up += edges[i].delta;
      if (edges[i].delta > 0) replica_rps = edges[i].replica_rps;
    }
    if (up > 0 && i < edges.size()) out.push_back({t, edges[i].t, up, replica_rps});
  }
  return out;
}

// The parts of `u` with enough replicas up for the load, hour by hour (the
// load changes on UTC hours), appended to `met`.
void MetParts(const JobSpec& spec, const Up& u, UnixSeconds start, std::vector<Interval>& met) {
  for (int64_t t = u.from; t < u.to;) {
    const int64_t unix = start + t;
    const int hour = static_cast<int>((unix / 3600) % 24);
    const int64_t b = std::min(u.to, t + (3600 - unix % 3600));
    const int need = std::max(1, ReplicasForLoad(spec.latency.RpsAt(hour), u.replica_rps));
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

bool LatencyMet(const JobSpec& spec, RegionId region, double request_ms, const catalog::Catalog& catalog) {
  const double slo = spec.latency.slo_ms.value_or(kDefaultLatencySloMs);
  if (request_ms > slo) return false;
  if (!region.valid() || region.index() >= catalog.regions().size()) return false;
  const catalog::Region& serving = catalog.regions()[region.index()];
  for (const std::string& u : spec.latency.users) {
    const catalog::Region* user = catalog.FindRegion(u);
    if (user && EstimateRttMs(*user, serving) + request_ms > slo) return false;
  }
  return true;
}

SloMinutes SloMinutesOf(const JobSpec& spec, const std::vector<ServingSpan>& spans, int64_t w0_s,
                        int64_t w1_s, UnixSeconds start, const catalog::Catalog& catalog) {
  SloMinutes out;
  if (w1_s <= w0_s) return out;
  out.minutes = (w1_s - w0_s + 59) / 60;
  std::vector<Interval> met;
  for (const Up& u : ReplicasUp(spec, spans, catalog)) MetParts(spec, u, start, met);
  out.met = MinutesInside(met, w0_s, w1_s, out.minutes);
  return out;
}

}  // namespace meridian::estimate
