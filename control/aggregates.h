// The dashboard's aggregates (docs/api.md, "Dashboard aggregates"): what the
// Overview, Queue, Fleet and Regions pages need in one answer each, computed
// from the jobs the caller may see, the stored nodes, the reconciler's last
// decisions and the catalog. Pure functions of their input, so the numbers
// are the same arithmetic however they are asked for.
//
// Tenant isolation: `jobs` holds only the caller's jobs (all tenants' for an
// admin). Fleet-wide facts (how many GPUs are busy) are reported as counts;
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

struct AggregateInput {
  std::vector<JobRow> jobs;        // the caller's visible jobs, every state
  std::vector<JobRow> all_active;  // every tenant's non-terminal jobs (fleet use, counted only)
  std::vector<NodeRow> nodes;
  std::map<std::string, WaitExplanation> waiting;
  std::map<std::string, NodeLayout> layouts;
  std::map<std::string, int> preemptions;  // job id -> times preempted (visible jobs)
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
