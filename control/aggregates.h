// The dashboard's aggregates (docs/api.md, "Dashboard aggregates"): what the
// Overview, Queue, Fleet and Regions pages need in one answer each, computed
// from the jobs the caller may see, the stored nodes, the reconciler's last
// decisions and the catalog. Pure functions of their input, so the numbers
// are the same arithmetic however they are asked for.
//
// Tenant isolation: `jobs` and `totals` hold only the caller's jobs (all
// tenants' for an admin). Fleet-wide facts (how many GPUs are busy) are reported as counts;
// job ids, names and tenants appear only for the caller's own jobs.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "control/reconciler.h"
#include "control/store.h"

namespace meridian::control {

// A tenant's home time zone and working hours, from the profile's
// follow_the_sun arguments (empty when the profile does not follow the sun).
// Read once before the daemon's threads start: reading plugin arguments
// touches the profile's YAML nodes, which the scheduler reads too.
struct TenantHome {
  std::string tenant, zone, hours;  // "Asia/Tokyo", "09:00-18:00"
  bool weekends = false;
};
std::vector<TenantHome> TenantHomes(const sched::Profile& profile);

// The first hour of the Regions page's 24-hour strip: the 24 whole UTC hours
// up to and including the current one.
inline UnixSeconds StripStart(UnixSeconds now) { return (now / 3600 - 23) * 3600; }

struct AggregateInput {
  // The caller's visible jobs that are not finished, and those that ended at
  // or after StripStart(now): never every job kept, which grows without
  // bound over the retention time.
  std::vector<JobRow> jobs;
  std::vector<Store::JobTotal> totals;  // every visible job, counted and summed in SQL
  int64_t preemptions = 0;              // how many times visible jobs were preempted
  std::vector<JobRow> all_active;  // every tenant's non-terminal jobs (fleet use, counted only)
  std::vector<NodeRow> nodes;
  std::map<std::string, WaitExplanation> waiting;
  std::map<std::string, NodeLayout> layouts;
  const catalog::Catalog* catalog = nullptr;
  const ReconcilerOptions* options = nullptr;  // region, gpu_hour_usd, profile name
  const std::vector<TenantHome>* homes = nullptr;
  UnixSeconds now = 0;
  bool admin = false;
  std::string tenant;  // the caller's
};

nlohmann::json OverviewJson(const AggregateInput& in);
nlohmann::json WaitingJson(const AggregateInput& in);
nlohmann::json FleetJson(const AggregateInput& in);
nlohmann::json RegionsJson(const AggregateInput& in);

}  // namespace meridian::control
