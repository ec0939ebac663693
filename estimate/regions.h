// Where a job may run: data residency and, for real-time services, latency to
// their users estimated from great-circle distance.
#pragma once

#include <string>

#include "catalog/catalog.h"
#include "core/job.h"

namespace meridian::estimate {

// Great-circle distance in km between two regions (haversine, R = 6371 km).
double GreatCircleKm(const catalog::Region& a, const catalog::Region& b);
// Round trip estimate: 2 x distance / (200 km/ms in fibre) + kFixedRttMs.
double EstimateRttMs(const catalog::Region& a, const catalog::Region& b);

// Whether `region` satisfies `job.residency` (a geography such as "eu" or a
// region id); an empty list allows every region.
bool ResidencyAllows(const JobSpec& job, const catalog::Region& region);

// "" when `region` may serve the job; otherwise why not ("residency: ...",
// "latency: ..."). Latency applies to realtime-inference with latency.users.
std::string RegionRefusal(const JobSpec& job, const catalog::Region& region,
                          const catalog::Catalog& catalog);

}  // namespace meridian::estimate
