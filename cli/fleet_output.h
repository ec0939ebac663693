// Renders the scheduler's decisions of `meridian plan --fleet` for people (a
// table per job with the scores, the runner-up, the pricing model, the start
// and the filters' rejections) and for programs (one JSON object; the fields
// are documented in docs/fleet.md, "plan --fleet output"). Also the list of
// shipped profiles of `meridian profiles`.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/job.h"
#include "sched/decision.h"
#include "sched/fleet.h"
#include "sched/mig_fleet.h"
#include "sched/profile.h"

namespace meridian::cli {

// One job's decision with what it needs to be rendered: the fleet names the
// nodes and the catalog the offerings and MIG profiles.
struct FleetDecision {
  const JobSpec* job = nullptr;
  sched::Decision decision;
};

struct FleetRun {
  std::string profile;      // profile name
  std::string profile_source;
  std::string fleet_path;
  UnixSeconds at = 0;
  const sched::Fleet* fleet = nullptr;
  std::vector<FleetDecision> decisions;  // in decision (queue) order
  // After the placements, when the fleet has MIG GPUs: fragmentation against
  // every profile and against those the plan's jobs use (docs/mig.md).
  std::optional<sched::MigFleetFragmentation> mig;
};

nlohmann::json FleetRunToJson(const FleetRun& run);
void PrintFleetRun(const FleetRun& run, std::ostream& out);

// `meridian profiles`: name, description and plugins of each profile.
nlohmann::json ProfilesToJson(const std::vector<sched::Profile>& profiles);
void PrintProfiles(const std::vector<sched::Profile>& profiles, std::ostream& out);

}  // namespace meridian::cli
