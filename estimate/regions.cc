#include "estimate/regions.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "estimate/defaults.h"

namespace meridian::estimate {

double GreatCircleKm(const catalog::Region& a, const catalog::Region& b) {
  constexpr double kEarthKm = 6371.0;
  constexpr double kRad = std::numbers::pi / 180.0;
  double dlat = (b.lat - a.lat) * kRad;
  double dlon = (b.lon - a.lon) * kRad;
  double h = std::sin(dlat / 2) * std::sin(dlat / 2) +
             std::cos(a.lat * kRad) * std::cos(b.lat * kRad) * std::sin(dlon / 2) *
                 std::sin(dlon / 2);
  return 2 * kEarthKm * std::asin(std::min(1.0, std::sqrt(h)));
}

double EstimateRttMs(const catalog::Region& a, const catalog::Region& b) {
  return 2 * GreatCircleKm(a, b) / kFiberKmPerMs + kFixedRttMs;
}

bool ResidencyAllows(const JobSpec& job, const catalog::Region& region) {
  if (job.residency.empty()) return true;
  return std::any_of(job.residency.begin(), job.residency.end(), [&](const std::string& r) {
    return r == region.geography || r == region.id;
  });
}

namespace {

std::string LatencyRefusal(const JobSpec& job, const catalog::Region& region,
                           const catalog::Catalog& catalog) {
  if (job.kind != WorkloadKind::kRealtimeInference || job.latency.users.empty()) return "";
  double slo = job.latency.slo_ms.value_or(kDefaultLatencySloMs);
  for (const std::string& user : job.latency.users) {
    const catalog::Region* u = catalog.FindRegion(user);
    if (!u) continue;  // reported once as an assumption by the planner
    double rtt = EstimateRttMs(*u, region);
    if (rtt > slo) {
      return "latency: ~" + Fixed(rtt, 0) + " ms round trip from users near " + user + " (" +
             Fixed(GreatCircleKm(*u, region), 0) + " km) exceeds the " + Fixed(slo, 0) +
             " ms SLO";
    }
  }
  return "";
}

}  // namespace

std::string RegionRefusal(const JobSpec& job, const catalog::Region& region,
                          const catalog::Catalog& catalog) {
  if (!ResidencyAllows(job, region)) {
    return "residency: " + region.id + " (" + region.geography + ") is outside the allowed list";
  }
  return LatencyRefusal(job, region, catalog);
}

}  // namespace meridian::estimate
